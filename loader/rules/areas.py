"""Whether a line reads as a conference's area name ("Planning, Routing, and Scheduling",
"Knowledge Representation & Reasoning") rather than a list of people.

A bare area where a track stands has the shape of an authors line when it holds a comma or an
`&`: what tells them apart is its words. They are read against the words of the area names
real conferences use (KNOWN_AREAS, each list's origin below), so a line whose every word is an
area word is an area ("Search, Optimization, and Games"); a list shape with a lower-case
connective ("X, Y, and Z", "X & Y") is one when at least half its words are. People's names
are not made of these words: tests/test_areas.py checks it on every author line of the real
samples. Pure: no I/O.
"""

import functools
import re
import unicodedata

# The area lists of the venues in the fixtures and seeds, as the venues write them:
# ICML / NeurIPS subject areas ("Area · Subarea", the seed listing pages), AAAI 2022 and IJCAI
# 2021-2024 primary areas and IJCAI tracks, ACM MM 2024 areas (papercopilot/paperlists,
# tests/fixtures/real/parse/tracks_area_lists.txt), ICLR 2024-2026 primary areas (ICLR's call
# for papers; Paper Copilot's `primary_area`).
KNOWN_AREAS = (
    # ICML / NeurIPS subject areas
    "Deep Learning", "Algorithms", "Attention Mechanisms", "Everything Else",
    "Generative Models and Autoencoders", "Graph Neural Networks", "Large Language Models",
    "Robustness", "Self-Supervised Learning", "Sequential Models, Time series", "Theory",
    "Foundation Models", "Applications", "Computer Vision", "Genetics, Cell Biology, etc",
    "Health / Medicine", "Language, Speech and Dialog", "Neuroscience, Cognitive Science",
    "Physics", "Robotics", "Time Series", "Chemistry, Drug Discovery", "Social Aspects",
    "Accountability, Transparency, and Interpretability", "Fairness", "Privacy", "Safety",
    "Security", "Trustworthy Machine Learning", "Optimization", "Convex",
    "Discrete and Combinatorial Optimization", "First-order", "Large Scale, Parallel and Distributed",
    "Learning for Optimization", "Non-Convex", "Stochastic", "Zero-order and Black-box Optimization",
    "Bilevel optimization", "Sampling and Optimization", "Reinforcement Learning", "Batch/Offline",
    "Deep RL", "Function Approximation", "Inverse", "Multi-agent", "Online", "Planning",
    "Policy Search", "Active Learning and Interactive Learning",
    "Domain Adaptation and Transfer Learning", "Game Theory", "Learning Theory",
    "Online Learning and Bandits", "Probabilistic Methods", "Reinforcement Learning and Planning",
    "Bayesian Models and Methods", "Gaussian Processes", "Graphical Models",
    "Monte Carlo and Sampling Methods", "Variational Inference", "General Machine Learning",
    "Causality", "Clustering", "Evaluation", "Hardware and Systems", "Kernel methods",
    "Online Learning, Active Learning and Bandits", "Representation Learning", "Scalable Algorithms",
    "Sequential, Network, and Time Series Modeling", "Supervised Learning",
    "Transfer, Multitask and Meta-learning", "Unsupervised and Semi-supervised Learning",
    "Miscellaneous Aspects of Machine Learning",
    # AAAI 2022 primary areas
    "Cognitive Modeling & Cognitive Systems", "Computer Vision I", "Computer Vision II",
    "Computer Vision III", "Constraint Satisfaction and Optimization",
    "Data Mining and Knowledge Management", "Domain(s) Of Application",
    "Game Theory and Economic Paradigms", "Humans and AI", "Intelligent Robotics",
    "Knowledge Representation and Reasoning", "Machine Learning I", "Machine Learning II",
    "Machine Learning III", "Multiagent Systems", "Philosophy and Ethics of AI",
    "Planning, Routing, and Scheduling", "Reasoning under Uncertainty", "Search and Optimization",
    "Speech and Natural Language Processing",
    # IJCAI 2021-2024 primary areas and tracks
    "AI Ethics", "AI Ethics, Trust, Fairness", "Agent-based and Multi-agent Systems",
    "Constraints and SAT", "Data Mining", "Demos", "Exhibits", "Heuristic Search and Game Playing",
    "Machine Learning", "Machine Learning Applications", "Multidisciplinary Topics and Applications",
    "Natural Language Processing", "Planning and Scheduling", "Projects", "Research Papers", "Search",
    "Uncertainty in AI", "AI and Arts", "AI for Good", "AI, Arts & Creativity", "Demo Track",
    "Doctoral Consortium", "Early Career", "Human-Centred AI", "Journal Track", "Late Papers",
    "Sister Conferences Best Papers", "Special Track on AI in FinTech",
    "Special Track on AI, the Arts and Creativity", "Survey Track",
    # ACM MM 2024 areas
    "[Content] Media Interpretation", "[Content] Multimodal Fusion", "[Content] Vision and Language",
    "[Engagement] Emotional and Social Signals", "[Engagement] Multimedia Search and Recommendation",
    "[Engagement] Summarization, Analytics, and Storytelling", "[Experience] Art and Culture",
    "[Experience] Interactions and Quality of Experience", "[Experience] Multimedia Applications",
    "[Generation] Generative Multimedia", "[Generation] Multimedia Foundation Models",
    "[Generation] Social Aspects of Generative AI", "[Systems] Data Systems Management and Indexing",
    "[Systems] Systems and Middleware", "[Systems] Transport and Delivery",
    # ICLR 2024-2026 primary areas
    "unsupervised, self-supervised, semi-supervised, and supervised representation learning",
    "transfer learning, meta learning, and lifelong learning", "reinforcement learning",
    "representation learning for computer vision, audio, language, and other modalities",
    "applications to computer vision, audio, language, and other modalities",
    "metric learning, kernel learning, and sparse coding",
    "probabilistic methods (Bayesian methods, variational inference, sampling, UQ, etc.)",
    "generative models", "causal reasoning", "optimization", "learning theory",
    "learning on graphs and other geometries & topologies",
    "learning on time series and dynamical systems",
    "societal considerations including fairness, safety, privacy",
    "alignment, fairness, safety, privacy, and societal considerations",
    "foundation or frontier models, including LLMs", "datasets and benchmarks",
    "infrastructure, software libraries, hardware, etc.",
    "infrastructure, software libraries, hardware, systems, etc.",
    "neurosymbolic & hybrid AI systems (physics-informed, logic & formal reasoning, etc.)",
    "applications to robotics, autonomy, planning",
    "applications to neuroscience & cognitive science",
    "applications to physical sciences (physics, chemistry, biology, etc.)",
    "visualization or interpretation of learned representations",
    "interpretability and explainable AI", "general machine learning (i.e., none of the above)",
    "other topics in machine learning (i.e., none of the above)",
)  # fmt: skip

