"""What the site's pages need at request time: search SQL, BibTeX, related papers, facet
counts. The only part of loader/ that plugins import."""
