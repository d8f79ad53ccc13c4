"""A deterministic corpus in the real seed formats, at any size, drawn from real papers.

Listing pages (论文检索, an optional track line, authors cut short with ` 等`) and author
profile pages (owner first, `A, B, C et al. · slug1, slug2`), made from the real public
metadata committed in tests/fixtures/real/sample/ (ICLR, ICML, NeurIPS, UAI and arXiv; origin
and licences in tests/fixtures/real/README.md):

- each abstract is a real abstract with about a quarter of its words (outside math) swapped
  for other words of the real abstracts, and the digits and one-letter symbols of its math
  redrawn, so it keeps the real text's sentences, markup and line breaks and is still a
  paper of its own; which kind of abstract (plain, hard-wrapped, with TeX macros, with
  `$...$` math) at the rates of the large real sample (`make_samples.py --large`), whose
  committed part over-represents the rare shapes;
- author lists as long as the large real sample's, of people whose names join a real given
  part (initials, parentheses, titles, case as written) to a real family name, reused with
  Zipf weights so that a catalog has about as many authors a paper as the real sample;
- the real track lines (ICLR keywords) on the real share of listing entries, the real
  affiliation slugs on profile pages;
- ~4% of papers again in a later listing page, re-spaced and with their full author list,
  so the loader's merge runs.

Same seed, same bytes.

Example:

    python bench/generate.py --papers 100000 --out /tmp/bench/corpus-100k
"""

import argparse
import itertools
import random
import re
import sys
import unicodedata
from bisect import bisect
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REAL_SAMPLE = ROOT / "tests" / "fixtures" / "real" / "sample"
sys.path.insert(0, str(ROOT))

from loader.read.lines import looks_like_name
from loader.read.sources import plan_inputs, read_source
from loader.records import Entry

SEED = 20240601
LISTING_SIZE = 1000  # entries per listing page
PROFILE_SIZE = 100  # entries per profile page
# pages that are profile pages: ~5% of the papers (the real sample: under 1%), so that a
# catalog has affiliations
PROFILE_SHARE = 0.35
DUPLICATE_SHARE = 0.04  # papers that appear again in a later listing page
LISTING_AUTHOR_LIMIT = 10  # listing pages cut longer lists short with 等
PROFILE_AUTHOR_LIMIT = 3  # profile pages show three names, then "et al."
# the large real sample's 14,005 entries (make_samples.py --large), by kind of abstract: with
# `$...$` math, with a TeX macro and no math, hard-wrapped with no markup, the rest
ABSTRACT_KINDS = {"math": 1260, "macro": 559, "wrapped": 423, "plain": 11763}
# ... by the number of authors they list (1 to 12)
AUTHOR_COUNTS = [959, 3929, 4153, 2650, 1237, 583, 258, 125, 49, 52, 5, 5]
TRACK_SHARE = 0.13  # of its listing entries with a track line: 1,283 of 9,716
# mentions of a person spelled another way, as real sources do (accents dropped, a hyphen as
# a space, a family name in capitals): the name rules merge them
VARIANT_SHARE = 0.01
WORD_SWAP_SHARE = 0.4
SYMBOL_SWAP_SHARE = 0.5
# about 1.4 distinct authors a paper, as the large real sample (19,268 for 13,851 papers)
PEOPLE_PER_PAPER = 2
AUTHOR_EXPONENT = 0.55
MATH = re.compile(r"(\$[^$]*\$)")
WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")
LETTER = re.compile(r"[^\W\d_]")
# a name a paper gives its method or data: CamelCase (NoisyNet, RevNet) or capitals (ADMM)
NAMED = re.compile(
    r"(?<![\\A-Za-z])(?:[A-Z]+[a-z]+[A-Z][A-Za-z]*|[a-z]+[A-Z][A-Za-z]*|[A-Z]{2,}[a-z]*)(?![A-Za-z])"
)
SYMBOL = re.compile(r"(?<![\\A-Za-z])[A-Za-z](?![A-Za-z])|[0-9]")


def abstract_kind(abstract):
    if "$" in abstract:
        return "math"
    if "\\" in abstract:
        return "macro"
    return "wrapped" if "\n" in abstract else "plain"


def read_real(folder=REAL_SAMPLE):
    """The real entries of the committed sample."""
    entries = []
    for file in plan_inputs([folder]):
        _, items = read_source(file)
        entries += [item for item in items if isinstance(item, Entry) and len(item.abstract) > 100]
    return entries


