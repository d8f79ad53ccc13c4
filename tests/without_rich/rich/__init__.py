"""Put first on the Python path of the servers the tests start (tests/conftest.py,
environment_without_rich), so they run as a pip install of paper-catalog does: without rich.

import-linter brings rich into the test environment, and where rich is importable Datasette
prints a traceback with every local variable for each error it answers, each 404 too, at a few
tenths of a second of CPU a time. Tests that want rich (marked `rich_tracebacks`) run in-process.
"""

raise ImportError("rich is left out of the servers the tests start (tests/without_rich)")
