"""The app's assets (the .desktop entry, the icons), installed as `desktop_agent.resources`.

This folder sits at the top of the repository; pyproject.toml maps it into the package
(setuptools `package-dir`), so an installed wheel, the bundle and the .deb carry it there.
"""
