"""A deterministic synthetic corpus in the real seed formats, at any size.

Listing pages (论文检索, `Area · Subarea`, authors with ` 等` when cut short) and author profile
pages (owner first, `A, B, C et al. · slug1, slug2`), with ~1.5 KB abstracts carrying some LaTeX
and Markdown markup, Zipf-distributed authors, affiliations and vocabulary, and a few papers that
appear in two files (re-spaced, cut short, with and without a track) so the loader's merge runs.

Example:

    python bench/generate.py --papers 100000 --out /tmp/bench/corpus-100k
"""

import argparse
import itertools
import random
from bisect import bisect
from pathlib import Path

SEED = 20240601
LISTING_SIZE = 1000  # entries per listing page
PROFILE_SIZE = 100  # entries per profile page
PROFILE_SHARE = 0.35  # papers first seen on a profile page
DUPLICATE_SHARE = 0.04  # papers that appear again in a later listing page
MARKUP_SHARE = 0.45  # seeds: 41 of 90 abstracts change when markup is removed
VARIANT_SHARE = 0.005  # author mentions spelled lowercase or decomposed
LISTING_AUTHOR_LIMIT = 10  # listing pages cut longer lists short with 等
PROFILE_AUTHOR_LIMIT = 3  # profile pages show three names, then "et al."

AREAS = {
    "Deep Learning": [
        "Large Language Models",
        "Attention Mechanisms",
        "Generative Models and Autoencoders",
        "Graph Neural Networks",
        "Robustness",
        "Theory",
        "Algorithms",
        "Everything Else",
    ],
    "Reinforcement Learning": [
        "Deep RL",
        "Batch/Offline",
        "Multi-agent",
        "Planning",
        "Online",
        "Everything Else",
    ],
    "Applications": [
        "Computer Vision",
        "Language, Speech and Dialog",
        "Health",
        "Chemistry, Physics, and Earth Sciences",
        "Robotics",
        "Time Series",
        "Everything Else",
    ],
    "Theory": ["Learning Theory", "Optimization", "Probabilistic Methods", "Game Theory"],
    "Optimization": ["Convex", "Non-Convex", "Stochastic", "Large Scale, Parallel and Distributed"],
    "Probabilistic Methods": [
        "Bayesian Models and Methods",
        "Variational Inference",
        "Monte Carlo and Sampling Methods",
        "Gaussian Processes",
    ],
    "Social Aspects": [
        "Accountability, Transparency, and Interpretability",
        "Fairness",
        "Privacy",
        "Safety",
        "Trustworthy Machine Learning",
    ],
    "General Machine Learning": [
        "Representation Learning",
        "Transfer, Multitask and Meta-learning",
        "Evaluation",
        "Sequential, Network, and Time Series Modeling",
        "Supervised Learning",
        "Unsupervised and Semi-supervised Learning",
    ],
}
TRACKS = [f"{area} · {subarea}" for area, subareas in AREAS.items() for subarea in subareas]

