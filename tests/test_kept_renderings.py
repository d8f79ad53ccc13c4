"""Table cells kept per worker (loader/web/kept_renderings.py, plugins/render_cells.py): a kept
rendering is the rendering itself, and the renderings kept stay within their bytes."""

import json
import sqlite3

from markupsafe import Markup

from loader.web.kept_renderings import KeptRenderings

from .plugin_files import load_plugin

render_cells = load_plugin("render_cells")


class FakeDatasette:
    class urls:
        @staticmethod
        def path(path):
            return path

        @staticmethod
        def table(database, table):
            return f"/{database}/{table}"


def test_kept_cells_are_the_cells_rendered_afresh(search_catalog):
    datasette = FakeDatasette()
    with sqlite3.connect(search_catalog) as connection:
        rows = connection.execute("select abstract, authors, affiliations from papers").fetchall()
    for _ in range(2):  # rendered, then kept
        for abstract, authors, affiliations in rows:
            assert render_cells.kept_abstract_cell(abstract) == render_cells.abstract_cell(abstract)
            for column, value in (("authors", authors), ("affiliations", affiliations)):
                kept = render_cells.kept_linked_names(value, column, datasette, "catalog")
                assert kept == render_cells.linked_names(value, column, datasette, "catalog")
                assert isinstance(kept, Markup)
    assert render_cells.kept_linked_names("not json", "authors", datasette, "catalog") is None


def test_renderings_kept_stay_within_their_bytes_least_recent_out_first():
    rendered = []

    def render(text):
        rendered.append(text)
        return text.upper()

    kept = KeptRenderings(render, max_bytes=16 * 1000)
    texts = [f"{number:04d}" * 100 for number in range(40)]  # ~1 KB an entry
    for text in texts:
        assert kept(text) == text.upper()
    assert kept.size <= kept.max_bytes
    assert kept.size == sum(size for _, size in kept.entries.values())
    assert texts[0] not in {key[0] for key in kept.entries}, "the oldest went first"
    rendered.clear()
    assert kept(texts[-1]) == texts[-1].upper()
    assert rendered == [], "the newest was kept"
    huge = "x" * 2000  # more than a sixteenth of the bytes: rendered, never kept
    assert kept(huge) == huge.upper() and (huge,) not in kept.entries


def test_list_cells_of_every_kind_are_kept_as_rendered():
    datasette = FakeDatasette()
    for value in (json.dumps([]), json.dumps(["Ann <b>", "Bob & Co"]), "[1, 2]", "null"):
        expected = render_cells.linked_names(value, "authors", datasette, "catalog")
        assert render_cells.kept_linked_names(value, "authors", datasette, "catalog") == expected
