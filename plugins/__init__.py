"""The paper catalog's Datasette plugins, installed as `paper_catalog_site.plugins`.

Registered through the `datasette` entry points of the paper-catalog distribution
(pyproject.toml): this package itself, so Datasette finds `templates/` and `static/` as a
plugin's own (static files under /-/static-plugins/paper-catalog/), and one entry a hook module.
Each hook acts on the catalog database only (loader/web/catalog_scope.py says which database
that is) and leaves any other database, or a Datasette without the catalog, as Datasette serves
it. Every reliance on Datasette's internals is listed in loader/web/datasette_coupling.py.
"""
