"""The real-data figures in the README: build a folder of real scraped pages and report.

    python bench/real_sample.py FOLDER [--db /tmp/real/catalog.db]

FOLDER: pages written by tests/fixtures/real/make_samples.py --large (ICLR, ICML, NeurIPS, UAI
and arXiv metadata as listing pages, profile pages and JSON Lines, with a sources.yml). Prints
problems, papers, authors, names merged, versions merged, display names, abstracts with math
and how many read cleanly, and the build's wall and CPU time.
"""

import argparse
import re
import resource
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loader.rules.markup import render_html
from loader.rules.names import is_well_cased

# a macro name glued into the search text ("mathcalO", "frac1ε") or left as a word ("textrm")
LEFTOVER_MACRO = re.compile(
    r"(?:mathcal|mathbb|mathrm|mathbf|frac|textrm|textit|textbf|widetilde|widehat|varepsilon"
    r"|nicefrac|newcommand|left|right)(?=[A-Z0-9(\[{]|\b)"
)
RAW_TEX = re.compile(r"\\[a-zA-Z]+")


def build(folder, db):
    started, before = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    command = [sys.executable, "-c", "from loader.cli import cli; cli()", "build", str(folder)]
    command += ["--db", str(db)]
    subprocess.run(
        [*command, "--skip-invalid"], capture_output=True, text=True, check=True, cwd=ROOT
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return time.monotonic() - started, cpu


def html_is_clean(abstract):
    html = render_html(abstract)
    outside_math = re.sub(r"<math.*?</math>", "", html, flags=re.DOTALL)
    return "<math" in html and not RAW_TEX.search(outside_math) and "$" not in outside_math


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder")
    parser.add_argument("--db", default="/tmp/real-sample/catalog.db")
    args = parser.parse_args()
    Path(args.db).parent.mkdir(parents=True, exist_ok=True)
    wall, cpu = build(args.folder, args.db)
    db = sqlite3.connect(args.db)
    one = lambda sql: db.execute(sql).fetchone()[0]
    names = db.execute("select id, name from authors").fetchall()
    variants = {}
    for author_id, name in db.execute("select author_id, name from author_variants"):
        variants.setdefault(author_id, []).append(name)
    badly_shown = sum(
        1
        for author_id, name in names
        if not is_well_cased(name) and any(is_well_cased(v) for v in variants.get(author_id, []))
    )
    math = db.execute("select abstract, abstract_text from papers where abstract like '%$%'")
    math = math.fetchall()
    clean_text = sum(1 for _, text in math if not LEFTOVER_MACRO.search(text) and "\\" not in text)
    clean_html = sum(1 for abstract, _ in math if html_is_clean(abstract))
    print(
        f"papers: {one('select count(*) from papers')}, authors: {one('select count(*) from authors')}"
        f", tracks: {one('select count(*) from tracks')}"
    )
    print(f"build: {wall:.1f} s wall, {cpu:.1f} s CPU (parsing workers included)")
    print(f"problems: {one('select count(*) from load_problems')}")
    print(f"versions merged into another paper: {one('select count(*) from paper_aliases')}")
    print(f"authors with several spellings merged: {len(variants)}")
    print(f"authors shown SHOUTING or lowercase while a well-cased spelling exists: {badly_shown}")
    print(
        f"abstracts with $: {len(math)}; search text without macro names: {clean_text}; "
        f"page with MathML and no raw TeX: {clean_html}"
    )
    print(
        f"venues: {db.execute('select venue, count(*) from papers group by venue order by 2 desc').fetchall()}"
    )


if __name__ == "__main__":
    main()
