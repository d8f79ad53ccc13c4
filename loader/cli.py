"""The paper-catalog command: options, messages and exit codes only."""

import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import click

from loader.build.atomic import TargetRefused
from loader.build.catalog import BuildFailed, CatalogCheckFailed, build_catalog
from loader.build.prepare import input_bytes
from loader.read.arxiv_snapshot import is_category
from loader.read.sources import FORMATS, InputFile, check_sources, plan_inputs
from loader.records import Problem
from loader.serve import site_files as site
from loader.serve.inspection import CannotInspect
from loader.serve.publish import PLATFORMS, PublishError, deploy_command, write_context
from loader.serve.supervisor import HEAD_TIMEOUT_SECONDS, ListenError, serve_catalog

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
def cli() -> None:
    """Turn messy paper listings into one clean SQLite catalog and publish it."""


def input_files(paths: tuple[Path, ...]) -> list[InputFile]:
    files = plan_inputs(paths or [Path("seeds")])
    if not files:
        raise click.ClickException("no input files found")
    return files


def categories_option(
    context: click.Context, parameter: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...]:
    for value in values:
        if not is_category(value):
            raise click.BadParameter(f"{value!r} is not an arXiv category such as cs.LG or cs")
    return values


def warn(message: str) -> None:
    click.echo(f"Warning: {message}", err=True)


def report(problems: Iterable[Problem]) -> None:
    for problem in problems:
        click.echo(str(problem), err=True)


@cli.command()
@paths_argument
@click.option(
    "--db",
    default="catalog.db",
    show_default=True,
    help="Catalog file to write: a new path, or a catalog paper-catalog built (never another "
    "file, nor an input).",
)
@click.option(
    "--skip-invalid",
    is_flag=True,
    help="Build from the valid entries and record problems in the load_problems table.",
)
@format_option
@click.option(
    "--arxiv-category",
    "arxiv_categories",
    multiple=True,
    callback=categories_option,
    help="Keep only the arXiv snapshot records in this category (cs.LG) or archive (cs); "
    "repeat for more. A sources.yml entry's arxiv_categories win for its file.",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Read and prepare every file, neither taking entries from nor storing them in the "
    "cache beside --db.",
)
def build(
    paths: tuple[Path, ...],
    db: str,
    skip_invalid: bool,
    forced_format: str | None,
    arxiv_categories: tuple[str, ...],
    no_cache: bool,
) -> None:
    """Build a catalog from files and folders (default: seeds/).

    The catalog is written to a temporary file and replaces --db only when the build
    succeeds, so a failed build leaves the previous catalog untouched. On a terminal a
    progress bar shows the input read so far.

    Each file's parsed entries are kept in .NAME.cache/ beside --db (NAME: the catalog's file
    name), so a rebuild reads again only the files that changed; the catalog is the same as
    with --no-cache. The folder is private to you: when another user owns it or can write to
    it, the build warns and reads every file.

    Example:

    \b
        paper-catalog build seeds/ extra.jsonl --db catalog.db
        paper-catalog build arxiv-metadata-oai-snapshot.json --arxiv-category cs.LG
    """
    files = input_files(paths)
    try:
        if sys.stderr.isatty():
            with click.progressbar(
                length=input_bytes(files), label="Reading", file=sys.stderr, show_percent=True
            ) as bar:
                summary = build_catalog(
                    files,
                    db,
                    skip_invalid,
                    forced_format,
                    progress=bar.update,
                    arxiv_categories=arxiv_categories,
                    cache=not no_cache,
                    warn=warn,
                )
        else:
            summary = build_catalog(
                files,
                db,
                skip_invalid,
                forced_format,
                arxiv_categories=arxiv_categories,
                cache=not no_cache,
                warn=warn,
            )
    except BuildFailed as failure:
        report(failure.problems)
        raise click.ClickException(
            f"{len(failure.problems)} problem(s); {db} was left unchanged "
            "(fix the input or use --skip-invalid)"
        )
    except BrokenProcessPool:
        raise click.ClickException(
            f"a parsing worker process died (out of memory, or killed); {db} was left unchanged"
        )
    except CatalogCheckFailed as error:
        raise click.ClickException(
            f"the new catalog failed its integrity check ({error}); {db} was left unchanged"
        )
    except (OSError, sqlite3.OperationalError, TargetRefused) as error:
        # sqlite3 reports a full disk or an I/O error as OperationalError, not OSError
        raise click.ClickException(f"cannot write {db}: {error}")
    report(summary.problems)
    click.echo(f"{db}: {summary}")


