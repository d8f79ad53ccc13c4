"""The rows of a query page (canned queries, SQL) and of a table page, and the lists of the
paper and author pages, each as one piece of HTML written in Python.

Datasette renders its templates with Jinja's async mode, where every loop step is an awaited
generator: the stock `query.html` spent a large part of a search page's time awaiting the loop
over the 600 cells of 100 results (docs/benchmark.md). `templates/query.html` is Datasette's own, with its row loop replaced by this filter;
the markup is the same (`<td class="col-...">`), and every cell is escaped unless it is already
Markup (what render_cell hooks return). A table page's `_table.html` rows (25 papers x 16
columns), its column headers (the same bytes as Datasette's loop, whitespace included) and its
facet values (up to 7 x 30) get the same treatment through plugins/template_patches.py. The paper page's related papers and sources and the author
page's papers of a year, co-authors and tracks are lists of the same kind (their templates pass in the
table URL a row's link starts with).
"""

from datasette import hookimpl
from datasette.utils import to_css_class
from jinja2 import pass_context
from jinja2.filters import do_urlencode
from markupsafe import Markup, escape, soft_str

from loader.web.kept_renderings import KeptRenderings
from loader.web.rendering import title_html

# per worker: the titles of the paper and author pages' lists (a paper is listed as related
# on many pages)
TITLES_KEPT_BYTES = 4 * 1024 * 1024
kept_title_html = KeptRenderings(title_html, TITLES_KEPT_BYTES)


def render_result_rows(display_rows, columns):
    cells = [f'<td class="col-{escape(to_css_class(column))}">' for column in columns]
    lines = []
    for row in display_rows:
        lines.append("<tr>")
        lines.extend(f"{cell}{escape(value)}</td>" for cell, value in zip(cells, row))
        lines.append("</tr>")
    return Markup("\n".join(lines))


def render_table_rows(display_rows):
    """Datasette's `_table.html` row loop: each cell a dict of column, value and value type."""
    classes = {}
    lines = []
    for row in display_rows:
        lines.append("<tr>")
        for cell in row:
            column, value_type = cell["column"], cell["value_type"]
            if (column, value_type) not in classes:
                classes[column, value_type] = (
                    f'<td class="col-{escape(to_css_class(column))} type-{escape(value_type)}">'
                )
            lines.append(f"{classes[column, value_type]}{escape(cell['value'])}</td>")
        lines.append("</tr>")
    return Markup("\n".join(lines))


# the whitespace Datasette's `_table.html` header loop writes around each header and its link
HEADER_START = "\n                    <th "
HEADER_END = "\n                    </th>\n                "
NAME_INDENT = "\n                            "
LINK_INDENT = "\n                            \n                                "
INNER_END = "\n                            \n                        "


def sort_link(column, context):
    """A header's link: sort by the column, or descending when the page sorts by it already."""
    name, request = column["name"], context["request"]
    replaced, fix_path = context["path_with_replaced_args"], context["fix_path"]
    if name == context["sort"]:
        url = fix_path(replaced(request, {"_sort_desc": name, "_sort": None, "_next": None}))
        return f'<a href="{escape(url)}" rel="nofollow">{escape(name)}&nbsp;▼</a>'
    url = fix_path(replaced(request, {"_sort": name, "_sort_desc": None, "_next": None}))
    arrow = "&nbsp;▲" if name == context["sort_desc"] else ""
    return f'<a href="{escape(url)}" rel="nofollow">{escape(name)}{arrow}</a>'


@pass_context
def render_table_headers(context, display_columns):
    """Datasette's `_table.html` header loop, byte for byte (its whitespace too): each column's
    header with its description, type and sort link, from the page's own context."""
    parts = []
    for column in display_columns:
        name = column["name"]
        described = ""
        if column.get("description"):  # the link column (the primary key's) has none
            described = f'data-column-description="{escape(column["description"])}" '
        parts.append(
            f'{HEADER_START}{described}class="col-{escape(to_css_class(name))}" scope="col" '
            f'data-column="{escape(name)}" data-column-type="{escape(column["type"].lower())}" '
            f'data-column-not-null="{escape(column["notnull"])}" '
            f'data-is-pk="{1 if column["is_pk"] else 0}">\n                        '
        )
        if not column["sortable"]:
            parts.append(f"{NAME_INDENT}{escape(name)}\n                        ")
        else:
            parts.append(f"{LINK_INDENT}{sort_link(column, context)}{INNER_END}")
        parts.append(HEADER_END)
    return Markup("".join(parts))


