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

LABEL_LENGTH = 90
# a sentence ends at '. ' before a capital, but not after 'et al.' or 'e.g.'
SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\bet al\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<!\bcf\.)"
    r"\s+(?=[A-Z(\"“])"
)
# '(Kakade et al., 2008)', '[12]': a citation is never part of a label
CITATION_MARK = re.compile(r"\s*(?:\([^()]*(?:\bet al\b|\b(?:19|20)\d\d[a-z]?\b)[^()]*\)|\[[\d,\s\-–]+\])")
INTRO = re.compile(
    r"\b(?:we|this (?:paper|work|article|study|note)|our (?:work|paper))\b[^.;]{0,80}?"
    r"\b(?:propos|introduc|present|develop|design|devis|formulat|describ|offer|build|creat|"
    r"construct|releas|contribut)\w*\b",
    re.IGNORECASE,
)
NAMING = re.compile(
    r"\b(?:called|named|dubbed|termed|coined|(?:we|which we) (?:call|name|dub|term|refer to as))"
    r"(?:\s+as|\s+it)?\s+",
    re.IGNORECASE,
)
QUOTED = re.compile(r"[“”\"'‘’]([^“”\"'‘’]{2,40})[“”\"'’]")
# 'called Cycle-Consistent Adversarial Domain Adaptation (CyCADA)': the name in parentheses
NAME_AFTER_EXPANSION = re.compile(r"(?:[A-Z][\w'\-]*\s+){1,8}\(")
# a method name: one token with two capitals, or a capital and a digit ('NorMuon', 'xRAG',
# 'ASAP.SGD', 'VSE++', '3C-GAN')
NAME = re.compile(r"(?<![\w.+\-])(?=[\w.+\-]*[A-Z][\w.+\-]*[A-Z0-9])[A-Za-z0-9][\w.+\-]*[\w+]")
# after naming words any capitalized word is a name ('called Autostacker')
NAMED_WORD = re.compile(r"[A-Za-z0-9][\w.+\-]*[\w+]")
PLURAL_CLASS = re.compile(r"[\w.\-]*[A-Z]s")  # GANs, LLMs, CiGMs
# a name right after one of these is one the paper compares with or builds on
NOT_OURS = re.compile(
    r"\b(?:of|than|over|like|from|on|upon|versus|vs\.?|against|e\.g\.,?|including|"
    r"such as|beyond|unlike|compared(?: to| with)?|using|existing|previous|prior|standard|"
    r"popular|vanilla)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
CITATION = re.compile(r"\bet al\b|\b(?:19|20)\d\d\b|\[\d+\]")
STOP_WORDS = {
    "a", "an", "the", "we", "our", "novel", "new", "called", "named", "dubbed", "termed",
    "propose", "proposed", "introduce", "present", "method", "is", "are", "of", "and", "to",
    "this", "that", "which", "by", "in", "for", "as", "with",
}  # fmt: skip
OPENING = re.compile(r"^(?:[,:;]|\s)*(?:a|an|the)?\b", re.IGNORECASE)


def cut_at_word(text, limit=LABEL_LENGTH):
    """At most `limit` characters, cut between two words and ending with '…' when cut."""
    text = text.strip().rstrip(",;:.")
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0] if " " in text[: limit + 1] else text[:limit]
    return cut.rstrip(",;:.-–— ") + "…"


def expansion_before(sentence, start, name):
    """'Denoising Masked AutoEncoders (DMAE)': the words before '(' that spell the name."""
    capitals = max(1, sum(c.isupper() for c in name))
    words, letters = [], 0
    for word in reversed(re.findall(r"[\w'’\-]+", sentence[:start])[-8:]):
        if word.lower() in STOP_WORDS or not word[0].isalpha():
            break
        words.insert(0, word)
        letters += sum(c.isupper() for c in word) or 1
        if letters >= capitals:
            break
    return " ".join(words)


def describe(sentence, match):
    """The label for the name at `match`: its expansion or apposition when there is one."""
    name, after = match.group(0), sentence[match.end() :]
    explained = re.match(r"\s*\(([^()]{3,120})\)", after)
    if explained and " " in explained.group(1).strip():
        detail = explained.group(1)  # 'NorMuon (Neuron-wise Normalized Muon)'
    elif sentence[: match.start()].rstrip().endswith("("):
        detail = expansion_before(sentence, sentence[: match.start()].rstrip().rfind("("), name)
    else:
        apposition = re.match(r"\s*[,:]\s+((?:a|an|the)\s[^;:()]{5,200})", after, re.I)
        colon = re.match(r"\s*:\s+([^;()]{5,200})", after)
        found = apposition or colon
        detail = found.group(1) if found else ""
    detail = detail.strip().rstrip(".,")
    if not detail or CITATION.search(detail) or detail.lower() == name.lower():
        return name
    return f"{name}: {detail}"


def is_ours(sentence, match, seen_before):
    name, before = match.group(0), sentence[: match.start()].rstrip()
    if PLURAL_CLASS.fullmatch(name) or name.lower() in seen_before:
        return False
    if before.endswith("("):
        # 'a neural text to speech (TTS) method': a lower-case expansion names a field or a
        # kind of model, not the method
        expansion = expansion_before(sentence, len(before) - 1, name)
        if not expansion or expansion.islower():
            return False
    return not NOT_OURS.search(before.rstrip("( ") + " ")


def named_method(sentences):
    """The method the paper introduces, as a label, or None."""
    for index, sentence in enumerate(sentences):
        intro = INTRO.search(sentence)
        naming = NAMING.search(sentence)
        if not intro and not naming:
            continue
        seen_before = {w.lower() for s in sentences[:index] for w in NAME.findall(s)}
        if naming:
            rest = sentence[naming.end() :]
            quoted = QUOTED.match(rest)
            if quoted:  # 'which we term “Adaptive Radial-Angular Gradient Descent” or AdaRad'
                short = re.match(r"\s*(?:or|\()\s*", rest[quoted.end() :])
                name = short and NAME.match(rest, quoted.end() + short.end())
                if name:
                    return f"{name.group(0)}: {quoted.group(1).strip()}"
                return quoted.group(1).strip()
            expansion = NAME_AFTER_EXPANSION.match(rest)
            acronym = expansion and NAME.match(rest, expansion.end())
            if acronym:
                return describe(rest, acronym)
            word = NAMED_WORD.match(rest)
            if word and (word.group(0)[0].isupper() or NAME.fullmatch(word.group(0))):
                return describe(rest, word)
        start = intro.end() if intro else naming.end()
        for match in NAME.finditer(sentence, start):
            if is_ours(sentence, match, seen_before):
                return describe(sentence, match)
    return None


def introduced_thing(sentences):
    """'We present a simple nearest-neighbor approach that ...' -> 'A simple nearest-...'."""
    for sentence in sentences:
        intro = INTRO.search(sentence)
        if intro and intro.group(0).lower().startswith(("we", "this", "our")):
            rest = sentence[intro.end() :]
            rest = OPENING.sub("", rest, count=1).strip()
            if len(rest.split()) >= 3 and not rest.lower().startswith(("that", "to ", "how")):
                return rest[0].upper() + rest[1:]
    return None


def derive_label(text):
    """A heading for a paper that has no title, from its abstract's plain text."""
    text = CITATION_MARK.sub("", text)
    sentences = [s.strip() for s in SENTENCE_END.split(text) if s.strip()]
    if not sentences:
        return ""
    label = named_method(sentences) or introduced_thing(sentences) or sentences[0]
    return cut_at_word(label)
