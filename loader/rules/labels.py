"""A label for a paper whose source gives no title, read from the abstract's plain text.

The label names the method the paper introduces ('NorMuon: Neuron-wise Normalized Muon'), found
in the sentence where the authors introduce their work ('we propose', 'this paper presents',
'called', 'dubbed'). A name the paper only mentions is not its method: one that appears before
that sentence (background: 'Generative adversarial networks (GANs) ...'), a plural class of
models ('LLMs', 'GANs'), or one after 'of', 'than', 'over', 'such as' ('a variant of SGD').
An expansion that is a citation ('Richtárik et al, 2021') is dropped. With no name, the label
is what the authors say they introduce ('A simple nearest-neighbor approach that ...'), else the
first sentence, always cut at a word and ending with '…' when cut.
"""

import re
from collections.abc import Collection, Iterable, Iterator, Sequence

from loader.rules.markup import collapse_spaces, holds_any

LABEL_LENGTH = 90
# a sentence ends at '. ' before a capital, but not after 'et al.' or 'e.g.'
# (the mark is matched, not looked behind for, so the search skips to the next '.', '!' or '?'
# instead of trying the lookbehinds at every character; split_sentences puts it back on its
# sentence)
SENTENCE_END = re.compile(
    r"([.!?])(?<!\bet al\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<!\bcf\.)"
    r"\s+(?=[A-Z(\"“])"
)
# '(Kakade et al., 2008)', '[12]': a citation is never part of a label
# (drop_citations also drops the whitespace before one: a leading `\s*` here would make the
# search try every space of an abstract)
CITATION_MARK = re.compile(
    r"\([^()]*(?:\bet al\b|\b(?:19|20)\d\d[a-z]?\b)[^()]*\)"
    r"|\[[^\[\]]*(?:\bet al\b|\b(?:19|20)\d\d[a-z]?\b)[^\[\]]*\]|\[[\d,\s\-–]+\]"
)
# every CITATION_MARK holds one of these: 'et al', a year's first two digits, or is in
# brackets (four needles, not 'et al', '[' and every digit, which would be ten searches more);
# a mark in parentheses holds one between them (may_cite)
CITATION_NEEDS = ("et al", "[", "19", "20")
INTRO = re.compile(
    r"\b(?:we|this (?:paper|work|article|study|note)|our (?:work|paper))\b"
    r"(?:[^.;]|\.(?=\d)){0,200}?"  # '... near 0.5 ..., and propose'
    r"(?<!-)\b(?:propos|introduc|present|develop|design|devis|formulat|describ|offer|build|creat|"
    r"construct|releas|contribut)\w*\b"
    r"(?!\s+(?:by|upon|on|to|from)\b)(?!\s+in\s+(?!this\b))",  # not 'proposed by [12]'
    re.IGNORECASE,
)
# words without which INTRO and NAMING cannot match (lowercase): a sentence of ASCII text
# holding none of them is passed over without the case-insensitive search, the slow part
INTRO_WORDS = ("we", "this ", "our ")
INTRO_VERBS = (
    "propos", "introduc", "present", "develop", "design", "devis", "formulat", "describ",
    "offer", "build", "creat", "construct", "releas", "contribut",
)  # fmt: skip
NAMING_WORDS = (
    "called", "named", "dubbed", "termed", "coined", "entitled", "known as", "we call",
    "we name", "we dub", "we term", "we refer to", "the proposed", "our ",
)  # fmt: skip
INTRO_GROUPS, NAMING_GROUPS = (INTRO_WORDS, INTRO_VERBS), (NAMING_WORDS,)
NAMING = re.compile(
    r"\b(?:called|named|dubbed|termed|coined|entitled|known as|(?:we|which we) (?:call|name|dub|"
    r"term|refer to)|the proposed|our (?:\w+ )?(?:method|model|approach|algorithm|framework|"
    r"system|network|architecture|scheme|technique|tool)s?,?)(?:\s+as|\s+it)?\s+",
    re.IGNORECASE,
)
QUOTED = re.compile(r"[“”\"'‘’]([^“”\"'‘’]{2,40})[“”\"'’]")
QUOTED_NAME = re.compile(r"[^“\"]{0,40}?[“\"]([A-Z][^”\"]{1,40})[”\"]")
QUOTES = '“"'  # what every QUOTED_NAME match holds
# 'Self-Improving Collaborative GAN (SIC-GAN)': an expansion, then its name in parentheses
EXPANSION_THEN_NAME = re.compile(r"((?:[\w'’\-]+\s+){0,10}?[\w'’\-]+)\s*\(\s*")
# a method name: one token with two capitals, or a capital and a digit ('NorMuon', 'xRAG',
# 'ASAP.SGD', 'VSE++', '3C-GAN')
NAME = re.compile(r"(?<![\w.+\-])(?=[\w.+\-]*[A-Z][\w.+\-]*[A-Z0-9])[A-Za-z0-9][\w.+\-]*[\w+]")
# what every NAME match holds, without NAME's lookarounds at every character: a capital, then
# a capital or a digit in one word
MAY_NAME = re.compile(r"[A-Z]\S*?[A-Z0-9]")
# after naming words any capitalized word is a name ('called Autostacker')
NAMED_WORD = re.compile(r"[A-Za-z0-9][\w.+\-]*[\w+]")
PLURAL_CLASS = re.compile(r"[A-Z]{2,}s")  # GANs, LLMs, MLLMs: a kind of model
# words between the verb and the name that say it is not the paper's own ('to use', 'based on')
LEAD_STOPS = {
    "to", "of", "for", "with", "on", "in", "by", "from", "using", "via", "than", "over", "and",
    "or", "based", "under", "upon", "into", "such", "like", "that", "which", "how", "where",
}  # fmt: skip
HEAD_NOUNS = {
    "based", "model", "models", "method", "methods", "training", "framework", "architecture",
    "agent", "agents", "system", "systems", "approach", "algorithm", "algorithms", "layer",
    "layers", "policy", "loss", "objective", "setting", "settings", "task", "tasks", "style",
    "type", "fine", "inference", "backbone", "backbones", "module", "pipeline", "benchmark",
}  # fmt: skip
CAPITALIZED_RUN = re.compile(r"[A-Z][\w'’\-]*(?:\s+(?:of|for|and|in|with|[A-Z][\w'’\-]*))*")
APPOSITION = re.compile(r",\s+(?:a|an)\s|\s*:\s|\s+[–—]\s+(?:a|an)\s")
EXPLAINED = re.compile(r"\s*(?:\(|,|:\s|\s[–—-]\s|[.!?]?$)")
# 'a novel framework PROVEN' names it; 'an actor-critic conditional GAN' uses a kind of model
KIND_NOUNS = {
    "framework", "method", "model", "algorithm", "approach", "architecture", "network", "system",
    "tool", "technique", "scheme", "dataset", "benchmark", "library", "toolkit", "variant",
    "estimator", "optimizer", "module", "loss", "metric", "procedure", "language", "platform",
}  # fmt: skip
URL = re.compile(r"\S+://\S+|\bgithub\.com/\S+")
# a name right after one of these is one the paper compares with or builds on
NOT_OURS = re.compile(
    r"\b(?:of|than|over|like|from|on|upon|versus|vs\.?|against|e\.g\.,?|including|"
    r"such as|beyond|unlike|compared(?: to| with)?|using|existing|previous|prior|standard|"
    r"popular|vanilla|outperform\w*|beats?|improv\w* (?:on|over|upon))\s+(?:the\s+)?$",
    re.IGNORECASE,
)
# '\bet al\b|\b(?:19|20)\d\d\b|\[\d+\]', each branch starting with its first character
# (the word boundary checked behind it) so the search skips to an 'e', '1', '2' or '['
CITATION = re.compile(r"e(?<!\we)t al\b|1(?<!\w1)9\d\d\b|2(?<!\w2)0\d\d\b|\[\d+\]")
STOP_WORDS = {
    "a", "an", "the", "we", "our", "novel", "new", "called", "named", "dubbed", "termed",
    "propose", "proposed", "introduce", "present", "method", "is", "are", "this", "that",
    "which", "by", "as",
}  # fmt: skip
FUNCTION_WORDS = {"of", "and", "for", "to", "with", "in", "on", "via"}
# what follows 'we propose' when no thing is named: 'to', 'how', 'by', 'upon'...
NOT_INTRODUCED = {"that", "to", "how", "by", "upon", "on", "in", "of", "from", "with", "for", "as"}
# what describe and placed_as_ours look at after a name, compiled once (re.match looks the
# pattern up in its cache at every call, twice an entry)
PARENTHESIZED = re.compile(r"\s*\(([^()]{3,120})\)")
APPOSITION_DETAIL = re.compile(r"\s*[,:–—]\s+((?:a|an|the)\s.{5,})", re.IGNORECASE)
COLON_DETAIL = re.compile(r"\s*:\s+(.{5,})")
FOLLOWING_WORD = re.compile(r"\s+([a-z]+)")
OPENING = re.compile(r"^(?:[,:;]|\s)*(?:a|an|the)?\b", re.IGNORECASE)


