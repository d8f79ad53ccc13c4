"""Bounds on a request's URL (plugins/request_limits.py): the length of its path and query, how
often one parameter comes, how many parameters in all; more is a 400 naming the limit, with the
site's security headers, through the served app. A worker's memory under the worst of these
URLs, against a real server: tests/test_security.py."""

import datasette.app  # noqa: F401 (before any plugin file: tests/test_security.py says why)
import httpx
import pytest
import pytest_asyncio

from .plugin_files import load_plugin
from .test_security_headers import assert_security_headers

request_limits = load_plugin("request_limits")
MAX_REPEATS = request_limits.MAX_REPEATS
MAX_PARAMETERS = request_limits.MAX_PARAMETERS
MAX_URL_BYTES = request_limits.MAX_URL_BYTES

# each repeated 5,000 times once cost seconds to minutes and up to gigabytes of a worker
REPEATED = ["_facet=venue", "_where=1", "_col=title", "_nocol=title", "venue__not=x", "_sort=id"]


def repeated(parameter, times):
    return "&".join([parameter] * times)


@pytest_asyncio.fixture(loop_scope="session")
async def client(site_app):
    transport = httpx.ASGITransport(app=site_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://site", timeout=60) as c:
        yield c


def test_each_name_may_come_up_to_the_limit_counted_as_datasette_reads_it():
    path = b"/catalog/papers"
    assert request_limits.limit_problem(path, repeated("_col=title", MAX_REPEATS).encode()) is None
    over = repeated("_col=title", MAX_REPEATS) + "&%5Fcol=year"
    assert "more than 32 of _col;" in request_limits.limit_problem(path, over.encode())
    # `+` is a space in a name, as Datasette decodes it
    spaced = repeated("a+b=1", MAX_REPEATS) + "&a%20b=2"
    assert "of a b;" in request_limits.limit_problem(path, spaced.encode())


def test_facets_of_all_types_are_bounded_together():
    path = b"/catalog/papers"
    facets = ["_facet=venue"] * 8 + ["_facet_array=keywords"] * 8 + ["_facet_size=max"] * 5
    assert request_limits.limit_problem(path, "&".join(facets).encode()) is None
    problem = request_limits.limit_problem(path, "&".join([*facets, "_facet_date=year"]).encode())
    assert problem.startswith("Too many facets: 17") and "16 facets in all" in problem


def test_parameters_in_all_and_the_url_length_are_bounded():
    path = b"/catalog/papers"
    many = "&".join(f"p{i}=1" for i in range(MAX_PARAMETERS))
    assert request_limits.limit_problem(path, many.encode()) is None
    problem = request_limits.limit_problem(path, (many + "&last=1").encode())
    assert problem.startswith("Too many parameters") and str(MAX_PARAMETERS) in problem
    query = b"q=" + b"a" * (MAX_URL_BYTES - len(path) - 2)
    assert request_limits.limit_problem(path, query) is None
    problem = request_limits.limit_problem(path, query + b"a")
    assert problem.startswith("URL too long") and "8,192 bytes" in problem
    assert request_limits.limit_problem(b"/" + b"a" * MAX_URL_BYTES, b"").startswith("URL too")


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize("parameter", REPEATED)
@pytest.mark.parametrize("times", [MAX_REPEATS + 1, 5_000])
async def test_a_parameter_repeated_past_the_limit_is_a_400_naming_it(client, parameter, times):
    query = repeated(parameter, times)
    name = parameter.split("=")[0]
    # 5,000 of any of them is a URL over the limit too, which is checked first
    limit = "URL too long" if len(query) > MAX_URL_BYTES else f"more than {MAX_REPEATS} of {name};"
    for path in ["/catalog/papers", "/catalog/papers.json", "/catalog/papers.csv"]:
        response = await client.get(f"{path}?{query}")
        assert response.status_code == 400, (path, parameter)
        assert limit in response.text
        assert_security_headers(response, path)


@pytest.mark.asyncio(loop_scope="session")
async def test_up_to_the_limit_of_each_parameter_is_served(client):
    facets = "&".join(["_facet=venue", "_facet=year", "_facet_array=keywords"] * 5)
    response = await client.get(f"/catalog/papers.json?{facets}&{repeated('venue__not=x', 32)}")
    assert response.status_code == 200
    assert {"venue", "year", "keywords"} <= set(response.json()["facet_results"])


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize(
    "path",
    [
        "/catalog/papers?title__contains=" + "a" * MAX_URL_BYTES,
        "/search?q=" + "a" * MAX_URL_BYTES,
        "/catalog/" + "a" * MAX_URL_BYTES,
        "/?" + "&".join(f"p{i}=1" for i in range(MAX_PARAMETERS + 1)),
    ],
    ids=["long filter", "long search", "long path", "too many"],
)
async def test_a_long_url_or_too_many_parameters_is_a_400_on_every_page_kind(client, path):
    response = await client.get(path)
    assert response.status_code == 400
    assert "the limit is" in response.text
    assert_security_headers(response, path[:40])


@pytest.mark.asyncio(loop_scope="session")
async def test_a_url_of_exactly_the_limit_is_served(client):
    # httpx's ASGI transport puts the query in raw_path too: counted once all the same
    path = "/catalog/papers.json"
    query = "_padding=" + "a" * (MAX_URL_BYTES - len(path) - len("_padding="))
    assert (await client.get(f"{path}?{query}")).status_code == 200
    assert (await client.get(f"{path}?{query}a")).status_code == 400


@pytest.mark.asyncio(loop_scope="session")
async def test_the_limits_hold_in_datasette_itself_without_the_served_wrappers(datasette):
    # Datasette's own client: its app with the plugins' wrappers, none of `paper-catalog serve`
    response = await datasette.client.get(
        "/catalog/papers.json?" + repeated("_facet=venue", MAX_REPEATS + 1)
    )
    assert response.status_code == 400
    assert f"more than {MAX_REPEATS} of _facet;" in response.json()["error"]
