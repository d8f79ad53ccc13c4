"""How good the labels of untitled papers are, on real papers whose true titles are known.

Each paper is labelled from its abstract alone, as when a listing page gives no title, by the
label rules of an older revision (--old) and by this checkout's (with the build's step that
tells shared labels apart), then counted and judged against its true title.

    python bench/label_quality.py                          # the counts and the judged sample
    python bench/label_quality.py --write docs/labels.md   # the same, into docs/labels.md
    python bench/label_quality.py --unjudged               # sample labels with no verdict yet
    python bench/label_quality.py --more DIR               # and automatic counts on DIR's papers

Papers: every record with a title and an abstract in tests/fixtures/real/ and
tests/fixtures/dumps/, read by the real readers, and in the markup samples; one a title
(versions of one paper are one paper). Counted over all of them: automatic fragment checks,
labels two papers or more share, labels that name a method ('Name: ...'). Judged: SAMPLE_SIZE
machine-learning papers (the first by sha256 of the title; the arXiv snapshot's 2007 physics
and mathematics records left out), each (title, label) given a verdict in
bench/label_judgments.jsonl: good (a reader recognises the paper's topic or method from it),
vague (no fragment, but it names a field, a background fact or something too general),
fragment (starts mid-clause, ends on a connective, or is cut so it reads broken) or wrong (it
names something the paper only uses or compares with). A label counts as judged good when its
verdict is good and no other paper has it.

--more DIR adds the automatic counts (no verdicts) over the titled records of every input file
in DIR (for instance Paper Copilot lists, read by the real reader), with the labels most shared.
"""

import argparse
import collections
import hashlib
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loader.read.sources import discover, read_source
from loader.records import Entry
from loader.rules import labels
from loader.rules.markup import plain_text
from loader.rules.merge import letters_and_digits

# main before the label rules of issue 22, item 4
OLD_REVISION = "eae978a"
SAMPLE_SIZE = 120
JUDGMENTS = ROOT / "bench" / "label_judgments.jsonl"
VERDICTS = ("good", "vague", "fragment", "wrong")
BEGIN, END = "<!-- label_quality: begin -->", "<!-- label_quality: end -->"
FOLDERS = [ROOT / "tests" / "fixtures" / "real", ROOT / "tests" / "fixtures" / "dumps"]
SAMPLES = [
    ROOT / "tests" / "fixtures" / "real" / "markup" / n for n in ("labels.jsonl", "abstracts.jsonl")
]
# the arXiv snapshot's first records: physics and mathematics of April 2007
NOT_MACHINE_LEARNING = re.compile(r"arxiv-metadata-oai-snapshot|arxiv_snapshot_head")
SNAPSHOT_IDS = re.compile(r"0704\.\d{4}")
# what a label must not end on, and the words that open no clause
ENDINGS = {
    "a", "an", "the", "of", "to", "for", "with", "via", "in", "on", "at", "by", "from", "into",
    "onto", "upon", "over", "under", "between", "among", "through", "across", "against",
    "about", "without", "within", "towards", "toward", "than", "as", "per", "like", "using",
    "and", "or", "but", "nor", "while", "whilst", "whereas", "although", "though", "because",
    "if", "when", "where", "which", "that", "who", "whom", "whose", "how", "what", "whether",
    "is", "are", "was", "were", "be", "been", "can", "could", "will", "would", "should", "may",
    "might", "must", "has", "have", "had", "its", "their", "our", "this", "these", "each",
    "every",
}  # fmt: skip
NO_CLAUSE_START = {"and", "or", "but", "nor", "which", "that", "whose", "whom", "where"}
OPEN_MARKS = "([{“‘«\"'"


