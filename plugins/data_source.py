"""The home page's data-source line: what this catalog was built from (its venues with their
years, and how many files), read from its own tables (loader/web/catalog_summary.py), where a
line in metadata.yml would say the same words whatever was loaded."""

from datasette import hookimpl

from loader.web.catalog_scope import catalog_database, is_catalog_page
from loader.web.catalog_summary import FILES_SQL, VENUE_YEARS_SQL, data_source


@hookimpl
def extra_template_vars(template, datasette):
    if template != "index.html" or not is_catalog_page(datasette, None):
        return None

    async def source_line():
        db = catalog_database(datasette)
        rows = [tuple(row) for row in (await db.execute(VENUE_YEARS_SQL)).rows]
        files = (await db.execute(FILES_SQL)).first()[0]
        return {"data_source": data_source(rows, files)}

    return source_line
