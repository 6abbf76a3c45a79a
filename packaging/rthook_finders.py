"""Run-time hook of the bundle (packaging/desktop-agent.spec, `runtime_hooks`): Python's own
path finders for the app's imports.

PyInstaller's bootstrap puts its path finder (`pyimod02_importers.PyiFrozenFinder`) before
Python's FileFinder for every folder on the import path. For each module it first looks in the
PYZ archive, then hands the lookup to a FileFinder of the same folder, formatting its trace
messages (the finder's repr, the spec's repr) on the way even when tracing is off. The spec
collects the modules as .pyc files (`noarchive=True`): the archive is empty, every import goes
through both finders and finds its file with the second. Without PyInstaller's finder the
imports find the same files (FileFinder, SourcelessFileLoader: the spec PyInstaller's finder
returned from its fallback). With modules in the archive (a build without noarchive) its finder
stays.

Runs before the other run-time hooks (PyInstaller runs the spec's own first) and before the
app's first line; it imports nothing that is not imported already.
"""


def _python_path_finders() -> None:
    import sys

    import pyimod02_importers  # PyInstaller's bootstrap module, in the executable

    if pyimod02_importers.pyz_archive.toc:
        return
    frozen_hook = pyimod02_importers.PyiFrozenFinder.path_hook
    sys.path_hooks[:] = [hook for hook in sys.path_hooks if hook != frozen_hook]
    for path, finder in list(sys.path_importer_cache.items()):
        if isinstance(finder, pyimod02_importers.PyiFrozenFinder):
            del sys.path_importer_cache[path]


_python_path_finders()
del _python_path_finders