def render_facet_values(values):
    """Datasette's `_facet_results.html` value loop: a link to add each value, or the chosen
    value with a link to remove it."""
    lines = []
    for value in values:
        count = f"{value['count']:,}"
        url = escape(value["toggle_url"])
        if not value["selected"]:
            label = escape(soft_str(value["label"]) or "-")
            lines.append(f'<li><a href="{url}">{label}</a> {count}</li>')
        else:
            label = escape(value["label"] or "-")
            lines.append(
                f'<li>{label} &middot; {count} <a href="{url}" class="cross">&#x2716;</a></li>'
            )
    return Markup("\n".join(lines))


def plural(count, noun):
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def paper_link(papers_url, paper):
    """A paper's label (markup rendered) linked to its page."""
    url = escape(f"{papers_url}/{paper['id']}")
    return f'<a href="{url}">{kept_title_html(paper["label"])}</a>'


def render_related_items(related_papers, papers_url):
    """The paper page's related papers, each with its track."""
    lines = []
    for paper in related_papers:
        track = paper["track"]
        after = f' <span class="count">({escape(track)})</span>' if track else ""
        lines.append(f"<li>{paper_link(papers_url, paper)}{after}</li>")
    return Markup("\n".join(lines))


def render_source_items(paper_sources):
    """The paper page's sources: file, line, format, and the venue, year and status given."""
    lines = []
    for source in paper_sources:
        given = ""
        if source["venue"] or source["year"]:
            given = f"; {escape(source['venue'] or '')} {escape(source['year'] or '')}"
            if source["status"]:
                given += f" {escape(source['status'])}"
        lines.append(
            f"<li><code>{escape(source['path'])}</code> line {escape(source['line'])}"
            f' <span class="count">({escape(source["format"])}{given})</span></li>'
        )
    return Markup("\n".join(lines))


def render_year_paper_items(papers, papers_url):
    """The author page's papers of one year, each with its venue and track."""
    lines = []
    for paper in papers:
        after = ""
        if paper["venue"]:
            after = f' <span class="count">{escape(paper["venue"])}</span>'
        if paper["track"]:
            after += f' <span class="count">({escape(paper["track"])})</span>'
        lines.append(f"<li>{paper_link(papers_url, paper)}{after}</li>")
    return Markup("\n".join(lines))


def render_coauthor_items(coauthors, authors_url):
    """The author page's co-authors, each with the papers they share."""
    lines = []
    for coauthor in coauthors:
        url = escape(f"{authors_url}/{coauthor['author_id']}")
        shared = plural(coauthor["shared_papers"], "shared paper")
        lines.append(
            f'<li><a href="{url}">{escape(coauthor["name"])}</a> <span class="count">{shared}</span></li>'
        )
    return Markup("\n".join(lines))


def render_track_items(author_tracks, papers_url):
    """The author page's tracks, each linked to its papers, with how many are theirs."""
    lines = []
    for track in author_tracks:
        url = escape(f"{papers_url}?{do_urlencode({'track': track['name']})}")
        count = plural(track["papers"], "paper")
        lines.append(
            f'<li><a href="{url}">{escape(track["name"])}</a> <span class="count">{count}</span></li>'
        )
    return Markup("\n".join(lines))


@hookimpl
def prepare_jinja2_environment(env):
    env.filters["result_rows"] = render_result_rows
    env.filters["table_rows"] = render_table_rows
    env.filters["table_headers"] = render_table_headers
    env.filters["facet_values"] = render_facet_values
    env.filters["related_items"] = render_related_items
    env.filters["source_items"] = render_source_items
    env.filters["year_paper_items"] = render_year_paper_items
    env.filters["coauthor_items"] = render_coauthor_items
    env.filters["track_items"] = render_track_items
