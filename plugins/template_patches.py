"""Small, named edits to Datasette's own page templates, applied as they load: no copies.

Each edit replaces text that must occur exactly once in Datasette's template; if an upgrade
changes that text the site refuses to start (TemplatePatchFailed), so a test fails instead of
the page drifting. The edits: a language and a main landmark with a skip link on every page
(base.html); the search box in the header; column notes folded behind one summary and labels on
the filter controls and a row count heading in order under the h1 of table pages (table.html,
database.html); a label on the SQL editor (_codemirror_foot.html); a table page's rows and facet
values written by filters (_table.html, _facet_results.html).
"""

from datasette import hookimpl
from jinja2 import BaseLoader, ChoiceLoader, TemplateNotFound

from loader.web.search_request import FACET_TITLES

PATCHES = {
    "base.html": [
        ("<html>", '<html lang="en">'),
        (
            '<body class="{% block body_class %}{% endblock %}">\n',
            (
                '<body class="{% block body_class %}{% endblock %}">\n'
                '<a class="skip-link" href="#main">Skip to content</a>\n'
            ),
        ),
        (
            "{% endblock %}</nav></header>",
            '{% endblock %}{% include "_header_search.html" ignore missing %}</nav></header>',
        ),
        ('<section class="content">', '<main id="main" class="content" tabindex="-1">'),
        ("{% endblock %}\n</section>", "{% endblock %}\n</main>"),
    ],
    "database.html": [
        ("<h3>Custom SQL query</h3>", '<h2 class="header3">Custom SQL query</h2>'),
    ],
    "_codemirror_foot.html": [
        # the editor's own input has no label (axe: label, critical): CodeMirror names it
        ("lineWrapping: true,", 'lineWrapping: true,\n          screenReaderLabel: "SQL query",'),
    ],
    "_facet_results.html": [
        # a box's values written in Python (plugins/result_rows.py), as the table's rows
        (
            """                {% for facet_value in facet_info.results %}
                    {% if not facet_value.selected %}
                        <li><a href="{{ facet_value.toggle_url }}">{{ (facet_value.label | string()) or "-" }}</a> {{ "{:,}".format(facet_value.count) }}</li>
                    {% else %}
                        <li>{{ facet_value.label or "-" }} &middot; {{ "{:,}".format(facet_value.count) }} <a href="{{ facet_value.toggle_url }}" class="cross">&#x2716;</a></li>
                    {% endif %}
                {% endfor %}
""",
            "                {{ facet_info.results|facet_values }}\n",
        ),
        # facets in one fixed order (Datasette sorts them by how many values each shows, so
        # blocks jump after a click), headed in words: "Authors", not "authors (array)"
        (
            "{% for facet_info in sorted_facet_results %}",
            "{% for facet_info in sorted_facet_results|in_facet_order %}",
        ),
        (
            (
                '<strong>{{ facet_info.name }}{% if facet_info.type != "column" %} '
                "({{ facet_info.type }}){% endif %}"
            ),
            "<strong>{{ facet_info.name|facet_title }}",
        ),
    ],
    "_table.html": [
        # the rows written in Python (plugins/result_rows.py): the same cells, without an
        # awaited Jinja loop step for each of a table page's 400
        (
            """        {% for row in display_rows %}
            <tr>
                {% for cell in row %}
                    <td class="col-{{ cell.column|to_css_class }} type-{{ cell.value_type }}">{{ cell.value }}</td>
                {% endfor %}
            </tr>
        {% endfor %}
""",
            "        {{ display_rows|table_rows }}\n",
        ),
    ],
    "table.html": [
        # the row count heads the page's content under its h1: an h3 there skips a level
        # (axe: heading-order); Datasette's header3 class keeps its look
        (
            "<h3>{% if filtered_table_rows_count or filtered_table_rows_count == 0 %}",
            '<h2 class="header3">{% if filtered_table_rows_count or filtered_table_rows_count == 0 %}',
        ),
        (
            "{% if human_description_en %}{{ human_description_en }}{% endif %}\n    </h3>",
            "{% if human_description_en %}{{ human_description_en }}{% endif %}\n    </h2>",
        ),
        (
            '<dl class="column-descriptions">',
            (
                '<details class="column-notes"><summary>Column notes</summary>\n'
                '<dl class="column-descriptions">'
            ),
        ),
        ("</dl>\n{% endif %}", "</dl>\n</details>\n{% endif %}"),
        (
            '<select name="_filter_column_{{ loop.index }}">',
            '<select name="_filter_column_{{ loop.index }}" aria-label="Filter column">',
        ),
        (
            '<select name="_filter_op_{{ loop.index }}">',
            '<select name="_filter_op_{{ loop.index }}" aria-label="Filter operation">',
        ),
        (
            'class="filter-value" value="{{ value }}">',
            'class="filter-value" value="{{ value }}" aria-label="Filter value">',
        ),
        (
            '<select name="_filter_column">',
            '<select name="_filter_column" aria-label="Filter column">',
        ),
        ('<select name="_filter_op">', '<select name="_filter_op" aria-label="Filter operation">'),
        (
            '<input type="text" name="_filter_value" class="filter-value">',
            '<input type="text" name="_filter_value" class="filter-value" aria-label="Filter value">',
        ),
        (
            '<select name="_sort" id="sort_by">',
            '<select name="_sort" id="sort_by" aria-label="Sort by">',
        ),
    ],
}


class TemplatePatchFailed(RuntimeError):
    pass


def patch_source(name, source):
    for old, new in PATCHES[name]:
        if source.count(old) != 1:
            raise TemplatePatchFailed(
                f"{name}: expected the text {old!r} exactly once in Datasette's template, "
                f"found it {source.count(old)} times"
            )
        source = source.replace(old, new)
    return source


class PatchedTemplates(BaseLoader):
    """Loads Datasette's own template (`default:NAME`) with our edits applied."""

    def __init__(self, loader):
        self.loader = loader

    def get_source(self, environment, template):
        if template not in PATCHES:
            raise TemplateNotFound(template)
        source, filename, uptodate = self.loader.get_source(environment, "default:" + template)
        return patch_source(template, source), filename, uptodate

    def list_templates(self):
        return sorted(PATCHES)


def facet_title(name):
    return FACET_TITLES.get(name, name.replace("_", " ").capitalize())


def in_facet_order(facets):
    order = {name: index for index, name in enumerate(FACET_TITLES)}
    return sorted(facets, key=lambda facet: (order.get(facet["name"], len(order)), facet["name"]))


@hookimpl
def prepare_jinja2_environment(env):
    env.loader = ChoiceLoader([PatchedTemplates(env.loader), env.loader])
    env.filters["facet_title"] = facet_title
    env.filters["in_facet_order"] = in_facet_order
