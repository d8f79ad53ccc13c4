"""Reading: input files and their formats -> entries and problems. No database."""