def zipf_cumulative(size, exponent, offset=0):
    """Cumulative Zipf(-Mandelbrot) weights for bisect-based sampling of ranks 0..size-1; an
    offset flattens the head."""
    return list(itertools.accumulate(1.0 / (rank + 1 + offset) ** exponent for rank in range(size)))


def draw(rng, cumulative):
    return bisect(cumulative, rng.random() * cumulative[-1])


class Corpus:
    """Everything random comes from one seeded generator, drawn in a fixed order."""

    def __init__(self, papers, seed=SEED):
        self.rng = random.Random(seed)
        real = read_real()
        self.abstracts = {kind: [] for kind in ABSTRACT_KINDS}
        for entry in real:
            self.abstracts[abstract_kind(entry.abstract)].append(entry.abstract)
        self.kinds = list(ABSTRACT_KINDS)
        self.kind_weights = list(itertools.accumulate(ABSTRACT_KINDS.values()))
        self.count_weights = list(itertools.accumulate(AUTHOR_COUNTS))
        self.words = [
            word
            for entry in real
            for part in MATH.split(entry.abstract)[::2]
            for word in WORD.findall(part)
        ]
        # "given family" names, a letter in each part (not PeerRead's `ping li 0001`); not
        # its lowercase names, which real sources give as whole lowercase lists, nor the
        # strings a source gives as one name that read as no person's ('Takehisa Nishida &
        # Kazuo': given parts a profile page's first line would be refused with)
        names = [name.strip().rsplit(" ", 1) for entry in real for name in entry.authors]
        names = sorted(
            {
                (given, family)
                for given, family in (n for n in names if len(n) == 2)
                if LETTER.search(given)
                and family[:1].isupper()
                and not given.islower()
                and looks_like_name(f"{given} {family}")
            }
        )
        self.given = [given for given, _ in names]
        self.family = sorted({family for _, family in names})
        # `Area · Subarea` lines: an area alone reads as one only for a venue that has it
        self.tracks = [entry.track for entry in real if entry.track and " · " in entry.track]
        self.slugs = sorted({slug for entry in real for slug in entry.affiliations})
        self.author_pool = max(200, papers * PEOPLE_PER_PAPER)
        self.author_weights = zipf_cumulative(self.author_pool, AUTHOR_EXPONENT)
        self.people = {}

    def author_name(self, rank):
        """Rank -> a stable person: a real given part and a real family name, in capitals
        where the given part is."""
        name = self.people.get(rank)
        if name is None:
            given = self.given[self.rng.randrange(len(self.given))]
            name = f"{given} {self.family[self.rng.randrange(len(self.family))]}"
            if given.isupper():
                name = name.upper()
            self.people[rank] = name
        return name

    def varied(self, text):
        """A real text's words swapped in part for other real words, its math symbols
        redrawn: the same shapes, another paper."""
        parts = MATH.split(text)
        names = {}  # each name the paper gives, renamed alike wherever it recurs
        for index, part in enumerate(parts):
            if index % 2:
                parts[index] = SYMBOL.sub(self.other_symbol, part)
            else:
                part = NAMED.sub(lambda match: self.other_name(match.group(), names), part)
                parts[index] = WORD.sub(self.other_word, part)
        return "".join(parts)

    def spelled(self, name):
        """Most mentions spell a name one way; a few another way that names the same person."""
        if self.rng.random() >= VARIANT_SHARE:
            return name
        plain = "".join(
            c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c)
        )
        if plain != name:
            return plain
        if "-" in name:
            return name.replace("-", " ")
        given, _, family = name.rpartition(" ")
        return f"{given} {family.upper()}"

    def other_name(self, name, names):
        """A name of the same shape: two real words in CamelCase, or as many capitals."""
        if name not in names:
            capitals = len(name) - len(name.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
            if capitals >= 2:
                letters = "".join(chr(65 + self.rng.randrange(26)) for _ in range(capitals))
                names[name] = letters + name[capitals:]
            else:
                first, second = (self.words[self.rng.randrange(len(self.words))] for _ in "ab")
                names[name] = first.capitalize() + second.capitalize()
        return names[name]

    def other_word(self, match):
        word = match.group()
        # capitalized words stay (a sentence's first word, a proper name): a short line of
        # a hard-wrapped abstract then never reads as a line of names
        if not word.islower() or self.rng.random() >= WORD_SWAP_SHARE:
            return word
        return self.words[self.rng.randrange(len(self.words))].lower()

    def other_symbol(self, match):
        symbol = match.group()
        if self.rng.random() >= SYMBOL_SWAP_SHARE:
            return symbol
        if symbol.isdigit():
            return str(self.rng.randrange(10))
        letter = chr(ord("a") + self.rng.randrange(26))
        return letter.upper() if symbol.isupper() else letter

    def abstract(self):
        kind = self.kinds[bisect(self.kind_weights, self.rng.random() * self.kind_weights[-1])]
        templates = self.abstracts[kind] or self.abstracts["plain"]
        return self.varied(templates[self.rng.randrange(len(templates))])

    def authors(self, owner=None):
        count = bisect(self.count_weights, self.rng.random() * self.count_weights[-1]) + 1
        ranks = [draw(self.rng, self.author_weights) for _ in range(count)]
        names = list(dict.fromkeys(self.author_name(rank) for rank in ranks))
        if owner is not None:
            if owner in names:
                names.remove(owner)
            names.insert(self.rng.randrange(len(names) + 1), owner)
        return names

    def affiliations(self):
        count = self.rng.choice([0, 1, 1, 1, 2])
        return sorted({self.slugs[self.rng.randrange(len(self.slugs))] for _ in range(count)})

    def track(self):
        if self.rng.random() >= TRACK_SHARE:
            return None
        return self.tracks[self.rng.randrange(len(self.tracks))]


def listing_entry(corpus, paper, respaced=False):
    authors = [corpus.spelled(name) for name in paper["authors"]]
    line = ", ".join(authors[:LISTING_AUTHOR_LIMIT])
    if len(authors) > LISTING_AUTHOR_LIMIT:
        line += " 等"
    abstract = paper["abstract"].replace(". ", ".  ") if respaced else paper["abstract"]
    track = f"{paper['track']}\n\n" if paper["track"] else ""
    return f"{track}{line}\n\n{abstract}\n"


def profile_entry(corpus, paper):
    authors = [corpus.spelled(name) for name in paper["authors"]]
    line = ", ".join(authors[:PROFILE_AUTHOR_LIMIT])
    if len(authors) > PROFILE_AUTHOR_LIMIT:
        line += " et al."
    if paper["affiliations"]:
        line += " · " + ", ".join(paper["affiliations"])
    return f"{line}\n\n{paper['abstract']}\n"


def generate(papers, out, seed=SEED):
    """Write the corpus into `out`; returns (files written, entries written)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    corpus = Corpus(papers, seed)
    rng = corpus.rng
    files = entries = made = 0
    listings = profiles = 0
    pending = []  # papers to appear again in a later listing page
    while made < papers:
        if rng.random() < PROFILE_SHARE:
            owner = corpus.author_name(draw(rng, corpus.author_weights[:2000]))
            blocks = [owner + "\n"]
            for _ in range(min(PROFILE_SIZE, papers - made)):
                paper = {
                    "abstract": corpus.abstract(),
                    "authors": corpus.authors(owner),
                    "affiliations": corpus.affiliations(),
                    "track": corpus.track(),
                }
                made += 1
                blocks.append(profile_entry(corpus, paper))
                if rng.random() < DUPLICATE_SHARE:
                    pending.append(paper)
            profiles += 1
            name = f"profile_{profiles:06d}.txt"
        else:
            blocks = ["论文检索\n"]
            while pending and len(blocks) < LISTING_SIZE // 10:
                blocks.append(listing_entry(corpus, pending.pop(), respaced=True))
            for _ in range(min(LISTING_SIZE, papers - made)):
                paper = {
                    "abstract": corpus.abstract(),
                    "authors": corpus.authors(),
                    "affiliations": [],
                    "track": corpus.track(),
                }
                made += 1
                blocks.append(listing_entry(corpus, paper))
                if rng.random() < DUPLICATE_SHARE / 4:
                    pending.append(paper)
            listings += 1
            name = f"listing_{listings:06d}.txt"
        (out / name).write_text("\n".join(blocks), encoding="utf-8")
        files += 1
        entries += len(blocks) - 1
    return files, entries


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, required=True, help="distinct papers to write")
    parser.add_argument("--out", required=True, help="folder to write the files into")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    files, entries = generate(args.papers, args.out, args.seed)
    print(f"{args.out}: {files} files, {entries} entries, {args.papers} distinct papers")


if __name__ == "__main__":
    main()
