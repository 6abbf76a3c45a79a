# Make this Windows machine ready to run and test desktop-agent: a venv in .venv with the
# project and its dev tools. Safe to run again. Needs Python 3.11 (python.org, "py" launcher).
#   powershell -ExecutionPolicy Bypass -File scripts\bootstrap.ps1
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..")

$py = $env:PYTHON
if (-not $py) {
    if (Get-Command py -ErrorAction SilentlyContinue) { $py = "py -3.11" } else { $py = "python" }
}
if (-not (Test-Path ".venv\Scripts\python.exe")) {
    Write-Host "bootstrap: creating .venv with $py"
    Invoke-Expression "$py -m venv .venv"
    if ($LASTEXITCODE -ne 0) { throw "bootstrap: cannot create .venv (install Python 3.11 from python.org)" }
}
$venv = ".venv\Scripts\python.exe"
& $venv -m pip install -q --upgrade pip
if ($LASTEXITCODE -ne 0) { throw "bootstrap: pip upgrade failed" }
# uiautomation comes with the project on Windows (a pyproject marker)
& $venv -m pip install -q -e ".[dev,package]"
if ($LASTEXITCODE -ne 0) { throw "bootstrap: pip install failed" }
# pyautogui drags in python3-xlib 0.15 over python-xlib 0.33 (harmless on Windows, kept alike)
& $venv -m pip install -q --force-reinstall --no-deps "python-xlib==0.33"
Write-Host "bootstrap: ready (.venv)"