# words that join an area's words and tell nothing by themselves
CONNECTIVES = frozenset(
    ("and", "or", "of", "for", "in", "on", "the", "to", "a", "an", "with", "under", "etc", "i", "e")
)
WORD = re.compile(r"[^\W\d_]+")
# "X, Y, and Z", "X, Y or Z", "X & Y": the connective written in lower case, as a list of
# topics writes it (a list of names joins them with a comma, at most with one "and")
LIST_SHAPE = re.compile(r",\s*(?:and|or)\s|\s&\s")
# an initial ("J.", "M.-L.") is a person's, never an area's
INITIAL = re.compile(r"(?<![^\W\d_])(?<!\.)(?!i\.e\.|e\.g\.)[^\W\d_]\.")


# the same words recur on a page: each is read once while among the last this many
STEM_CACHE_SIZE = 4096


@functools.lru_cache(maxsize=STEM_CACHE_SIZE)
def word_stem(word: str) -> str:
    """A word as the vocabulary holds it: case folded, accents off, a plural's `s` dropped
    ("Games" -> "game", "Systems" -> "system")."""
    word = word.casefold()
    if not word.isascii():
        word = unicodedata.normalize("NFKD", word)
        word = "".join(c for c in word if not unicodedata.combining(c))
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


AREA_WORDS = frozenset(
    word_stem(word)
    for area in KNOWN_AREAS
    for word in WORD.findall(area)
    if word.casefold() not in CONNECTIVES
)


def reads_as_area(text: str) -> bool:
    """Whether a line is an area name: all its words are area words, or it has the shape of a
    list of topics and at least half its words are. Never with an initial in it."""
    if INITIAL.search(text):
        return False
    list_shape = LIST_SHAPE.search(text) is not None
    known = content = 0
    for word in WORD.findall(text):
        stem = word_stem(word)
        if stem in CONNECTIVES:
            continue
        content += 1
        if stem in AREA_WORDS:
            known += 1
        elif not list_shape:
            return False  # most lines tried (names) end at their first word
    return content > 0 and 2 * known >= content  # without a list shape: all of them
