; Inno Setup 6 script: a per-user installer of the one-folder bundle (no admin rights).
; Build the bundle first (packaging\README.md), then from the repository root:
;   iscc /DAppVersion=0.1.0 packaging\windows\desktop-agent.iss
; Output: dist\desktop-agent-<version>-setup.exe
#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#define Root SourcePath + "\..\.."

[Setup]
AppId={{6F3C2A41-5B8D-4E7A-9C21-D3A7B0E4F5C6}
AppName=Desktop Agent
AppVersion={#AppVersion}
AppPublisher=desktop-agent developers
DefaultDirName={localappdata}\Programs\desktop-agent
DefaultGroupName=Desktop Agent
DisableProgramGroupPage=yes
; per-user: no UAC prompt, installs under %LOCALAPPDATA%, shortcuts in the user's Start menu
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
OutputDir={#Root}\dist
OutputBaseFilename=desktop-agent-{#AppVersion}-setup
SetupIconFile={#Root}\build\icons\desktop-agent.ico
UninstallDisplayIcon={app}\desktop-agent.exe
Compression=lzma2
SolidCompression=yes
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
WizardStyle=modern

[Files]
Source: "{#Root}\dist\desktop-agent\*"; DestDir: "{app}"; Flags: recursesubdirs createallsubdirs ignoreversion

[Icons]
Name: "{userprograms}\Desktop Agent"; Filename: "{app}\desktop-agent.exe"; Comment: "Carry out tasks on this desktop with a vision model"
Name: "{userdesktop}\Desktop Agent"; Filename: "{app}\desktop-agent.exe"; Tasks: desktopicon

[Tasks]
Name: "desktopicon"; Description: "Create a desktop shortcut"; Flags: unchecked

[Run]
Filename: "{app}\desktop-agent.exe"; Description: "Start Desktop Agent"; Flags: nowait postinstall skipifsilent

[UninstallRun]
; stop runs of this user's instances before the files go
Filename: "{app}\desktop-agent-cli.exe"; Parameters: "stop-all"; Flags: runhidden skipifdoesntexist; RunOnceId: "StopAll"