FIRST_NAMES = [
    "Wei",
    "Li",
    "Jun",
    "Hao",
    "Yang",
    "Xin",
    "Jie",
    "Yu",
    "Chen",
    "Lei",
    "Tao",
    "Bo",
    "Yi",
    "Ming",
    "Hui",
    "Jing",
    "Fang",
    "Lin",
    "Ying",
    "Kai",
    "Rui",
    "Zhen",
    "Anna",
    "Maria",
    "Laura",
    "Sarah",
    "Emma",
    "Julia",
    "Elena",
    "Sofia",
    "Clara",
    "Nina",
    "Eva",
    "Lena",
    "Mia",
    "Alice",
    "Hannah",
    "Marta",
    "John",
    "David",
    "Michael",
    "James",
    "Robert",
    "Daniel",
    "Thomas",
    "Peter",
    "Paul",
    "Mark",
    "Andrew",
    "Simon",
    "Martin",
    "Lukas",
    "Jonas",
    "Felix",
    "Max",
    "Leon",
    "Noah",
    "Adam",
    "Omar",
    "Ali",
    "Hassan",
    "Reza",
    "Amir",
    "Arjun",
    "Rahul",
    "Ravi",
    "Priya",
    "Anil",
    "Vikram",
    "Sanjay",
    "Hiroshi",
    "Takeshi",
    "Yuki",
    "Kenji",
    "Akira",
    "Haruto",
    "Sora",
    "Min-jun",
    "Seo-yeon",
    "Ji-ho",
    "Hyun-woo",
    "Tuan",
    "Minh",
    "Linh",
    "Pierre",
    "Antoine",
    "Louis",
    "Hugo",
    "Lucas",
    "Mathieu",
    "Nicolas",
    "Julien",
    "Marco",
    "Luca",
    "Giulia",
    "Matteo",
    "Pablo",
    "Diego",
    "Carlos",
    "Javier",
    "Miguel",
    "Ana",
    "Lucía",
    "Ivan",
    "Dmitry",
    "Sergey",
    "Olga",
    "Natalia",
    "Anton",
    "Pavel",
    "Tomasz",
    "Piotr",
    "Katarzyna",
    "Łukasz",
    "Jiří",
    "Zoë",
    "Chloé",
    "José",
    "Björn",
    "Søren",
    "Åsa",
    "Jürgen",
    "Müge",
    "Çağlar",
    "Gökhan",
    "Ömer",
    "Ilya",
]
SYLLABLES = [
    "ka",
    "ri",
    "to",
    "na",
    "mi",
    "se",
    "lo",
    "ve",
    "da",
    "ru",
    "chen",
    "zhang",
    "wang",
    "liu",
    "yang",
    "huang",
    "zhao",
    "wu",
    "zhou",
    "xu",
    "sun",
    "ma",
    "zhu",
    "hu",
    "guo",
    "he",
    "lin",
    "luo",
    "gao",
    "zheng",
    "liang",
    "xie",
    "song",
    "tang",
    "han",
    "feng",
    "deng",
    "cao",
    "peng",
    "zeng",
    "xiao",
    "tian",
    "dong",
    "pan",
    "yuan",
    "cai",
    "jiang",
    "yu",
    "du",
    "ye",
    "cheng",
    "wei",
    "su",
    "lu",
    "ding",
    "shen",
    "ren",
    "yao",
    "lo",
    "ber",
    "man",
    "son",
    "stein",
    "berg",
    "feld",
    "ova",
    "ski",
    "ko",
    "vic",
    "ez",
    "ar",
    "in",
    "el",
    "an",
    "or",
    "us",
    "is",
    "ta",
    "ne",
    "sa",
    "mo",
    "la",
    "ki",
    "ha",
    "ya",
]
COMMON_WORDS = [
    "model",
    "models",
    "data",
    "training",
    "neural",
    "network",
    "networks",
    "method",
    "methods",
    "approach",
    "performance",
    "results",
    "show",
    "propose",
    "proposed",
    "based",
    "large",
    "language",
    "task",
    "tasks",
    "deep",
    "framework",
    "learning",
    "problem",
    "problems",
    "algorithm",
    "algorithms",
    "using",
    "novel",
    "new",
    "existing",
    "learn",
    "representations",
    "representation",
    "prediction",
    "optimization",
    "generalization",
    "empirical",
    "theoretical",
    "analysis",
    "experiments",
    "benchmark",
    "benchmarks",
    "state-of-the-art",
    "efficient",
    "efficiency",
    "inference",
    "robust",
    "robustness",
    "distribution",
    "distributions",
    "gradient",
    "stochastic",
    "policy",
    "reinforcement",
    "agents",
    "reward",
    "convergence",
    "bounds",
    "sample",
    "complexity",
    "linear",
    "nonlinear",
    "kernel",
    "graph",
    "graphs",
    "attention",
    "transformer",
    "transformers",
    "diffusion",
    "generative",
    "adversarial",
    "loss",
    "function",
    "functions",
    "objective",
    "regularization",
    "supervised",
    "unsupervised",
    "self-supervised",
    "contrastive",
    "features",
    "feature",
    "embedding",
    "embeddings",
    "parameters",
    "scale",
    "scaling",
    "accuracy",
    "error",
    "estimation",
    "estimator",
    "uncertainty",
    "bayesian",
    "variational",
    "posterior",
    "prior",
    "sampling",
    "latent",
    "space",
    "dimension",
    "high-dimensional",
    "low-rank",
    "sparse",
    "matrix",
    "tensor",
    "convex",
    "non-convex",
    "online",
    "offline",
    "adaptive",
    "adaptation",
    "transfer",
    "domain",
    "multi-task",
    "meta-learning",
    "few-shot",
    "zero-shot",
    "fine-tuning",
    "pretraining",
    "pretrained",
    "alignment",
    "reasoning",
    "vision",
    "image",
    "images",
    "video",
    "text",
    "speech",
    "multimodal",
    "retrieval",
    "generation",
    "privacy",
    "fairness",
    "safety",
    "interpretability",
    "causal",
    "structure",
    "structured",
    "dynamics",
    "temporal",
    "sequential",
    "memory",
    "computational",
    "cost",
    "costs",
    "real-world",
    "synthetic",
    "datasets",
    "dataset",
    "evaluation",
    "metric",
    "metrics",
    "baseline",
    "baselines",
]
GLUE = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "a",
    "we",
    "that",
    "is",
    "for",
    "on",
    "with",
    "this",
    "by",
    "are",
    "as",
    "our",
    "which",
    "from",
    "be",
    "can",
    "it",
    "at",
    "an",
    "these",
    "both",
    "while",
    "than",
    "not",
    "into",
    "also",
    "under",
    "over",
    "such",
    "more",
    "their",
    "its",
    "has",
    "have",
    "between",
]
MARKUP = [
    "$O(n \\log n)$",
    "$\\varepsilon$",
    "$1/\\varepsilon^2$",
    "$k$",
    "$\\ell_\\infty$",
    "$\\alpha = 0.5$",
    "\\emph{{{word}}}",
    "\\textbf{{{word}}}",
    "*{word}*",
    "`{word}`",
    "{number}\\%",
    "**{Upper}**{rest}",
]


