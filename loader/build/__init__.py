"""The build: prepared entries -> one SQLite catalog, written beside the old one and swapped in.

sqlite-utils is imported here, before any module of the build imports it, without numpy and
pandas: it tries both at import only to map their scalar types to column types, and the build
gives it none (its rows are Python values). numpy's import alone was about a tenth of a
rebuild's CPU in the main process, before any work. A None in sys.modules makes `import numpy`
raise ImportError, which sqlite-utils takes for "not installed"; the entries are taken out
again at once, so a later `import numpy` (the web stage in the same process, tests) imports it
as usual. When either is already imported, or sqlite-utils is, nothing changes.
"""

import sys

_SKIPPED = ("numpy", "pandas")
if "sqlite_utils" not in sys.modules and not any(name in sys.modules for name in _SKIPPED):
    for _name in _SKIPPED:
        sys.modules[_name] = None  # type: ignore[assignment]  # "not importable", as documented
    try:
        import sqlite_utils  # noqa: F401
    finally:
        for _name in _SKIPPED:
            del sys.modules[_name]
