"""paper-catalog: messy paper listings -> one clean SQLite catalog."""
