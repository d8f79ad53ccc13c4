"""How the catalog is served: Datasette's command line and the settings of a public site."""

import subprocess
import sys
from pathlib import Path

SETTINGS = {
    # a public read-only site: every query has a time limit and a row cap
    "sql_time_limit_ms": 1000,
    "facet_time_limit_ms": 500,
    "max_returned_rows": 1000,
    "suggest_facets": False,
    "allow_download": False,
    "default_page_size": 50,
    "max_csv_mb": 200,
    "num_sql_threads": 3,
}


def datasette_command(db, host, port, metadata, plugins_dir):
    inspect_file = f"{db}.inspect.json"
    subprocess.run(
        [sys.executable, "-m", "datasette", "inspect", db, "--inspect-file", inspect_file],
        check=True,
    )
    command = [sys.executable, "-m", "datasette", "serve", "-i", db]
    command += ["--inspect-file", inspect_file, "--metadata", metadata]
    command += ["--plugins-dir", plugins_dir, "--host", host, "--port", str(port)]
    templates = Path(plugins_dir) / "templates"
    if templates.is_dir():
        command += ["--template-dir", str(templates)]
    for name, value in SETTINGS.items():
        value = {True: "on", False: "off"}.get(value, value)
        command += ["--setting", name, str(value)]
    return command
