"""The build: prepared entries -> one SQLite catalog, written beside the old one and swapped in."""
