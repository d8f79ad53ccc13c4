"""What the site's pages need at request time: search SQL, BibTeX, related papers, facet
counts, the loader's rules pages apply (rendering), which database is the catalog
(catalog_scope). The only part
of loader/ that plugins import; may import Datasette, but never its app or views at import time
(Datasette imports the installed plugins while its own modules load)."""