def zipf_cumulative(size, exponent, offset=0):
    """Cumulative Zipf(-Mandelbrot) weights for bisect-based sampling of ranks 0..size-1; an
    offset flattens the head."""
    return list(itertools.accumulate(1.0 / (rank + 1 + offset) ** exponent for rank in range(size)))


def draw(rng, cumulative):
    return bisect(cumulative, rng.random() * cumulative[-1])


def make_word(rng, syllables=(2, 4)):
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(*syllables)))


class Corpus:
    """Everything random comes from one seeded generator, drawn in a fixed order."""

    def __init__(self, papers, seed=SEED):
        self.rng = random.Random(seed)
        self.total = papers
        # ~0.75 distinct authors per paper; the most prolific on ~0.25% of papers
        self.author_pool = max(200, papers)
        self.author_weights = zipf_cumulative(self.author_pool, 0.95, offset=200)
        self.surnames = self.make_unique_words(max(400, self.author_pool // 40), (1, 3))
        slugs = ["microsoft-research", "pku", "stanford", "mit", "tsinghua", "cmu", "google"]
        slugs += [f"univ-{w}" for w in self.make_unique_words(3000, (2, 3))]
        self.slugs = slugs
        self.slug_weights = zipf_cumulative(len(slugs), 1.1)
        self.track_weights = zipf_cumulative(len(TRACKS), 0.8)
        self.vocabulary = COMMON_WORDS + self.make_unique_words(30000, (2, 4))
        self.vocabulary_weights = zipf_cumulative(len(self.vocabulary), 1.0)
        self.sentences = [self.make_sentence() for _ in range(20000)]

    def make_unique_words(self, count, syllables):
        words, seen = [], set()
        while len(words) < count:
            word = make_word(self.rng, syllables)
            if word not in seen and len(word) > 2:
                seen.add(word)
                words.append(word)
        return words

    def make_sentence(self):
        rng, words = self.rng, []
        for _ in range(rng.randint(14, 30)):
            if rng.random() < 0.45:
                words.append(rng.choice(GLUE))
            else:
                words.append(self.vocabulary[draw(rng, self.vocabulary_weights)])
        words[0] = words[0].capitalize()
        return " ".join(words) + "."

    def author_name(self, rank):
        """Rank -> a stable person name; about forty first names share each surname."""
        first = FIRST_NAMES[(rank * 7919) % len(FIRST_NAMES)]
        surname = self.surnames[rank % len(self.surnames)].capitalize()
        middle = rank // len(self.surnames)
        if middle >= len(FIRST_NAMES) // 2:
            surname = f"{surname}-{self.surnames[middle % len(self.surnames)].capitalize()}"
        elif middle:
            surname = f"{chr(ord('A') + middle % 26)}. {surname}"
        return f"{first} {surname}"

    def spelled(self, name):
        """Most mentions spell a name one way; a few in lowercase or decomposed Unicode."""
        if self.rng.random() < VARIANT_SHARE:
            return name.lower() if self.rng.random() < 0.5 else name.replace("ü", "u\u0308")
        return name

    def method_name(self, number):
        """A unique method name per paper: a rare search term and a derived label."""
        digits = []
        while True:
            number, digit = divmod(number, len(SYLLABLES))
            digits.append(SYLLABLES[digit])
            if not number:
                break
        word = "".join(digits)
        return f"{word[0].upper()}{word[1:]}{self.rng.choice(['Net', 'Former', 'GAN', 'RL'])}"

    def markup(self):
        template = self.rng.choice(MARKUP)
        word = self.rng.choice(COMMON_WORDS)
        return template.format(
            word=word,
            number=f"{self.rng.randint(1, 99)}.{self.rng.randint(0, 99)}",
            Upper=word[0].upper(),
            rest=word[1:],
        )

    def abstract(self, number):
        rng = self.rng
        sentences = rng.choices(self.sentences, k=max(4, int(rng.gauss(9, 2))))
        name = self.method_name(number)
        expansion = " ".join(w.capitalize() for w in rng.choices(COMMON_WORDS, k=3))
        sentences.insert(
            1, f"We propose {name} ({expansion}), a {rng.choice(COMMON_WORDS)} method."
        )
        if rng.random() < MARKUP_SHARE:
            for _ in range(rng.randint(1, 3)):
                index = rng.randrange(len(sentences))
                sentences[index] = f"{sentences[index][:-1]} with {self.markup()}."
        return " ".join(sentences)

    def authors(self, owner=None):
        count = min(15, max(1, int(self.rng.expovariate(1 / 4.5)) + 1))
        ranks = [draw(self.rng, self.author_weights) for _ in range(count)]
        names = list(dict.fromkeys(self.author_name(rank) for rank in ranks))
        if owner is not None:
            if owner in names:
                names.remove(owner)
            names.insert(self.rng.randrange(len(names) + 1), owner)
        return names

    def affiliations(self):
        count = self.rng.choice([0, 1, 1, 1, 2, 2, 3])
        return sorted({self.slugs[draw(self.rng, self.slug_weights)] for _ in range(count)})

    def track(self):
        return TRACKS[draw(self.rng, self.track_weights)]


def listing_entry(corpus, paper, respaced=False):
    authors = [corpus.spelled(name) for name in paper["authors"]]
    line = ", ".join(authors[:LISTING_AUTHOR_LIMIT])
    if len(authors) > LISTING_AUTHOR_LIMIT:
        line += " 等"
    abstract = paper["abstract"].replace(". ", ".  ") if respaced else paper["abstract"]
    return f"{paper['track']}\n\n{line}\n\n{abstract}\n"


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
                    "abstract": corpus.abstract(made),
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
                    "abstract": corpus.abstract(made),
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
