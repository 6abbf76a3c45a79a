; Inno Setup script: the installer of the one-folder bundle, for the current user (no admin
; rights, the default) or for all users (the dialog's other choice, with UAC).
; Needs Inno Setup 6.3 or later (ArchitecturesAllowed=x64compatible came with 6.3).
; Build the bundle first (packaging\README.md), then from the repository root:
;   iscc /DAppVersion=0.1.0 packaging\windows\desktop-agent.iss
; Output: dist\desktop-agent-<version>-setup.exe
#if Ver < EncodeVer(6, 3, 0)
  #error Inno Setup 6.3 or later is needed (x64compatible); this is an older one
#endif
#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#define Root SourcePath + "\..\.."

[Setup]
AppId={{6F3C2A41-5B8D-4E7A-9C21-D3A7B0E4F5C6}
AppName=Desktop Agent
AppVersion={#AppVersion}
AppPublisher=desktop-agent developers
; the "auto" constants follow the install mode the user picks: for the current user
; %LOCALAPPDATA%\Programs and the user's Start menu; for all users Program Files and the
; common Start menu (never the installing administrator's own profile)
DefaultDirName={autopf}\desktop-agent
DefaultGroupName=Desktop Agent
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
UsedUserAreasWarning=no
MinVersion=10.0
OutputDir={#Root}\dist
OutputBaseFilename=desktop-agent-{#AppVersion}-setup
SetupIconFile={#Root}\build\icons\desktop-agent.ico
UninstallDisplayIcon={app}\desktop-agent.exe
Compression=lzma2
SolidCompression=yes
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
WizardStyle=modern
; an update while the app runs: Setup asks to close it (Restart Manager)
CloseApplications=yes
RestartApplications=no

[Files]
Source: "{#Root}\dist\desktop-agent\*"; DestDir: "{app}"; Flags: recursesubdirs createallsubdirs ignoreversion

[Icons]
Name: "{autoprograms}\Desktop Agent"; Filename: "{app}\desktop-agent.exe"; Comment: "Carry out tasks on this desktop with a vision model"
Name: "{autodesktop}\Desktop Agent"; Filename: "{app}\desktop-agent.exe"; Tasks: desktopicon

[Tasks]
Name: "desktopicon"; Description: "Create a desktop shortcut"; Flags: unchecked

[Run]
Filename: "{app}\desktop-agent.exe"; Description: "Start Desktop Agent"; Flags: nowait postinstall skipifsilent

[UninstallRun]
; first stop the runs of this user's instances (stored stopped / user_stop) ...
Filename: "{app}\desktop-agent-cli.exe"; Parameters: "stop-all"; Flags: runhidden skipifdoesntexist; RunOnceId: "StopAll"
; ... then end the app itself (the tray keeps it running with no window) and any `serve` or
; `run`, so no file of {app} is held open when the uninstaller removes it. Runs are already
; stored; the history (SQLite, WAL) survives a process that is ended.
; Without /T: the programs the agent launched are the user's, never ended (a tree kill would
; end every one of them with the app).
Filename: "{sys}\taskkill.exe"; Parameters: "/F /IM desktop-agent.exe"; Flags: runhidden; RunOnceId: "QuitApp"
Filename: "{sys}\taskkill.exe"; Parameters: "/F /IM desktop-agent-cli.exe"; Flags: runhidden; RunOnceId: "QuitCli"
; the routines' scheduled tasks (Task Scheduler folder \desktop-agent\, desktop/schedule.py)
; would go on starting a program that is gone
Filename: "{sys}\WindowsPowerShell\v1.0\powershell.exe"; Parameters: "-NoProfile -NonInteractive -Command ""Get-ScheduledTask -TaskPath '\desktop-agent\' -ErrorAction SilentlyContinue | Unregister-ScheduledTask -Confirm:$false"""; Flags: runhidden; RunOnceId: "RemoveTasks"

[Messages]
; said on the installer's first page: nothing of the Windows app has run on a real machine yet
WelcomeLabel2=This will install [name/ver] on your computer.%n%nNote: this Windows version has not yet been run on a real Windows machine; it was tested only against stand-ins of Windows. See docs\windows-checklist.md in the project for what to check.%n%nIt is recommended that you close all other applications before continuing.