def load_old_rules(revision):
    """loader/rules/labels.py as it was at `revision`, as a module."""
    source = subprocess.run(
        ["git", "show", f"{revision}:loader/rules/labels.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as file:
        file.write(source)
    spec = importlib.util.spec_from_file_location("old_labels", file.name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    Path(file.name).unlink()
    return module


def title_key(title):
    return " ".join(re.sub(r"[^\w\s]", " ", title.lower()).split())


def real_papers(folders=FOLDERS, samples=SAMPLES):
    """{title key: (title, abstract, machine learning?)}, the first record of each title. A
    record whose abstract another has up to case, punctuation and spacing is left out: without
    titles, the build makes one paper of them (a source repeating an abstract under another
    title)."""
    papers = {}
    for path in discover(folders):
        if path.suffix in (".py", ".md") or path.name == "sources.yml":
            continue
        for item in read_source(path)[1]:
            if isinstance(item, Entry) and item.title and item.abstract.strip():
                physics = NOT_MACHINE_LEARNING.search(str(path)) or (
                    item.arxiv_id and SNAPSHOT_IDS.fullmatch(item.arxiv_id)
                )
                papers.setdefault(title_key(item.title), (item.title, item.abstract, not physics))
    for path in samples:
        for line in path.read_text("utf-8").splitlines():
            record = json.loads(line)
            papers.setdefault(
                title_key(record["title"]), (record["title"], record["abstract"], True)
            )
    abstracts = set()
    for key, (_, abstract, _) in list(papers.items()):
        letters = letters_and_digits(abstract.lower())
        if letters in abstracts:
            del papers[key]
        abstracts.add(letters)
    return papers


def automatic_counts(old, new):
    """Table rows of the counts made without verdicts, old against new."""
    lines = []
    for what, count in (
        ("fragments (automatic check)", lambda m, c, b: sum(map(bool, map(fragment, m.values())))),
        ("papers whose label another paper has, as labelled", lambda m, c, b: b),
        (
            "… once the build has told shared labels apart",
            lambda m, c, b: sum(c[label] > 1 for label in m.values()),
        ),
        (
            "labels naming a method (`Name: ...`)",
            lambda m, c, b: sum(": " in label for label in m.values()),
        ),
        (
            "labels cut (ending in `…`)",
            lambda m, c, b: sum(label.endswith("…") for label in m.values()),
        ),
    ):
        lines.append(f"| {what} | {count(*old)} | {count(*new)} |")
    return lines


def most_shared(measured_labels, count=8):
    """The labels most papers share, as Markdown."""
    counts = measured_labels[1]
    shared = [(n, label) for label, n in counts.most_common() if n > 1][:count]
    return ", ".join(f"`{escaped(label)}` ({n})" for n, label in shared) or "none"


def fragment(label):
    """Why the label reads as a fragment, or None."""
    body = label.removesuffix("…").rstrip()
    if not body:
        return "empty"
    last, first = body.split()[-1], body.split()[0]
    if last.islower() and last.rstrip(".,;:") in ENDINGS:
        return f"ends on '{last}'"
    if body[-1] in OPEN_MARKS or body.count("(") != body.count(")"):
        return "open bracket"
    if first.lower() in NO_CLAUSE_START or (first.isalpha() and first.islower()):
        return f"starts with '{first}'"
    return None


def measured(module, texts, distinguish):
    """{key: label} of every paper, how many papers share each label, and how many papers
    shared their label before the build told them apart."""
    made = {key: module.derive_label(text) for key, text in texts.items()}
    counts = collections.Counter(made.values())
    shared_before = sum(counts[label] > 1 for label in made.values())
    if distinguish:
        shared = [(key, label, texts[key]) for key, label in made.items() if counts[label] > 1]
        made.update(labels.distinguished_labels(shared))
    return made, collections.Counter(made.values()), shared_before


def read_judgments():
    verdicts = {}
    if JUDGMENTS.exists():
        for line in JUDGMENTS.read_text("utf-8").splitlines():
            record = json.loads(line)
            verdicts[record["title"], record["label"]] = record["verdict"]
    return verdicts


def sample_keys(papers):
    machine_learning = [key for key, (_, _, ml) in papers.items() if ml]
    machine_learning.sort(key=lambda key: hashlib.sha256(key.encode()).hexdigest())
    return machine_learning[:SAMPLE_SIZE]


def escaped(text):
    return text.replace("|", "\\|")


def report(papers, old, new, verdicts, revision):
    """The counts and the judged sample, as Markdown."""
    sample = sample_keys(papers)
    rows = []
    tally = {"old": collections.Counter(), "new": collections.Counter()}
    for key in sample:
        title = papers[key][0]
        row = [title]
        for name, (made, counts, _) in (("old", old), ("new", new)):
            label = made[key]
            verdict = verdicts.get((title, label), "unjudged")
            shared = counts[label] > 1
            tally[name][verdict] += 1
            tally[name]["judged good"] += verdict == "good" and not shared
            row += [label, verdict + (" (shared)" if shared else "")]
        rows.append(row)
    machine_learning = sum(ml for *_, ml in papers.values())
    lines = [
        (
            f"{len(papers)} real papers ({machine_learning} machine-learning), labelled from "
            f"their abstracts by `{revision}` (old) and by this checkout (new); {len(sample)} "
            "machine-learning papers judged."
        ),
        "",
        "| | old | new |",
        "|---|---|---|",
    ]
    lines += automatic_counts(old, new)
    for verdict in (*VERDICTS, "unjudged"):
        lines.append(
            f"| judged sample: {verdict} | {tally['old'][verdict]} | {tally['new'][verdict]} |"
        )
    lines.append(
        f"| **judged good and not shared** | **{tally['old']['judged good']} of {len(sample)}** "
        f"| **{tally['new']['judged good']} of {len(sample)}** |"
    )
    lines += [
        "",
        "| true title | old label | verdict | new label | verdict |",
        "|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(escaped(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def more_counts(folder, old_rules):
    """The automatic counts on the titled records of the files in `folder`, as Markdown."""
    papers = real_papers([folder], [])
    texts = {key: plain_text(abstract) for key, (_, abstract, _) in papers.items()}
    old = measured(old_rules, texts, distinguish=False)
    new = measured(labels, texts, distinguish=True)
    files = ", ".join(f"`{path.name}`" for path in discover([folder]))
    lines = [
        "",
        f"### More real papers: {len(papers)} from {files}",
        "",
        "| | old | new |",
        "|---|---|---|",
        *automatic_counts(old, new),
        "",
        f"Most shared, old: {most_shared(old)}.",
        "",
        (
            "Most shared, new, before the build tells them apart: "
            f"{most_shared(measured(labels, texts, distinguish=False))}; after: "
            f"{most_shared(new)}."
        ),
    ]
    return "\n".join(lines) + "\n"


def unjudged(papers, old, new, verdicts):
    """JSON Lines of the sample's (title, label) pairs with no verdict yet."""
    seen = set()
    for key in sample_keys(papers):
        title = papers[key][0]
        for made, *_ in (old, new):
            pair = title, made[key]
            if pair not in verdicts and pair not in seen:
                seen.add(pair)
                yield json.dumps(
                    {"title": title, "label": made[key], "verdict": ""}, ensure_ascii=False
                )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", default=OLD_REVISION, help="git revision of the old rules")
    parser.add_argument("--write", type=Path, help="rewrite this Markdown file between its markers")
    parser.add_argument("--unjudged", action="store_true", help="list the labels to judge")
    parser.add_argument("--more", type=Path, help="a folder of more titled inputs to count on")
    args = parser.parse_args()
    old_rules = load_old_rules(args.old)
    papers = real_papers()
    texts = {key: plain_text(abstract) for key, (_, abstract, _) in papers.items()}
    old = measured(old_rules, texts, distinguish=False)
    new = measured(labels, texts, distinguish=True)
    verdicts = read_judgments()
    if args.unjudged:
        print("\n".join(unjudged(papers, old, new, verdicts)))
        return
    text = report(papers, old, new, verdicts, args.old)
    if args.more:
        text += more_counts(args.more, old_rules)
    if args.write:
        page = args.write.read_text("utf-8")
        before, _, rest = page.partition(BEGIN)
        _, _, after = rest.partition(END)
        args.write.write_text(f"{before}{BEGIN}\n{text}{END}{after}", "utf-8")
    else:
        print(text)


if __name__ == "__main__":
    main()