@cli.command()
@paths_argument
@format_option
def check(paths: tuple[Path, ...], forced_format: str | None) -> None:
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


db_option = click.option(
    "--db", default="catalog.db", show_default=True, type=click.Path(exists=True, dir_okay=False)
)
metadata_option = click.option(
    "--metadata",
    default=site.METADATA,
    show_default="the site's metadata.yml",
    type=click.Path(exists=True, dir_okay=False),
)


@cli.command()
@db_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8001, show_default=True, type=int)
@metadata_option
@click.option(
    "--poll",
    default=1.0,
    show_default=True,
    type=click.FloatRange(min=0.05),
    help="Seconds between checks of --db for a new build.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="Worker processes, each a full replica of the site.  [default: one per usable core]",
)
@click.option(
    "--cache-mb",
    default=32,
    show_default=True,
    type=click.IntRange(min=0),
    help="Memory each worker may use to keep answers to repeated GETs (0: no cache).",
)
@click.option(
    "--head-timeout",
    default=HEAD_TIMEOUT_SECONDS,
    show_default=True,
    type=click.IntRange(min=1),
    help="Seconds a connection has to send each complete request head, however slowly its "
    "bytes come; then it is closed.",
)
def serve(
    db: str,
    host: str,
    port: int,
    metadata: str | Path,  # a Path when the default
    poll: float,
    workers: int | None,
    cache_mb: int,
    head_timeout: int,
) -> None:
    """Serve the catalog read-only with Datasette, with limits fit for a public site.

    One worker process per core answers requests. The server reads a hard-linked snapshot of
    the build under .serving/ beside --db, never --db itself. Rebuild whenever you like: when
    --db is replaced, the new build is inspected and its workers started while the old ones keep
    answering; the old workers then finish their requests and close their connections cleanly,
    the new ones take over (new connections wait for that, not for a whole start) and the old
    snapshot is removed.

    Example:

        paper-catalog serve --db catalog.db --port 8001
    """
    try:
        status = serve_catalog(
            db,
            host,
            port,
            metadata,
            poll,
            say=lambda m: click.echo(m, err=True),
            workers=workers,
            cache_bytes=cache_mb * 1024 * 1024,
            head_timeout=head_timeout,
        )
    except CannotInspect as error:
        raise click.ClickException(f"cannot serve {db}: {error}")
    except ListenError as error:
        raise click.ClickException(str(error))
    except KeyboardInterrupt:
        status = 0
    sys.exit(status)


@cli.command()
@db_option
@click.option(
    "--platform",
    type=click.Choice(PLATFORMS),
    default="cloudrun",
    show_default=True,
    help="cloudrun needs gcloud; fly needs flyctl and an existing Fly app.",
)
@click.option(
    "--name", default="paper-catalog", show_default=True, help="Cloud Run service or Fly app."
)
@click.option(
    "--max-instances",
    default=4,
    show_default=True,
    type=click.IntRange(min=1),
    help="Cloud Run replicas the load balancer may scale out to.",
)
@click.option(
    "--context",
    "context_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write the image's build context here and keep it (default: a temporary folder).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Write the context, print its Dockerfile and the deploy command; deploy nothing.",
)
def publish(
    db: str,
    platform: str,
    name: str,
    max_instances: int,
    context_dir: Path | None,
    dry_run: bool,
) -> None:
    """Publish a read-only copy of the catalog as a container image.

    Writes a build context (a wheel of this project built from the checkout, the pinned
    dependencies, the catalog and a Dockerfile) and deploys it with the platform's tool. The
    image installs the wheel and starts `paper-catalog serve`, so it serves the same site, with
    the same metadata, plugins and settings, as local serving. Run it from a source checkout.

    Example:

        paper-catalog publish --db catalog.db --platform cloudrun --name paper-catalog --dry-run
    """
    tool = {"cloudrun": "gcloud", "fly": "flyctl"}[platform]
    if not dry_run and shutil.which(tool) is None:
        raise click.ClickException(f"publishing to {platform} needs {tool} installed and logged in")
    with tempfile.TemporaryDirectory(prefix="paper-catalog-publish-") as scratch:
        directory = context_dir or Path(scratch)
        try:
            context = write_context(db, directory, platform, name)
        except (PublishError, OSError) as error:
            raise click.ClickException(str(error))
        command = deploy_command(context.directory, platform, name, max_instances=max_instances)
        if dry_run:
            click.echo(shlex.join(command))
            click.echo(context.dockerfile.read_text(encoding="utf-8"), nl=False)
            return
        status = subprocess.run(command, check=False).returncode
    if status:
        raise click.ClickException(f"{tool} failed with status {status}")
