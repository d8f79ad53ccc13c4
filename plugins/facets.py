"""Author and affiliation facets counted from the indexed link tables, not from JSON per row;
column facets that hide when they have no values (venue, year, status).

Datasette's array facet runs json_each() over every row of the view: 9-12 s at 100k papers,
so at any real size it always times out. The same counts come from paper_authors and
paper_affiliations by index, and for the unfiltered table from the precomputed paper_count
columns. Users see the same facets and the same value links (`authors__arraycontains=<name>`);
a filter hook adds the equivalent link-table condition to those links so SQLite reads only the
matching papers instead of parsing every row's JSON.
"""

from dataclasses import dataclass

from datasette import hookimpl
from datasette.database import QueryInterrupted
from datasette.facets import ArrayFacet, ColumnFacet
from datasette.filters import FilterArguments
from datasette.utils import path_with_added_args, path_with_removed_args

from loader.normalize import affiliation_slug, name_key

TABLE = "papers"


@dataclass(frozen=True)
class Link:
    """A JSON list column of papers and the link table behind it."""

    table: str  # link table: (paper_id, <column>)
    column: str
    entity: str  # the linked table, with a paper_count column
    value: str  # what the JSON list holds
    key: str  # indexed column a JSON value maps to
    to_key: object  # JSON value -> key
    label: str = "name"  # what a reader sees for a value: a name, never a slug


LINKS = {
    "authors": Link("paper_authors", "author_id", "authors", "name", "key", name_key),
    "affiliations": Link(
        "paper_affiliations", "affiliation_id", "affiliations", "slug", "slug", affiliation_slug
    ),
}


def is_unfiltered(sql, params):
    """Datasette's facet SQL for the whole table ends with the table name and has no where."""
    return not params and sql.rstrip().endswith(f" from {TABLE}")


def counts_sql(link, sql, params, limit):
    if is_unfiltered(sql, params):
        return (
            f"select {link.value} as value, {link.label} as label, paper_count as count "
            f"from {link.entity} "
            f"where paper_count > 0 order by paper_count desc, {link.value} limit {limit}"
        )
    return (
        f"select {link.entity}.{link.value} as value, {link.entity}.{link.label} as label, "
        "count(*) as count "
        f"from {link.table} join {link.entity} on {link.entity}.id = {link.table}.{link.column} "
        f"where {link.table}.paper_id in (select id from ({sql})) "
        f"group by {link.table}.{link.column} order by count desc, value limit {limit}"
    )


class LinkFacet(ArrayFacet):
    """`facets: [{link: authors}]`: the array facet's results, counted through a link table."""

    type = "link"

    async def suggest(self):
        return []

    async def facet_results(self):
        results, timed_out = [], []
        facet_size = self.get_facet_size()
        pairs = self.get_querystring_pairs()
        for source_and_config in self.get_configs():
            config = source_and_config["config"]
            column = config.get("column") or config["simple"]
            link = LINKS.get(column) if self.table == TABLE else None
            if link is None:
                continue
            try:
                rows = await self.ds.execute(
                    self.database,
                    counts_sql(link, self.sql, self.params, facet_size + 1),
                    self.params,
                    truncate=False,
                    custom_time_limit=self.ds.setting("facet_time_limit_ms"),
                )
            except QueryInterrupted:
                timed_out.append(column)
                continue
            values = []
            for row in rows.rows[:facet_size]:
                value = str(row["value"])
                argument = {f"{column}__arraycontains": value}
                selected = (f"{column}__arraycontains", value) in pairs
                toggle = (path_with_removed_args if selected else path_with_added_args)(
                    self.request, argument
                )
                values.append(
                    {
                        "value": value,
                        "label": row["label"] or value,
                        "count": row["count"],
                        "toggle_url": self.ds.absolute_url(self.request, toggle),
                        "selected": selected,
                    }
                )
            results.append(
                {
                    "name": column,
                    # shown as the array facet it replaces: "authors (array)"
                    "type": "array",
                    "results": values,
                    "hideable": source_and_config["source"] != "metadata",
                    "toggle_url": self.ds.urls.path(
                        path_with_removed_args(self.request, {"_facet_link": column})
                    ),
                    "truncated": len(rows) > facet_size,
                }
            )
        return results, timed_out


class PresentFacet(ColumnFacet):
    """`facets: [{present: venue}]`: a column facet shown only when the rows have a value
    there. A catalog built from listings without sources.yml has no venue or year, and an
    empty facet box would only say so."""

    type = "present"

    async def suggest(self):
        return []

    async def facet_results(self):
        results, timed_out = await super().facet_results()
        # shown and linked exactly as the column facet it is
        return [dict(result, type="column") for result in results if result["results"]], timed_out


@hookimpl
def register_facet_classes():
    return [LinkFacet, PresentFacet]


@hookimpl
def filters_from_request(request, table):
    """`authors__arraycontains=X` scans every row's JSON; the same papers are the ones linked
    to X, which an index finds. The JSON condition stays, so results are exactly the same."""
    if table != TABLE:
        return None
    clauses, params = [], {}
    for column, link in LINKS.items():
        for value in request.args.getlist(f"{column}__arraycontains"):
            name = f"link_{len(params)}"
            params[name] = link.to_key(value)
            clauses.append(
                f"id in (select paper_id from {link.table} where {link.column} in "
                f"(select id from {link.entity} where {link.key} = :{name}))"
            )
    return FilterArguments(clauses, params) if clauses else None
