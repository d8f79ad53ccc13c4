"""The paper-catalog command: options, messages and exit codes only."""

import os
import sys
from pathlib import Path

import click

from .build import BuildFailed, build_catalog, check_sources
from .serve import datasette_command
from .sources import FORMATS, discover

paths_argument = click.argument(
    "paths", nargs=-1, type=click.Path(exists=True, dir_okay=True, path_type=Path)
)
format_option = click.option(
    "--format",
    "forced_format",
    type=click.Choice(FORMATS),
    help="Read every file as this format instead of detecting it.",
)


@click.group()
@click.version_option(package_name="paper-catalog")
def cli():
    """Turn messy paper listings into one clean SQLite catalog and publish it."""


def input_files(paths):
    files = discover(paths or [Path("seeds")])
    if not files:
        raise click.ClickException("no input files found")
    return files


def report(problems):
    for problem in problems:
        click.echo(str(problem), err=True)


@cli.command()
@paths_argument
@click.option("--db", default="catalog.db", show_default=True, help="Catalog file to write.")
@click.option(
    "--skip-invalid",
    is_flag=True,
    help="Build from the valid entries and record problems in the load_problems table.",
)
@format_option
def build(paths, db, skip_invalid, forced_format):
    """Build a catalog from files and folders (default: seeds/).

    The catalog is written to a temporary file and replaces --db only when the build
    succeeds, so a failed build leaves the previous catalog untouched.

    Example:

        paper-catalog build seeds/ extra.jsonl --db catalog.db
    """
    files = input_files(paths)
    try:
        if sys.stderr.isatty():
            with click.progressbar(
                length=len(files), label="Loading", file=sys.stderr, show_pos=True
            ) as bar:
                summary = build_catalog(
                    files, db, skip_invalid, forced_format, progress=lambda _: bar.update(1)
                )
        else:
            summary = build_catalog(files, db, skip_invalid, forced_format)
    except BuildFailed as failure:
        report(failure.problems)
        raise click.ClickException(
            f"{len(failure.problems)} problem(s); {db} was left unchanged "
            "(fix the input or use --skip-invalid)"
        )
    except OSError as error:
        raise click.ClickException(f"cannot write {db}: {error}")
    report(summary.problems)
    click.echo(f"{db}: {summary}")


@cli.command()
@paths_argument
@format_option
def check(paths, forced_format):
    """Parse files and report every problem as FILE:LINE: message; write nothing.

    Exits with status 1 when there is any problem.

    Example:

        paper-catalog check seeds/
    """
    entries, problems = check_sources(input_files(paths), forced_format)
    report(problems)
    click.echo(f"{entries} entries, {len(problems)} problems")
    if problems:
        sys.exit(1)


@cli.command()
@click.option("--db", default="catalog.db", show_default=True, type=click.Path(exists=True))
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8001, show_default=True, type=int)
@click.option("--metadata", default="metadata.yml", show_default=True, type=click.Path(exists=True))
@click.option("--plugins-dir", default="plugins", show_default=True, type=click.Path(exists=True))
def serve(db, host, port, metadata, plugins_dir):
    """Serve the catalog read-only with Datasette, with limits fit for a public site.

    Example:

        paper-catalog serve --db catalog.db --port 8001
    """
    os.execv(sys.executable, datasette_command(db, host, port, metadata, plugins_dir))
