"""sources.yml: the venue, year and status of the pages in a folder, the arXiv categories
a snapshot keeps, and the date of a dump's content.

    - match: "iclr2024_*.txt"   # glob relative to this folder, ** allowed
      venue: ICLR
      year: 2024               # or "2024"
      status: poster
    - match: "arxiv-metadata-oai-snapshot.json"
      arxiv_categories: [cs.LG, cs.CL]   # an arXiv snapshot's records kept (venue, year: its own)
    - match: "iclr/*.json"
      as_of: 2025-11           # the date of a dump's content (YYYY-MM or YYYY-MM-DD)

`match` is required; `venue`, `year` and `status` are each optional, but an entry gives at
least one of them (`venue: arXiv` alone is fine: pages that mix years), `arxiv_categories` or
`as_of` (the date a dump was taken: its citation counts and ratings are of that date; without
it a file's modification date stands for it).

A sources.yml is configuration, never an input file. It applies to the files of its folder
and below, whether the folder or a single file of it is given: the sources.yml files read for
a file are those of the folders from the given path down to the file's own. A file no pattern
matches has no venue or year. A pattern that matches no file, a file two patterns give
different values, and a sources.yml that cannot be read are problems naming sources.yml:LINE.
"""

import glob
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

import yaml

from loader.read.arxiv_snapshot import is_category
from loader.records import Problem

CONFIG_NAME = "sources.yml"
REQUIRED_KEYS = ("match",)
SETTING_KEYS = ("venue", "year", "status")  # each optional; an entry gives one at least
# the arXiv categories whose records a snapshot keeps: an entry with it needs only match
CATEGORIES_KEY = "arxiv_categories"
DATE_KEY = "as_of"
KEYS = (*REQUIRED_KEYS, *SETTING_KEYS, CATEGORIES_KEY, DATE_KEY)
YEAR = re.compile(r"^[12][0-9]{3}$")
DATE = re.compile(r"^[12][0-9]{3}-(0[1-9]|1[0-2])(-(0[1-9]|[12][0-9]|3[01]))?$")


@dataclass(frozen=True)
class SourceSettings:
    venue: str | None = None
    year: int | None = None
    status: str | None = None
    arxiv_categories: tuple[str, ...] = ()
    as_of: str | None = None


@dataclass(frozen=True)
class Rule:
    config: str  # the sources.yml it comes from, as shown in problems
    line: int
    pattern: str
    settings: SourceSettings


@dataclass
class SourceConfig:
    settings: dict[str, SourceSettings]  # str(file) -> its settings
    problems: list[Problem]


def shown_path(path: str) -> str:
    """A sources.yml as problems name it: relative to the current folder when inside it, like
    the input files given relatively (the folders are made absolute to compare them)."""
    relative = os.path.relpath(path)
    return path if relative.startswith(os.pardir) else relative


def read_config(path: str | os.PathLike[str]) -> tuple[list[Rule], list[Problem]]:
    """sources.yml -> (rules, problems). Line numbers come from the YAML nodes."""
    name = shown_path(str(path))
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return [], [Problem(name, 1, f"cannot read {CONFIG_NAME}: {error}")]
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        reason = getattr(error, "problem", None) or str(error)
        return [], [Problem(name, mark.line + 1 if mark else 1, f"not valid YAML: {reason}")]
    if root is None:
        return [], []
    if not isinstance(root, yaml.SequenceNode):
        message = f"{CONFIG_NAME} must be a list of entries with match and a venue, year or status"
        return [], [Problem(name, root.start_mark.line + 1, message)]
    rules: list[Rule] = []
    problems: list[Problem] = []
    for node in root.value:
        rule = read_rule(name, node)
        if isinstance(rule, Problem):
            problems.append(rule)
        else:
            rules.append(rule)
    return rules, problems


def read_rule(name: str, node: yaml.Node) -> Rule | Problem:
    """One list item -> Rule, or the Problem that says what is wrong with it."""
    line = node.start_mark.line + 1
    if not isinstance(node, yaml.MappingNode):
        return Problem(
            name, line, "each entry must be a mapping with match and a venue, year or status"
        )
    values = {}
    categories: tuple[str, ...] = ()
    for key_node, value_node in node.value:
        key = key_node.value
        if key not in KEYS:
            return Problem(
                name,
                key_node.start_mark.line + 1,
                f"unknown key {key!r} (expected {', '.join(KEYS)})",
            )
        if key == CATEGORIES_KEY:
            found = read_categories(name, value_node)
            if isinstance(found, Problem):
                return found
            categories = found
            continue
        if not isinstance(value_node, yaml.ScalarNode) or not value_node.value.strip():
            return Problem(name, value_node.start_mark.line + 1, f"{key} must be a single value")
        values[key] = value_node.value.strip()
    if "match" not in values:
        return Problem(name, line, "entry has no match")
    # the categories or a date alone make an entry: a dump gives its own venue and year
    if not categories and not any(key in values for key in (*SETTING_KEYS, DATE_KEY)):
        return Problem(name, line, "entry has no venue, year or status")
    if "year" in values and not YEAR.match(values["year"]):
        return Problem(name, line, f"year {values['year']!r} is not a year such as 2024")
    if DATE_KEY in values and not DATE.match(values[DATE_KEY]):
        message = f"{DATE_KEY} {values[DATE_KEY]!r} is not a date such as 2025-11 or 2025-11-03"
        return Problem(name, line, message)
    pattern = PurePosixPath(values["match"])
    if pattern.is_absolute() or ".." in pattern.parts:
        return Problem(name, line, f"match {values['match']!r} must stay inside this folder")
    year = int(values["year"]) if "year" in values else None
    settings = SourceSettings(
        values.get("venue"), year, values.get("status"), categories, values.get(DATE_KEY)
    )
    return Rule(name, line, values["match"], settings)


