"""Bar charts of papers per area, track and affiliation as server-side SVG: they render with no
network and no JavaScript. On /-/charts, and the area chart on the home page (plugins/pages.py).

The counts come from the small tracks and affiliations tables (paper_count is precomputed by the
loader), so the charts cost the same at 1M papers.
"""

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from datasette import Response
from datasette.database import Database
from datasette.utils.asgi import Request

from loader.web.catalog_scope import catalog_database, catalog_name, serves_catalog

if TYPE_CHECKING:
    from datasette.app import Datasette

ROW_HEIGHT = 22
BAR_HEIGHT = 15
BAR_WIDTH = 360
LABEL_CHARS = 58
CHAR_WIDTH = 7.0
TOP_AFFILIATIONS = 40
NO_TRACK = "(no track)"

AREAS_SQL = """
select area as name, sum(paper_count) as papers
from tracks
group by area
order by papers desc, name
"""
NO_TRACK_SQL = "select count(*) from papers where track_id is null"
TRACKS_SQL = """
select name, paper_count as papers
from tracks
order by paper_count desc, name
"""
AFFILIATIONS_SQL = """
select slug, name, paper_count as papers
from affiliations
order by paper_count desc, name
limit :limit
"""


def shorten(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def bar_chart(
    chart_id: str, title: str, items: Iterable[tuple[str, int, str | None]]
) -> dict[str, Any]:
    """items: (label, value, href or None). Geometry for _bar_chart.html, which escapes text."""
    items = [item for item in items if item[1]]
    largest = max((value for _, value, _ in items), default=0)
    label_width = int(max((len(shorten(label)) for label, _, _ in items), default=4) * CHAR_WIDTH)
    label_width = max(label_width, 60) + 10
    bars = []
    for index, (label, value, href) in enumerate(items):
        width = max(1.0, BAR_WIDTH * value / largest) if largest else 0
        bars.append(
            {
                "label": shorten(label),
                "full_label": label,
                "value": value,
                "href": href,
                "y": index * ROW_HEIGHT,
                "width": round(width, 1),
            }
        )
    return {
        "id": chart_id,
        "title": title,
        "bars": bars,
        "label_width": label_width,
        "bar_height": BAR_HEIGHT,
        "text_y": BAR_HEIGHT - 3,
        "width": label_width + BAR_WIDTH + 60,
        "height": max(len(bars), 1) * ROW_HEIGHT,
    }


def papers_link(datasette: "Datasette", **filters: Any) -> str:
    return datasette.urls.table(catalog_name(datasette), "papers") + "?" + urlencode(filters)


async def area_chart(datasette: "Datasette", db: Database) -> dict[str, Any]:
    rows = list(await db.execute(AREAS_SQL))
    untracked = (await db.execute(NO_TRACK_SQL)).first()[0]
    items = [(row["name"], row["papers"], papers_link(datasette, area=row["name"])) for row in rows]
    items.append((NO_TRACK, untracked, papers_link(datasette, track_id__isnull=1)))
    items.sort(key=lambda item: -item[1])
    return bar_chart("chart-areas", "Papers per area", items)


async def track_chart(datasette: "Datasette", db: Database) -> dict[str, Any]:
    rows = await db.execute(TRACKS_SQL)
    items = [
        (row["name"], row["papers"], papers_link(datasette, track=row["name"])) for row in rows
    ]
    return bar_chart("chart-tracks", "Papers per track", items)


async def affiliation_chart(datasette: "Datasette", db: Database) -> dict[str, Any]:
    rows = await db.execute(AFFILIATIONS_SQL, {"limit": TOP_AFFILIATIONS})
    items = [
        (
            row["name"],
            row["papers"],
            papers_link(datasette, affiliations__arraycontains=row["slug"]),
        )
        for row in rows
    ]
    return bar_chart(
        "chart-affiliations", f"Papers per affiliation (top {TOP_AFFILIATIONS})", items
    )


async def charts_page(datasette: "Datasette", request: Request) -> Response:
    db = catalog_database(datasette)
    charts = [
        await area_chart(datasette, db),
        await track_chart(datasette, db),
        await affiliation_chart(datasette, db),
    ]
    return Response.html(
        await datasette.render_template("charts.html", {"charts": charts}, request=request)
    )


def register_routes(datasette: "Datasette") -> list[tuple[str, Callable[..., Any]]] | None:
    if not serves_catalog(datasette):
        return None
    return [(r"^/-/charts$", charts_page)]
