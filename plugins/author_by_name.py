"""/-/author?name=Sergey+Levine: the author page of a name as the papers table shows it.

The papers table holds author names (a JSON list for reading and CSV); each one links here and
is sent to its author page, found through the indexed name key (the same folding the loader uses
to merge spellings), so a page of 25 papers needs no lookup until a reader clicks.
"""

from datasette import hookimpl
from datasette.utils.asgi import Response

from loader.web.catalog_scope import catalog_database, serves_catalog
from loader.web.rendering import name_key


async def author_page(datasette, request):
    name = request.args.get("name", "")
    if not name.strip() or len(name) > 500:
        return Response.text("Give an author's name: /-/author?name=...", status=400)
    db = catalog_database(datasette)
    found = (
        await db.execute("select id from authors where key = :key", {"key": name_key(name)})
    ).rows
    if not found:
        return Response.text(f"No author named {name[:100]}", status=404)
    return Response.redirect(datasette.urls.row(db.name, "authors", found[0][0]))


@hookimpl
def register_routes(datasette):
    if not serves_catalog(datasette):
        return None
    return [(r"^/-/author$", author_page)]
