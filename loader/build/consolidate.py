"""The merge stage, after the stream: the merge policy (loader/rules/merge.py) applied to what
the writer wrote. Entries that are versions of one paper become that paper, listing each
person once (loader/rules/people.py), and each author and affiliation written more than one
way is shown under the name the rules pick. This module reads the rows back and decides; the writer
writes the result."""

import itertools
import json
from collections.abc import Iterable

from loader.build.writer import CatalogWriter
from loader.records import Version
from loader.rules.labels import distinguished_labels
from loader.rules.merge import DIRECT, VersionGroups, direct_matches, resolve, title_matches
from loader.rules.names import display_name, name_key
from loader.rules.normalize import shown_affiliation_name
from loader.rules.people import one_person_ids

# new labels may meet other papers' labels: telling those apart again, a few times at most
LABEL_ROUNDS = 3


def stored_version(writer: CatalogWriter, pid: str) -> Version:
    """The first entry of a paper id, as its row holds it."""
    execute = writer.db.conn.execute
    (
        title,
        venue,
        year,
        status,
        url,
        track,
        truncated,
        keywords,
        tldr,
        links,
        citations,
        citations_source,
        citations_as_of,
        rating,
        rating_count,
    ) = execute(
        "select title, venue, year, status, url, track, authors_truncated, keywords, tldr, "
        "links, citations, citations_source, citations_as_of, rating, rating_count "
        "from papers where id = ?",
        [pid],
    ).fetchone()
    authors = execute(
        "select author_id, position from paper_authors where paper_id = ?", [pid]
    ).fetchall()
    affiliations = execute(
        "select affiliation_id from paper_affiliations where paper_id = ?", [pid]
    ).fetchall()
    categories = execute(
        "select category_id from paper_categories where paper_id = ? order by position", [pid]
    ).fetchall()
    # its paper_sources row: the one of this id that no later entry (a duplicate) has
    later = {(version.source_id, version.line) for version in writer.duplicates.get(pid, ())}
    source_id, line = next(
        row
        for row in execute("select source_id, line from paper_sources where paper_id = ?", [pid])
        if row not in later
    )
    return Version(
        pid,
        title,
        venue,
        year,
        status,
        url,
        track,
        bool(truncated),
        tuple(authors),
        tuple(row[0] for row in affiliations),
        tuple(json.loads(keywords)) if keywords else (),
        tuple(row[0] for row in categories),
        source_id,
        line,
        tuple(json.loads(links).items()) if links else (),
        tldr,
        citations,
        citations_source,
        citations_as_of,
        rating,
        rating_count,
    )


def paper_authors(writer: CatalogWriter, pid: str) -> set[int]:
    """Author ids of every entry with this paper id."""
    rows = writer.db.execute("select author_id from paper_authors where paper_id = ?", [pid])
    return {row[0] for row in rows} | {
        author for version in writer.duplicates.get(pid, ()) for author, _ in version.authors
    }


def version_groups(writer: CatalogWriter) -> list[list[str]]:
    """Sets of paper ids that are versions of one paper (the merge policy's rules)."""
    groups = VersionGroups()
    # an entry's paper id holds its title's words (prepare.entry_paper_id): one title key an
    # id, or none. The keys two ids share are found first (one sort of the narrow rows), and
    # only theirs are read again with the ids and titles: sorting every row with them costs
    # more, in the build's serial end
    shared = writer.db.execute(
        "select kind, group_concat(paper_id || ' ' || ifnull(title, '')), "
        "count(distinct title) from "
        "(select distinct key, kind, paper_id, title from temp.version_keys "
        "where (key, kind) in (select key, kind from temp.version_keys "
        "group by key, kind having min(paper_id) != max(paper_id))) "
        "group by key, kind"
    ).fetchall()
    for kind, members, titles in shared:
        titled = dict(member.split(" ") for member in members.split(","))
        ids = sorted(titled)
        pairs: Iterable[tuple[str, str]]
        if kind == DIRECT and titles < 2:
            pairs = itertools.pairwise(ids)
        elif kind == DIRECT:  # two titles among them: rare, so authors are read per paper
            pairs = direct_matches(
                [(pid, titled[pid] or None, paper_authors(writer, pid)) for pid in ids]
            )
        else:
            pairs = title_matches([(pid, paper_authors(writer, pid)) for pid in ids])
        for first, second in pairs:
            groups.union(first, second)
    return groups.groups()


def author_key(writer: CatalogWriter, author_id: int) -> str:
    """An author's name key: the key of any of their spellings (the first is kept)."""
    return name_key(writer.author_names[author_id])


def merge_versions(writer: CatalogWriter) -> tuple[set[str], set[int]]:
    """Each paper with more than one entry becomes the paper the policy's resolve() says,
    each person listed once, written by the writer. Returns the ids whose author and
    affiliation lists changed, and the authors that some paper now lists under another
    spelling of theirs."""
    groups = version_groups(writer)
    grouped = {pid for group in groups for pid in group}
    groups += [[pid] for pid in sorted(writer.duplicates) if pid not in grouped]
    changed: set[str] = set()
    replaced: set[int] = set()
    for group in groups:
        versions: list[Version] = []
        stored: dict[str, Version] = {}
        for pid in group:
            versions.append(stored.setdefault(pid, stored_version(writer, pid)))
            versions.extend(writer.duplicates.pop(pid, ()))
        people = one_person_ids(
            versions,
            lambda author: author_key(writer, author),
            lambda author: writer.author_entries[author],
        )
        replaced.update(people)
        paper = resolve(versions, people)
        if writer.write_paper(paper, stored[paper.id]):
            changed.add(paper.id)
        writer.write_versions(paper.id, versions)
    return changed, replaced


def unlisted_authors(writer: CatalogWriter, replaced: set[int]) -> set[int]:
    """Of the authors some paper lists under another spelling, those no paper lists at all:
    their every paper lists them under another one."""
    if not replaced:
        return set()
    rows = writer.db.conn.execute(
        "select distinct author_id from paper_authors where author_id in "
        "(select value from json_each(?))",
        [json.dumps(sorted(replaced))],
    )
    return replaced - {row[0] for row in rows}


def distinguish_labels(writer: CatalogWriter) -> None:
    """Labels that several merged papers share, each derived one given a second part that
    tells it apart (labels.distinguished_labels): read back here, written by the writer."""
    for _ in range(LABEL_ROUNDS):
        rowids = writer.rows_sharing_labels()
        if not rowids:
            return
        rows = writer.db.conn.execute(
            "select id, label, case when title is null then abstract_text end from papers "
            "where rowid in (select value from json_each(?))",
            [json.dumps(rowids)],
        ).fetchall()
        labels = distinguished_labels(rows)
        if not labels:
            return
        writer.write_labels(labels)


def name_authors(writer: CatalogWriter) -> dict[int, str]:
    """Each author spelled more than one way named by the spelling the name rules pick from
    the counts; returns the first spellings of the authors now shown under another one."""
    renamed: dict[int, str] = {}
    for author_id in writer.other_spellings:
        first = writer.author_names[author_id]
        name = display_name(writer.spelling_counts(author_id, first))
        if name != first:
            writer.name_author(author_id, name)
            renamed[author_id] = first
    return renamed


def name_affiliations(writer: CatalogWriter) -> None:
    """Each affiliation written more than one way (one slug: case and spacing aside) named by
    the name the rules pick from the counts."""
    for affiliation_id in sorted(writer.other_affiliation_names):
        counts = writer.affiliation_name_counts(affiliation_id)
        writer.name_affiliation(affiliation_id, shown_affiliation_name(counts))
