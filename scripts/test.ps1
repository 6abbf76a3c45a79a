# Run the tests that can run on Windows: unit, GUI (offscreen Qt), CLI. Left out by marker:
# "desktop" (the real-desktop suites: Xvfb, openbox, real apps; Linux only) and "posix"
# (tests of POSIX behaviour: file modes, /proc, ptys, POSIX shell quoting, select on pipes).
#   powershell -ExecutionPolicy Bypass -File scripts\test.ps1 [pytest args]
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..")
if (-not (Test-Path ".venv\Scripts\python.exe")) {
    & (Join-Path $PSScriptRoot "bootstrap.ps1")
    if (-not $?) { exit 1 }
}
$env:QT_QPA_PLATFORM = "offscreen"
# pytest's exit code decides, not its stderr: with "Stop", Windows PowerShell 5.1 aborts on a
# native program's stderr line once the output is redirected (NativeCommandError)
$ErrorActionPreference = "Continue"
& .venv\Scripts\python.exe -m pytest -m "not desktop and not posix" @args
exit $LASTEXITCODE