def cut_at_word(text: str, limit: int = LABEL_LENGTH) -> str:
    """At most `limit` characters, cut between two words and ending with '…' when cut."""
    text = text.strip().rstrip(",;:.")
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0] if " " in text[: limit + 1] else text[:limit]
    return cut.rstrip(",;:.-–— ") + "…"


def expansion_before(sentence: str, start: int, name: str) -> str:
    """'Denoising Masked AutoEncoders (DMAE)': the words before '(' that spell the name."""
    capitals = max(1, sum(c.isupper() for c in name))
    words: list[str] = []
    letters = 0
    clauses = re.split(r"[(),;:]", sentence[:start])  # not past another parenthesis
    candidates = re.findall(r"[\w'’\-]+", clauses[-1])
    if len(clauses) == 1 and candidates:
        candidates[0] = candidates[0].lower()  # capitalized by its place, not as a name
    candidates = candidates[-8:]
    for word in reversed(candidates):
        if word.lower() in STOP_WORDS or not word[0].isalpha():
            break
        spelled = letters >= capitals and words[0][0].lower() == name[0].lower()
        if spelled and not (word[0].isupper() and words[0][0].isupper()):
            break  # 'the Reversible Residual Network (RevNet)': a capitalized run goes on
        words.insert(0, word)
        if word.lower() not in FUNCTION_WORDS:
            letters += sum(c.isupper() for c in word) or 1
    while words and words[0].lower() in FUNCTION_WORDS:
        words.pop(0)
    return " ".join(words)


