"""The settings of a public, read-only site: the same for `paper-catalog serve`, its workers,
a published image and the tests."""

SETTINGS: dict[str, int | bool] = {
    # a public read-only site: every query has a time limit and a row cap
    "sql_time_limit_ms": 1000,
    "facet_time_limit_ms": 500,
    "max_returned_rows": 1000,
    "suggest_facets": False,
    "allow_download": False,
    "default_page_size": 50,
    # 0 = no cap: "all rows" must mean all rows, gigabytes for a large catalog; every page of
    # the stream is its own time-limited query and memory stays flat, so only bandwidth grows
    "max_csv_mb": 0,
    "num_sql_threads": 3,
}
# the name the snapshot gives every build: Datasette names a database after its file
SERVED_NAME = "catalog.db"
# a stable signing secret for every worker of every build, unless the host gives one
SECRET_VARIABLE = "DATASETTE_SECRET"


def setting_text(value: int | bool) -> str:
    """A setting as `--setting` takes it: booleans are on/off (and 0 stays 0, not off)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def setting_options() -> list[str]:
    options: list[str] = []
    for name, value in SETTINGS.items():
        options += ["--setting", name, setting_text(value)]
    return options
