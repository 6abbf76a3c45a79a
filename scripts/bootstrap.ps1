# Make this Windows machine ready to run and test desktop-agent: a venv in .venv with the
# project and its dev tools. Safe to run again. Needs Python 3.11 or later (python.org, with
# the "py" launcher), or $env:PYTHON set to a python.exe (a path with spaces is fine).
#   powershell -ExecutionPolicy Bypass -File scripts\bootstrap.ps1
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..")

# Run a program and stop at the first failure: PowerShell does not stop on a native
# program's exit code by itself.
function Invoke-Checked([string] $What, [string] $Program, [string[]] $Arguments) {
    # the exit code alone decides: with "Stop", Windows PowerShell 5.1 turns a line a native
    # program writes to stderr (pip's warnings) into a terminating error once the output is
    # redirected (NativeCommandError), and a good install aborted
    $ErrorActionPreference = "Continue"
    & $Program @Arguments
    if ($LASTEXITCODE -ne 0) { throw "bootstrap: $What failed (exit code $LASTEXITCODE)" }
}

# the Pythons PySide6 6.10-6.11 has wheels for (shiboken6's Requires-Python: >=3.10, <3.15),
# newest first; this project needs 3.11 or later
$Supported = @("3.14", "3.13", "3.12", "3.11")

if (-not (Test-Path ".venv\Scripts\python.exe")) {
    # the Python to make the venv with: $env:PYTHON as one path, else the newest supported
    # one the py launcher knows (`py -3` would take the newest installed, which may be one
    # PySide6 has no wheels for yet), else python on PATH
    if ($env:PYTHON) {
        $program = $env:PYTHON; $prefix = @()
    } elseif (Get-Command py -ErrorAction SilentlyContinue) {
        $program = "py"; $prefix = @("-$($Supported[-1])")
        foreach ($version in $Supported) {
            $ErrorActionPreference = "Continue"
            & py "-$version" -c "pass" *> $null
            $found = $LASTEXITCODE -eq 0
            $ErrorActionPreference = "Stop"
            if ($found) { $prefix = @("-$version"); break }
        }
    } else {
        $program = "python"; $prefix = @()
    }
    $ErrorActionPreference = "Continue"
    & $program @prefix -c "import sys; sys.exit(0 if (3, 11) <= sys.version_info < (3, 15) else 1)"
    $fits = $LASTEXITCODE -eq 0
    $ErrorActionPreference = "Stop"
    if (-not $fits) {
        throw "bootstrap: $program $prefix is not Python 3.11 to 3.14 (install one from python.org, or set PYTHON to a python.exe)"
    }
    Write-Host "bootstrap: creating .venv with $program $prefix"
    Invoke-Checked "creating .venv" $program ($prefix + @("-m", "venv", ".venv"))
}
$venv = ".venv\Scripts\python.exe"
Invoke-Checked "pip upgrade" $venv @("-m", "pip", "install", "-q", "--upgrade", "pip")
# uiautomation comes with the project on Windows (a pyproject marker)
Invoke-Checked "pip install" $venv @("-m", "pip", "install", "-q", "-e", ".[dev,package]")
# pyautogui drags in python3-xlib 0.15 over python-xlib 0.33 (harmless on Windows, kept alike)
Invoke-Checked "python-xlib reinstall" $venv @("-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", "python-xlib==0.33")
# shiboken6's signature support modules beside its package, compiled: it otherwise compiles
# them from source at every start (packaging/shiboken_files.py; the bundle ships the same)
Invoke-Checked "shiboken6 support files" $venv @("packaging\shiboken_files.py")
Write-Host "bootstrap: ready (.venv)"