def acronym_after(text: str, start: int) -> str | None:
    """'NAME: expansion' when text[start:] is an expansion followed by its name in parentheses
    whose first letter is the expansion's ('augment-REINFORCE-swap-merge (ARSM)')."""
    expansion = EXPANSION_THEN_NAME.match(text, start)
    name = expansion and NAME.match(text, expansion.end())
    if not expansion or not name or not re.match(r"\s*\)", text[name.end() :]):
        return None
    words = expansion.group(1)
    if words[0].lower() != name.group(0)[0].lower() or CITATION.search(words):
        return None
    return f"{name.group(0)}: {words}"


def describe(sentence: str, match: re.Match[str]) -> str:
    """The label for the name at `match`: its expansion or apposition when there is one."""
    name, after = match.group(0), sentence[match.end() :]
    explained = PARENTHESIZED.match(after)
    if explained and " " in explained.group(1).strip():
        detail = explained.group(1)  # 'NorMuon (Neuron-wise Normalized Muon)'
    elif sentence[: match.start()].rstrip().endswith("("):
        detail = expansion_before(sentence, sentence[: match.start()].rstrip().rfind("("), name)
    else:
        # the rest of the sentence: cut_at_word shortens it, with '…'
        apposition = APPOSITION_DETAIL.match(after)
        colon = COLON_DETAIL.match(after)
        found = apposition or colon
        detail = found.group(1) if found else ""
    detail = detail.strip().rstrip(".,")
    if not detail or CITATION.search(detail) or detail.lower() == name.lower():
        return name
    return f"{name}: {detail}"


