"""Table CSV with plugins/csv_stream.py against Datasette's own CSV writer, in the same run.

Both answer the same URL on the same Datasette instance, in process (no HTTP, so the figure is
the writer's, not the network's): ours through the plugin's route, Datasette's through its own
router with that route left out, as tests/test_csv.py compares them byte for byte. Each is
run once to warm the caches, then `--runs` times alternately; the best run of each counts.

Example:

    python bench/csv_writer.py /tmp/bench/1m/catalog.db --out bench/results/csv_writer.json
"""

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from run import Raw, csv_view, load_plugin

from loader.serve.settings import SETTINGS


def stock_client(datasette, route_pattern):
    """Datasette's router without the plugin's CSV route: its own TableView answers."""
    from datasette.app import DatasetteRouter

    routes = [route for route in datasette._routes() if route[0].pattern != route_pattern]
    transport = httpx.ASGITransport(app=DatasetteRouter(datasette, routes))
    return httpx.AsyncClient(transport=transport, base_url="http://localhost")


async def download(client, url):
    start = time.perf_counter()
    size = 0
    async with client.stream("GET", url) as response:
        response.raise_for_status()
        async for chunk in response.aiter_bytes():
            size += len(chunk)
    return time.perf_counter() - start, size


async def compare(catalog, runs):
    from datasette.app import Datasette

    metadata = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
    datasette = Datasette(
        immutables=[str(catalog)],
        metadata=metadata,
        settings=SETTINGS,
    )
    await datasette.invoke_startup()
    csv_stream = load_plugin("csv_stream")

    # the view bench/run.py streams: the area (or track) nearest a tenth of all papers
    raw = Raw(catalog)
    column, value, rows = csv_view(raw, raw.one("select count(*) from papers")[0])
    raw.connection.close()
    # columns chosen in the URL: plugins/papers_columns.py then leaves it alone for both
    params = {column: value, "_stream": "on", "_size": "max", "_nocol": "abstract_plain"}
    url = "/catalog/papers.csv?" + urlencode(params)
    ours_client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=datasette.app()), base_url="http://localhost"
    )
    clients = {
        "csv_stream": ours_client,
        "datasette": stock_client(datasette, csv_stream.csv_route(datasette)),
    }
    best, sizes = {}, {}
    for name, client in clients.items():
        await download(client, url)
    for _ in range(runs):
        for name, client in clients.items():
            seconds, sizes[name] = await download(client, url)
            best[name] = min(best.get(name, seconds), seconds)
    for client in clients.values():
        await client.aclose()
    if sizes["csv_stream"] != sizes["datasette"]:
        raise SystemExit(f"the two CSVs differ in size: {sizes}")
    return {
        "catalog": str(catalog),
        "url": url,
        "rows": rows,
        "bytes": sizes["csv_stream"],
        "datasette_s": round(best["datasette"], 2),
        "csv_stream_s": round(best["csv_stream"], 2),
        "datasette_rows_per_s": round(rows / best["datasette"]),
        "csv_stream_rows_per_s": round(rows / best["csv_stream"]),
        "speedup": round(best["datasette"] / best["csv_stream"], 2),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("catalog")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--out")
    args = parser.parse_args()
    result = asyncio.run(compare(Path(args.catalog), args.runs))
    line = (
        f"Table CSV of `{result['url']}` ({result['rows']:,} rows, "
        f"{result['bytes'] / 1e6:.1f} MB), in process: Datasette's writer "
        f"{result['datasette_rows_per_s']:,} rows/s, plugins/csv_stream.py "
        f"{result['csv_stream_rows_per_s']:,} rows/s: {result['speedup']}x."
    )
    print(line)
    if args.out:
        Path(args.out).write_text(json.dumps({**result, "summary": line}, indent=2) + "\n")


if __name__ == "__main__":
    main()