def read_categories(name: str, node: yaml.Node) -> tuple[str, ...] | Problem:
    """arxiv_categories: a list of categories ([cs.LG, cs.CL]) or a single one."""
    items = node.value if isinstance(node, yaml.SequenceNode) else [node]
    categories = []
    for item in items:
        text = item.value.strip() if isinstance(item, yaml.ScalarNode) else ""
        if not is_category(text):
            message = f"{CATEGORIES_KEY} must list arXiv categories such as cs.LG, not {text!r}"
            return Problem(name, item.start_mark.line + 1, message)
        categories.append(text)
    if not categories:
        return Problem(name, node.start_mark.line + 1, f"{CATEGORIES_KEY} is empty")
    return tuple(categories)


def matched_files(folder: str, pattern: str) -> set[str]:
    """Files of `folder` the pattern matches, as normalized paths relative to it."""
    found = glob.glob(pattern, root_dir=folder, recursive=True)
    return {
        os.path.normpath(match)
        for match in found
        if os.path.isfile(os.path.join(folder, match)) and os.path.basename(match) != CONFIG_NAME
    }


def folders_between(root: str, folder: str) -> list[Path]:
    """root, its subfolders down to folder (folder itself included)."""
    relative = Path(os.path.relpath(folder, root))
    chain = [Path(root)]
    for part in relative.parts if relative != Path(".") else ():
        chain.append(chain[-1] / part)
    return chain


def load_source_config(
    paths: Iterable[str | os.PathLike[str]], files: Iterable[str | os.PathLike[str]]
) -> SourceConfig:
    """The settings every file gets from the sources.yml files that apply to it, and the
    problems of those files. `paths` are the files and folders given, `files` what
    discovery found in them."""
    roots = [os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p) or ".") for p in paths]
    # folder -> (rules, {rule: matched relative paths})
    configs: dict[str, tuple[list[Rule], dict[Rule, set[str]]]] = {}
    problems: list[Problem] = []

    def config_of(folder: str) -> tuple[list[Rule], dict[Rule, set[str]]]:
        if folder not in configs:
            path = os.path.join(folder, CONFIG_NAME)
            rules, found = ([], []) if not os.path.isfile(path) else read_config(path)
            problems.extend(found)
            configs[folder] = (rules, {rule: matched_files(folder, rule.pattern) for rule in rules})
        return configs[folder]

    settings: dict[str, SourceSettings] = {}
    for file in files:
        folder = os.path.abspath(os.path.dirname(file))
        applying = [r for r in roots if folder == r or folder.startswith(r.rstrip(os.sep) + os.sep)]
        if not applying:
            continue
        top = min(applying, key=len)
        chosen: Rule | Literal[False] | None = None  # False: two rules disagree
        for config_folder in map(str, folders_between(top, folder)):
            rules, matches = config_of(config_folder)
            relative = os.path.normpath(os.path.relpath(os.path.abspath(file), config_folder))
            for rule in rules:
                if relative not in matches[rule]:
                    continue
                if chosen is None:
                    chosen = rule
                elif chosen is not False and chosen.settings != rule.settings:
                    message = (
                        f"{file}: {describe(rule.settings)} here, but "
                        f"{describe(chosen.settings)} at {chosen.config}:{chosen.line}"
                    )
                    problems.append(Problem(rule.config, rule.line, message))
                    chosen = False
                    break
            if chosen is False:
                break
        if chosen:
            settings[str(file)] = chosen.settings
    for rules, matches in configs.values():
        for rule in rules:
            if not matches[rule]:
                problems.append(
                    Problem(rule.config, rule.line, f"{rule.pattern!r} matches no file")
                )
    return SourceConfig(settings, problems)


def describe(settings: SourceSettings) -> str:
    """'ICLR 2024 (poster)', 'arXiv', '2024', 'no venue or year (poster)'."""
    shown = " ".join(str(value) for value in (settings.venue, settings.year) if value)
    status = f" ({settings.status})" if settings.status else ""
    kept = settings.arxiv_categories
    categories = f" {CATEGORIES_KEY} {', '.join(kept)}" if kept else ""
    date = f" {DATE_KEY} {settings.as_of}" if settings.as_of else ""
    return ((shown or "no venue or year") + status + categories + date).strip()