def placed_as_ours(sentence: str, match: re.Match[str], start: int) -> bool:
    """Does the name stand where a sentence puts what it introduces? Right after the verb
    ('we propose a novel framework PROVEN'), as an apposition ('Jiffy, a simple metric',
    ', CrescendoNet,') or explained in parentheses."""
    before, after = sentence[start : match.start()], sentence[match.end() :]
    lead = before.replace(",", " ").split()
    following = FOLLOWING_WORD.match(after)
    if following and following.group(1) in HEAD_NOUNS:
        return False  # 'a multi-turn RL based training method': RL describes, it is no name
    common_noun = any(w.lower() in ("a", "an") for w in lead) and lead[-1].lower() not in KIND_NOUNS
    if len(lead) <= 5 and not common_noun and not any(w.lower() in LEAD_STOPS for w in lead):
        return True
    if before.rstrip().endswith("(") or APPOSITION.match(after):
        return True
    return before.rstrip().endswith((",", "–", "—", ":")) and bool(EXPLAINED.match(after))


def is_ours(sentence: str, match: re.Match[str], seen_before: Collection[str], start: int) -> bool:
    name, before = match.group(0), sentence[: match.start()].rstrip()
    if not placed_as_ours(sentence, match, start):
        return False
    if PLURAL_CLASS.fullmatch(name) or name.lower() in seen_before:
        return False
    if before.endswith("("):
        # 'a neural text to speech (TTS) method': a lower-case expansion names a field or a
        # kind of model, not the method
        expansion = expansion_before(sentence, len(before) - 1, name)
        if not expansion or expansion.islower():
            return False
    return not NOT_OURS.search(before.rstrip("( ") + " ")


def named_after(sentence: str, naming: re.Match[str], seen_before: Collection[str]) -> str | None:
    """The name a naming phrase ('which we call', 'dubbed', 'our method,') gives, or None."""
    rest = sentence[naming.end() :]
    quoted = QUOTED.match(rest)
    if quoted:  # 'which we term “Adaptive Radial-Angular Gradient Descent” or AdaRad'
        short = re.match(r"\s*(?:or|\()\s*", rest[quoted.end() :])
        name = short and NAME.match(rest, quoted.end() + short.end())
        if name:
            return f"{name.group(0)}: {quoted.group(1).strip()}"
        return quoted.group(1).strip()
    acronym = acronym_after(rest, 0)
    if acronym:
        return acronym
    word = NAMED_WORD.match(rest)
    if not word:
        return None
    if NAME.fullmatch(word.group(0)) and is_ours(rest, word, seen_before, 0):
        return describe(rest, word)
    # after 'called' a capitalized phrase is a name ('we term Robust Harmful Features');
    # after 'our' only a coined one
    if word.group(0)[0].isupper() and not naming.group(0).lower().startswith(("our", "the")):
        run = CAPITALIZED_RUN.match(rest)
        assert run is not None  # NAMED_WORD matched there, starting with a capital A-Z
        phrase = run.group(0)
        phrase = re.sub(r"\s+(?:of|for|and|in|with)$", "", phrase)
        return phrase if " " in phrase else describe(rest, word)
    return None


def may_hold(sentence: str, *word_groups: Sequence[str]) -> bool:
    """False only when the sentence is ASCII and lacks every word of one of the groups (for
    other text IGNORECASE matches more than str.lower finds: 'ı' is an 'i' to it)."""
    return lowered_may_hold(ascii_lower(sentence), word_groups)


def ascii_lower(sentence: str) -> str | None:
    """The sentence in lowercase where may_hold reads it so, else None."""
    return sentence.lower() if sentence.isascii() else None


def lowered_may_hold(lower: str | None, word_groups: Iterable[Sequence[str]]) -> bool:
    """may_hold of a sentence given as ascii_lower(sentence): named_method lowers each sentence
    once for its two prefilters."""
    if lower is None:
        return True
    for words in word_groups:  # loops, not all(any()): the generators cost as much as the tests
        if not holds_any(lower, words):
            return False
    return True


def names_in(sentence: str) -> list[str]:
    return NAME.findall(sentence) if MAY_NAME.search(sentence) else []


