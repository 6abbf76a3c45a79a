# Run the tests that can run on Windows: unit, GUI (offscreen Qt), CLI. The real-desktop
# suites (tests/desktop, tests/e2e, tests/packaging and the Xvfb GUI tests) need Xvfb and
# run on Linux only; they are deselected here by their "desktop" marker.
#   powershell -ExecutionPolicy Bypass -File scripts\test.ps1 [pytest args]
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..")
if (-not (Test-Path ".venv\Scripts\pytest.exe")) { & (Join-Path $PSScriptRoot "bootstrap.ps1") }
$env:QT_QPA_PLATFORM = "offscreen"
& .venv\Scripts\python.exe -m pytest -m "not desktop" @args
exit $LASTEXITCODE
