"""Pure rules: markup, names, tracks, labels and the merge policy. No I/O, no SQL."""