def named_method(sentences: Iterable[str]) -> str | None:
    """The method the paper introduces, as a label, or None."""
    seen_before: set[str] = set()  # names of the sentences before this one
    for sentence in sentences:
        lower = ascii_lower(sentence)
        intro = INTRO.search(sentence) if lowered_may_hold(lower, INTRO_GROUPS) else None
        namings = list(NAMING.finditer(sentence)) if lowered_may_hold(lower, NAMING_GROUPS) else []
        if not intro and not namings:
            seen_before.update(w.lower() for w in names_in(sentence))
            continue
        for naming in namings:
            named = named_after(sentence, naming, seen_before)
            if named:
                return named
        start = intro.end() if intro else namings[0].end()
        # a quote mark first, by memchr: few sentences hold one, and the pattern's lazy
        # prefix is tried at every character up to 40 on
        quoted = QUOTED_NAME.match(sentence, start) if holds_any(sentence, QUOTES) else None
        if quoted:  # 'we present innovative approaches, "Reverse LoRA" for extraction'
            return quoted.group(1)
        for match in NAME.finditer(sentence, start):
            if is_ours(sentence, match, seen_before, start):
                return acronym_after(sentence, match.start()) or describe(sentence, match)
        if intro:  # 'We present Jiffy, a simple and scalable distance metric'
            word = NAMED_WORD.match(sentence, intro.end() + 1)
            if word and word.group(0)[0].isupper() and APPOSITION.match(sentence[word.end() :]):
                return describe(sentence, word)
        seen_before.update(w.lower() for w in names_in(sentence))
    return None


def introduced_thing(sentences: Iterable[str]) -> str | None:
    """'We present a simple nearest-neighbor approach that ...' -> 'A simple nearest-...'."""
    for sentence in sentences:
        # the prefilter named_method uses: most sentences of real abstracts are passed over
        intro = INTRO.search(sentence) if may_hold(sentence, INTRO_WORDS, INTRO_VERBS) else None
        if intro and intro.group(0).lower().startswith(("we", "this", "our")):
            rest = sentence[intro.end() :]
            rest = OPENING.sub("", rest, count=1).strip()
            if len(rest.split()) < 3 or CITATION.search(rest):
                continue
            if rest.split()[0].lower() not in NOT_INTRODUCED:
                return rest[0].upper() + rest[1:]
    return None


def drop_citations(text: str) -> str:
    """The text without its citation marks and the whitespace before each."""
    if not may_cite(text):
        return text  # most abstracts: no pass of the pattern, which tries every '('
    pieces, end = [], 0
    for citation in CITATION_MARK.finditer(text):
        pieces.append(text[end : citation.start()].rstrip())
        end = citation.end()
    pieces.append(text[end:])
    return "".join(pieces)


def may_cite(text: str) -> bool:
    """False only when CITATION_MARK finds nothing: the text has no '[', and no parenthesis
    without another inside holds one of CITATION_NEEDS. Looking in the parentheses alone
    (each found by memchr), not for the needles over the whole text, is quicker and leaves
    the pattern fewer real abstracts to try."""
    if "[" in text:
        return True
    start = text.find("(")
    while start >= 0:
        end = text.find(")", start)
        if end < 0:
            return False
        # of the '(' before this ')', only the last has no parenthesis between them
        if holds_any(text[text.rfind("(", start, end) : end], CITATION_NEEDS):
            return True
        start = text.find("(", end)
    return False


def split_sentences(text: str) -> Iterator[str]:
    """The text cut at each SENTENCE_END, every sentence keeping its mark, one at a time."""
    start = 0
    for end in SENTENCE_END.finditer(text):
        yield text[start : end.end(1)]
        start = end.end()
    yield text[start:]


def read_sentences(text: str, into: list[str]) -> Iterator[str]:
    """The stripped, non-empty sentences of `text`, one at a time, each also added to `into`."""
    for sentence in split_sentences(text):
        sentence = sentence.strip()
        if sentence:
            into.append(sentence)
            yield sentence


def derive_label(text: str) -> str:
    """A heading for a paper that has no title, from its abstract's plain text."""
    # ':' by memchr first: "://" is a slower search, and most abstracts hold no ':'
    if (":" in text and "://" in text) or "github.com" in text:
        text = URL.sub("", text)
    text = collapse_spaces(drop_citations(text))
    # the text is cut as named_method reads on: it stops at the sentence that names the method,
    # the second of most abstracts (cutting them all cost a large share of a label)
    sentences: list[str] = []
    label = named_method(read_sentences(text, sentences))
    if label is None:  # named_method has read every sentence
        if not sentences:
            return ""
        first = next((s for s in sentences if not CITATION.search(s)), sentences[0])
        label = introduced_thing(sentences) or first
    return cut_at_word(label)
