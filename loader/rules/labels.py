"""A paper's label: its title as plain text (title_label), or for a paper whose source gives no
title, a heading read from the abstract's plain text.

The label names the method the paper introduces ('NorMuon: Neuron-wise Normalized Muon'), found
in the sentence where the authors introduce their work ('we propose', 'this paper presents',
'called', 'dubbed'). A name the paper only mentions is not its method: one that appears before
that sentence (background: 'Generative adversarial networks (GANs) ...'), a plural class of
models ('LLMs', 'GANs'), one after 'of', 'than', 'over', 'such as' ('a variant of SGD'), one in
a list ('on MNIST, CIFAR-10 and ImageNet'), or an acronym whose expansion is not what the
sentence introduces ('a test using a Dirichlet process (DP)'). An expansion that is a citation
('Richtárik et al, 2021') is dropped. A bare name gets what the sentence says it is ('a new
Q&A architecture called QANet' -> 'QANet: a new Q&A architecture').

With no name, the label is the noun phrase the authors say they introduce ('we present a
simple nearest-neighbor approach that ...'), else what a sentence says is presented ('A new
dataset ... is presented'), else what they study or show ('we study the expressive power of
...', 'we show that ...'), else the first sentence. A phrase ends where its clause does (', and
we show ...'), and a label is cut at a word, preferably before a comma or a function word,
never ending on a connective, article, preposition or an open bracket or quote, and ends with
'…' when cut.

Labels that several papers of a catalog share ('SVM') get a second part that tells them apart
(distinguished_labels), decided by the build once every label is known.
"""

import functools
import re
from collections import Counter
from collections.abc import Container, Iterable, Iterator, Sequence

from loader.rules.markup import collapse_spaces, holds_any, plain_text

LABEL_LENGTH = 90
# a shared label this short is kept whole ahead of what tells it apart ('LLM: ...')
SHARED_HEAD_LENGTH = 45
# a cut label ends before a comma or a function word when one comes this far in or further:
# cutting there ends the label on a whole phrase
PHRASE_CUT_SHARE = 0.75
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
# who introduces the work, then at most three auxiliaries or adverbs ('we have', 'we also',
# 'this paper further'), or a short phrase ending in 'by' or 'and' ('we bridge this gap by
# proposing'): the verb is the subject's own, not one of a clause further on ('the algorithm
# designer', 'non-spectator contributions at')
AUTHORS = (
    r"\b(?:we|this (?:paper|work|article|study|note|thesis|chapter)|our (?:work|paper|study))\b"
)
BETWEEN = (
    r"(?:(?:,?\s+(?:have|has|also|further|then|first|here|herein|now|newly|instead|thus|"
    r"therefore|hence|finally|additionally|next|subsequently|second|third|lastly|jointly|"
    r"furthermore|moreover|accordingly|hereby|will|can|shall|would|could|may|might|must|"
    r"do|did|and|\w+ly|\w+ed,)){0,3}"
    r"|(?:\s+(?!(?:that|which|how|whether|who|whom|where|what|when|if|because|since|while|but)"
    r"\b)[\w’'\-]+){1,12}?,?\s+(?:by|and|then|to))"
)
INTRO = re.compile(
    AUTHORS + BETWEEN + r"\s+(?<!-)(?:(?:propos|introduc|devis|formulat|describ|creat|releas|"
    r"contribut)(?:e|es|ed|ing)|(?:present|develop|design|offer|build|construct)(?:s|ed|ing)?"
    r"|built)\b"
    r"(?!\s+(?:by|upon|on|to|from)\b)(?!\s+in\s+(?!this\b))",  # not 'proposed by [12]'
    re.IGNORECASE,
)
# 'we' starts a relative clause, not the sentence's own, after a noun phrase its clause opens
# with ('The approach we developed enables ...', 'the results we obtain') or after a relative
# word ('which we propose')
DETERMINERS = {
    "the", "a", "an", "our", "this", "these", "those", "each", "any", "every", "such", "its",
    "their", "all", "most", "many", "some", "one",
}  # fmt: skip
RELATIVE_WORDS = {"which", "that", "where", "whom", "what", "how", "when", "why", "whether"}
CLAUSE_LOOKBACK = 300
# words without which INTRO and NAMING cannot match (lowercase): a sentence of ASCII text
# holding none of them is passed over without the case-insensitive search, the slow part
INTRO_WORDS = ("we", "this ", "our ")
INTRO_VERBS = (
    "propos", "introduc", "present", "develop", "design", "devis", "formulat", "describ",
    "offer", "build", "built", "creat", "construct", "releas", "contribut",
)  # fmt: skip
# what the authors study or show, when they introduce nothing: 'we study the expressive power
# of ...', 'we show that ...'
TOPIC = re.compile(
    AUTHORS + BETWEEN + r"\s+(?<!-)(?:stud(?:y|ies|ied)|(?:investigat|examin|explor|tackl|"
    r"characteriz|characteris|deriv|provid|prov|demonstrat|evaluat|generaliz)(?:e|es|ed|ing)"
    r"|analy[sz](?:e|es|ed|ing)|(?:consider|address|revisit|discuss|review|report|establish|"
    r"obtain|extend|show|focus(?:es|ed|ing)?\s+on)(?:s|es|ed|ing)?|giv(?:e|es|ing)|gave|shown)\b"
    r"(?!\s+(?:by|upon|on|to|from|in|as|for|with)\b)",
    re.IGNORECASE,
)
TOPIC_VERBS = (  # by how many sentences hold each ('prov' is in every 'provid')
    "prov", "show", "demonstrat", "analy", "evaluat", "stud", "generaliz", "consider", "giv",
    "explor", "address", "deriv", "obtain", "extend", "establish", "investigat", "characteri",
    "focus", "examin", "discuss", "report", "tackl", "revisit", "review", "gave",
)  # fmt: skip
# 'A fully differential calculation ... is presented': what the sentence says is presented
PASSIVE = re.compile(
    r"(?:(?:in this (?:paper|work|article|note|letter)|here(?:in)?),?\s+)?"
    r"((?:the|a|an|our)\s+[^,;:]{6,160}?|[A-Z][^,;:]{8,160}?)\s+(?:is|are|was|were|has been|"
    r"have been)\s+(?:(?:here|first|also|then|now|briefly|thus|therefore)\s+)?"
    r"(?:presented|proposed|introduced|developed|described|constructed|formulated|designed|"
    r"devised|created)\b",
    re.IGNORECASE,
)
# a subject holding a verb is a clause, not the thing presented ('The LFSP is first defined
# and then a metric ... is proposed')
FINITE_VERB = re.compile(r"\b(?:is|are|was|were|has|have|had|be)\b", re.IGNORECASE)
# 'we study ...' and 'we show that ...' state the contribution only near the abstract's start
TOPIC_SENTENCES = 5
PASSIVE_WORDS = (" is ", " are ", " was ", " were ", " been ")
PASSIVE_VERBS = (
    "presented", "proposed", "introduced", "developed", "described", "constructed",
    "formulated", "designed", "devised", "created",
)  # fmt: skip
# the words of each group most sentences that hold one hold first: holds_any stops at the first
# it finds ('our ' is in nearly one sentence in five of real abstracts, the others in few)
NAMING_WORDS = (
    "our ", "the proposed", "called", "named", "termed", "we call", "dubbed", "coined",
    "entitled", "known as", "referred to", "we name", "we dub", "we term", "we refer to",
)  # fmt: skip
INTRO_GROUPS, NAMING_GROUPS = (INTRO_WORDS, INTRO_VERBS), (NAMING_WORDS,)
PASSIVE_GROUPS = PASSIVE_WORDS, PASSIVE_VERBS
TOPIC_GROUPS = INTRO_WORDS, TOPIC_VERBS
NAMING = re.compile(
    r"\b(?:called|named|dubbed|termed|coined|entitled|known as|referred to as|"
    r"(?:we|which we) refer to (?:it|this|them|the (?:\w+ ){0,2}?\w+) as|"
    r"(?:we|which we) (?:call|name|dub|"
    r"term|refer to)|the proposed|our (?:\w+ )?(?:method|model|approach|algorithm|framework|"
    r"system|network|architecture|scheme|technique|tool)s?,?)(?:\s+as|\s+it)?\s+",
    re.IGNORECASE,
)
# a naming phrase names the paper's own method only where the authors speak before it ('our
# method, called X'; not 'a recent architecture named X', 'networks named Alice and Bob')
AUTHORS_VOICE = re.compile(
    r"\b(?:we|our|us|this (?:paper|work|article|study)|propos\w*|introduc\w*|novel|new)\b",
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
# 'Multi-Agent Soft Actor Critic (Hybrid-MASAC)': a name inside the expansion of another
ANOTHER_DEFINED = re.compile(r"(?:\s+[\w'’\-]+){0,6}?\s*\(\s*[\w.+\-]*[A-Z][\w.+\-]*\s*\)")
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
# capitalized words right after a name belong to it ('GenOpt Agent')
CAPITALIZED_TAIL = re.compile(r"(?:\s+[A-Z][\w'’\-]*)+")
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
NOT_INTRODUCED = {
    "that", "to", "how", "by", "upon", "on", "in", "of", "from", "with", "for", "as", "this",
    "these", "those", "it", "them", "whether", "what", "why", "when", "where", "which", "here",
    "and", "or", "our", "its", "their", "such", "is", "are", "was", "were", "be", "has", "have",
}  # fmt: skip
# 'we study the following question: ...': the question
FOLLOWING = re.compile(r"(?:the\s+)?following\s+[\w\-]+(?:\s+[\w\-]+)?\s*:\s+", re.IGNORECASE)
# what starts a phrase that leans on what the abstract said before it
VAGUE_OPENERS = {
    "any", "similar", "same", "both", "each", "further", "more", "other", "empirically",
    "theoretically", "experimentally", "also", "several", "some", "previous", "prior",
    "existing",
}  # fmt: skip
# 'we also show', 'we further derive': a result beside the paper's subject
SECONDARY = re.compile(
    r"\b(?:further|also|additionally|moreover|furthermore|then|next|finally|second|third|"
    r"lastly)\b",
    re.IGNORECASE,
)
# words that point back to what the abstract said before ('these perturbations', 'this growth')
ANAPHORA = re.compile(
    r"\b(?:this|these|those|such(?!\s+as\b)|above|aforementioned|it|its|they|them|their|"
    r"further|former|latter|same|similar)\b",
    re.IGNORECASE,
)
# where a claim's words point back, if they do: among its first words
ANAPHORA_WORDS = 8
# what authors present that is not the paper's subject ('we present experiments on ...')
NOT_THE_SUBJECT = {
    "experiments", "experimental", "numerical", "results", "simulations", "extensive",
    "preliminary", "examples",
}  # fmt: skip
# what follows 'we show' that is a clause of its own, kept as it is ('How ...')
CLAUSE_OPENERS = {"how", "whether", "why", "what", "when", "where"}
# words a label never ends on: articles, prepositions, connectives, auxiliaries, determiners
DANGLING_WORDS = {
    "a", "an", "the", "of", "to", "for", "with", "via", "in", "on", "at", "by", "from", "into",
    "onto", "upon", "over", "under", "between", "among", "through", "across", "against",
    "about", "without", "within", "towards", "toward", "than", "as", "per", "like", "using",
    "beyond", "along", "around", "after", "before", "during", "since", "until", "despite",
    "versus", "vs", "and", "or", "but", "nor", "yet", "so", "while", "whilst", "whereas",
    "although", "though", "because", "if", "when", "where", "which", "that", "who", "whom",
    "whose", "how", "what", "whether", "both", "either", "neither", "then", "thus", "hence",
    "i.e", "e.g", "is", "are", "was", "were", "be", "been", "being", "can", "could", "will",
    "would", "should", "may", "might", "must", "has", "have", "had", "do", "does", "did",
    "its", "their", "our", "his", "her", "this", "these", "those", "each", "every", "any",
    "some", "such", "more", "most", "less", "very", "not", "no", "we", "it", "they", "also",
    "only", "namely", "called", "named", "dubbed", "termed", "respectively", "based",
}  # fmt: skip
OPEN_MARKS = "([{“‘«\"'"
CLOSING = {"(": ")", "[": "]", "{": "}", "“": "”", "«": "»"}
CLOSERS = "".join(CLOSING.values())
OPENERS = "".join(CLOSING)
BRACKET = re.compile(f"[{re.escape(OPENERS + CLOSERS)}]")
# words that open no clause: a sentence starting so was cut out of another one
NOT_A_SENTENCE_START = {"and", "or", "but", "nor", "which", "that", "whose", "whom", "where"}
# where the phrase after a verb stops being the thing introduced: another clause (', and we
# show', 'and prove that'), a participle saying what it does (', thereby', ', allowing'), a
# semicolon or a dash
# verbs that start another clause after ', and' or ',' ('we obtain X, extend it to Y')
CLAUSE_VERBS = (
    r"show|shows|prove|proves|demonstrate|demonstrates|apply|evaluate|analy[sz]e|derive|"
    r"establish|provide|provides|present|propose|introduce|develop|give|obtain|investigate|"
    r"illustrate|discuss|extend|describe|validate|verify|achieve|achieves|conduct|perform|"
    r"explore|implement|observe|identify|characterize|construct|formulate|solve|leverage|"
    r"exploit|employ|adopt|invoke|argue|assume|reveal|highlight|suggest|explain|examine|"
    r"quantify|combine|integrate|incorporate|outline|confirm|discover|improve|outperforms|"
    r"yields|enables|allows|requires"
)
CLAUSE_END = re.compile(
    r";|\s[–—]\s|,?\s+and\s+(?:then\s+|also\s+|further\s+|empirically\s+|"
    r"theoretically\s+|experimentally\s+)?(?:we|it|they|use|uses|study|test|compare|answer|find|"
    r"report|release|train|design|then|experimentally|empirically|theoretically|measure|"
    r"benchmark|make|support|offer|learn|estimate|consider|reduce|bound|require|"
    + CLAUSE_VERBS
    + r")\b|,\s+(?:thereby|thus|hence|allowing|enabling|making|leading|resulting|showing|"
    r"demonstrating|achieving|yielding|outperforming|and\s+(?:we|it|they)|" + CLAUSE_VERBS + r")\b"
)
# what may stand between a verb and the thing it introduces ('propose and analyze a ...',
# 'present, for the first time, a ...', 'introduce here the ...')
LEADING_FILLER = re.compile(
    r"^(?:(?:,?\s+(?:and|or)\s+[a-z]+(?:ed|e|s)?\b|,\s+[a-z]+ed\b(?=,))+)?"
    r"(?:,?\s*(?:here(?:in)?|also|further|briefly|in this (?:paper|work|article|note)|"
    r"for the first time|in detail),?)?(?:[,:;]|\s)*"
)
ARTICLE = re.compile(r"(?:a|an|the)\s+", re.IGNORECASE)
# 'the first, to the best of our knowledge, "in-the-wild" 3DMM'
TO_OUR_KNOWLEDGE = ", to the best of our knowledge,"
# what describe and placed_as_ours look at after a name, compiled once (re.match looks the
# pattern up in its cache at every call, twice an entry)
PARENTHESIZED = re.compile(r"\s*\(([^()]{3,120})\)")
APPOSITION_DETAIL = re.compile(
    r"\s*(?:[,:]\s+|\s[–—-]\s+|[–—]\s*)((?:a|an|the)\s.{5,})", re.IGNORECASE
)
# 'a batched training scheme as we propose in this work—FastGCN': what 'as we propose' names
AS_WE = re.compile(r"\b((?:a|an|the)\s+[\w\s\-]{3,60}?)\s+as\s+we\s+\w+", re.IGNORECASE)
# 'We propose TapNets, neural networks augmented with ...': a name right after the verb and
# a comma, then what it is
BARE_APPOSITION = re.compile(
    r",\s+((?!(?:and|or|which|that|where|who|whose|while|but|as|to|in|on|for|with|by|we|it|"
    r"respectively|i\.e|e\.g)\b)[a-z][\w\-]*\s.{5,})"
)
COLON_DETAIL = re.compile(r"\s*:\s+(.{5,})")
FOLLOWING_WORD = re.compile(r"\s+([a-z]+)")
# what may stand between a naming phrase and the name it gives ('our model, the proposed X')
NAMING_LEAD = {"the", "a", "an", "new", "novel", "proposed", "so-called", ","}
# 'ReMamba, which enhances Mamba's ability ...': what a bare name does
WHICH_CLAUSE = re.compile(
    r",\s+((?:which|that)\s+(?!(?:is|are|was|were|we|can|may)\b)[a-z]+s\b.{10,})"
)
# 'we introduce Sigma-Delta networks.': lowercase words after a name, up to the clause's end
FOLLOWING_NOUNS = re.compile(r"(?:\s+[a-z][\w\-]*){1,3}(?=\s*(?:[.,;:(]|$))")
OPENING = re.compile(r"^(?:[,:;]|\s)*(?:a|an|the)?\b", re.IGNORECASE)
# the most characters between a verb and a name that a description of the name may be
DESCRIPTION_SPAN = 300
# the end of the words that describe a named thing ('a new model, which is called X')
DESCRIPTION_TAIL = re.compile(
    r"(?:[,\s]+(?:which|that|and|or|is|are|we|us|will|be|here|henceforth|hereafter|"
    r"subsequently|also|as|it))*[,\s(“\"'‘–—-]*$",
    re.IGNORECASE,
)


def cut_at_word(text: str, limit: int = LABEL_LENGTH) -> str:
    """At most `limit` characters (and '…'), cut between two words, preferably where a phrase
    ends (before a comma or a function word); never ending on a function word, an open bracket
    or quote; ending with '…' when cut."""
    text = text.strip(" ,;:.–—")
    if len(text) > limit:  # the closers are looked for in what stays, not in a whole abstract
        text = text[: limit + limit // 2]
    text = without_stray_closers(text).strip(" ,;:.–—")
    last = text[text.rfind(" ") + 1 :]
    clean_end = any(map(str.isalnum, last)) and not is_dangling(last) and last[-1] not in OPEN_MARKS
    if len(text) <= limit and clean_end and unclosed_mark(text) is None:
        return text  # most labels: nothing to cut or drop
    cut = False
    if len(text) > limit:
        text = text[: phrase_break(text, limit)]
        cut = True
    trimmed = drop_dangling_end(text)
    if trimmed != text:
        text, cut = trimmed, True
    return text + "…" if cut and text else text


def phrase_break(text: str, limit: int) -> int:
    """Where to cut a text longer than `limit`: the last space within it before a comma's word
    end or a function word, when that is far enough in; else the last space; else `limit`."""
    window = text[: limit + 1]
    last = window.rfind(" ")
    if last < 0:
        return limit  # one word longer than a label
    # the spaces from the last one back (each found by memchr, not a loop over the characters)
    i, following = last, window[last + 1 :]
    while i >= limit * PHRASE_CUT_SHARE:
        space_before = window.rfind(" ", 0, i)
        previous = window[space_before + 1 : i]
        # not after 'written', 'relying' or 'in': the verb wants what follows
        wanted = previous.endswith(("ing", "ed")) or is_dangling(previous)
        if not wanted and (window[i - 1] == "," or is_dangling(following) or following[:1] == "("):
            return i
        if space_before < 0:
            break
        i, following = space_before, previous
    return last


def drop_dangling_end(text: str) -> str:
    """The text without what a label must not end on: an unclosed bracket or quote and what
    follows it, then trailing punctuation and function words ('of', 'and', 'the')."""
    while True:
        before = text
        opened = unclosed_mark(text)
        if opened is not None:
            # the mark and what follows it, or only the mark when nothing a label could be
            # comes before it ('(We propose')
            kept = text[:opened]
            text = kept if has_content(kept) else kept + text[opened + 1 :]
        text = text.rstrip(" ,;:-–—/")
        words = text.rsplit(" ", 1)
        last = words[-1]
        if len(words) == 2 and (is_dangling(last) or last[-1] in OPEN_MARKS):
            text = words[0]
        if text == before:
            return text if has_content(text) else ""


def has_content(text: str) -> bool:
    """Whether the text holds a word that is not a function word."""
    return any(not is_dangling(word) and any(map(str.isalnum, word)) for word in text.split())


def without_stray_closers(text: str) -> str:
    """The text without closing brackets and quotes that close nothing ('We propose)')."""
    if not holds_any(text, CLOSERS):
        return text
    expected: list[str] = []
    stray = []
    for mark in BRACKET.finditer(text):  # the brackets alone, not every character
        c = mark.group()
        if c in CLOSING:
            expected.append(CLOSING[c])
        elif expected and expected[-1] == c:
            expected.pop()
        else:
            stray.append(mark.start())
    if not stray:
        return text  # most labels holding a closer: it closes an opener
    kept, start = [], 0
    for position in stray:
        kept.append(text[start:position])
        start = position + 1
    kept.append(text[start:])
    return "".join(kept)


def is_dangling(word: str) -> bool:
    """A word a label never ends on, written in lowercase ('of', 'the'; not 'Robot See Robot
    Do')."""
    word = word.rstrip(".,;:")
    return word.islower() and word in DANGLING_WORDS


def unclosed_mark(text: str) -> int | None:
    """Where the first bracket or typographic quote left open starts, or an odd straight double
    quote; None when all are closed."""
    if not holds_any(text, OPENERS):
        return text.rfind('"') if text.count('"') % 2 else None  # most labels: no loop
    stack: list[int] = []
    for i, c in enumerate(text):
        if c in CLOSING:
            stack.append(i)
        elif stack and c == CLOSING[text[stack[-1]]]:
            stack.pop()
    if stack:
        return stack[0]
    if text.count('"') % 2:
        return text.rfind('"')
    return None


def expansion_span(sentence: str, start: int, name: str) -> tuple[int, str]:
    """'Denoising Masked AutoEncoders (DMAE)': where the words before '(' that spell the name
    start, and the words."""
    capitals = max(1, sum(c.isupper() for c in name))
    words: list[re.Match[str]] = []
    letters = 0
    clause_start = max(sentence.rfind(mark, 0, start) for mark in "(),;:") + 1
    candidates = list(re.finditer(r"[\w'’\-]+", sentence[clause_start:start]))
    capitalized_by_place = clause_start == 0 and bool(candidates)
    candidates = candidates[-8:]
    for match in reversed(candidates):
        word = match.group(0)
        if capitalized_by_place and match.start() == 0:
            word = word.lower()  # capitalized by its place, not as a name
        if word.lower() in STOP_WORDS or not word[0].isalpha():
            break
        first = words[0].group(0) if words else ""
        spelled = letters >= capitals and first[0].lower() == name[0].lower()
        if spelled and not (word[0].isupper() and first[0].isupper()):
            break  # 'the Reversible Residual Network (RevNet)': a capitalized run goes on
        words.insert(0, match)
        if word.lower() not in FUNCTION_WORDS:
            letters += sum(c.isupper() for c in word) or 1
    while words and words[0].group(0).lower() in FUNCTION_WORDS:
        words.pop(0)
    if not words:
        return start, ""
    text = sentence[clause_start + words[0].start() : clause_start + words[-1].end()]
    if capitalized_by_place and words[0].start() == 0:
        text = text[0].lower() + text[1:]
    return clause_start + words[0].start(), text


def expansion_before(sentence: str, start: int, name: str) -> str:
    """'Denoising Masked AutoEncoders (DMAE)': the words before '(' that spell the name."""
    return expansion_span(sentence, start, name)[1]


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


def describe(sentence: str, match: re.Match[str], direct: bool = False) -> str:
    """The label for the name at `match`: its expansion or apposition when there is one.
    `direct`: the name comes right after the verb that introduces it."""
    name, after = match.group(0), sentence[match.end() :]
    explained = PARENTHESIZED.match(after)
    if explained and " " in explained.group(1).strip():
        detail = explained.group(1)  # 'NorMuon (Neuron-wise Normalized Muon)'
    elif sentence[: match.start()].rstrip().endswith("("):
        detail = expansion_before(sentence, sentence[: match.start()].rstrip().rfind("("), name)
    else:
        # the rest of the clause: cut_at_word shortens it, with '…'
        apposition = APPOSITION_DETAIL.match(after)
        colon = COLON_DETAIL.match(after)
        bare = BARE_APPOSITION.match(after) if direct else None
        found = apposition or colon or bare
        detail = end_of_clause(found.group(1)) if found else ""
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
    stopped = any(w.lower() in LEAD_STOPS for w in lead)
    common_noun = any(w.lower() in ("a", "an") for w in lead) and lead[-1].lower() not in KIND_NOUNS
    if len(lead) <= 5 and not common_noun and not stopped:
        return True
    if before.rstrip().endswith("("):
        return True  # is_ours reads the expansion
    if APPOSITION.match(after):
        return True
    if before.rstrip().endswith(",") and stopped and lead[-1].lower() not in KIND_NOUNS:
        return False  # ', CrescendoNet,' after a kind of thing, not 'on MNIST, CIFAR-10, ...'
    return before.rstrip().endswith((",", "–", "—", ":")) and bool(EXPLAINED.match(after))


def is_ours(sentence: str, match: re.Match[str], seen_before: Container[str], start: int) -> bool:
    name, before = match.group(0), sentence[: match.start()].rstrip()
    if not placed_as_ours(sentence, match, start):
        return False
    if PLURAL_CLASS.fullmatch(name) or name.lower() in seen_before:
        return False
    if before.count("(") > before.count(")") and not before.endswith("("):
        return False  # '(L_0, L_1)-smooth': inside a parenthesis, not what it defines
    if before.endswith("("):
        if not re.match(r"\s*\)", sentence[match.end() :]):
            return False  # '(PPO, DDPG, A2C)': a list, no definition
        # 'a neural text to speech (TTS) method': a lower-case expansion names a field or a
        # kind of model, not the method; 'a test using a Dirichlet process (DP)': what the
        # sentence introduces is not the expansion
        expansion_start, expansion = expansion_span(sentence, len(before) - 1, name)
        if not expansion or expansion.islower():
            return False
        lead = sentence[start:expansion_start].replace(",", " ").split()
        titled = all(w[0].isupper() for w in expansion.split() if len(w) > 3)
        if any(w.lower() in LEAD_STOPS for w in lead) and not (titled and lead[-1] == "via"):
            return False  # but 'learn ... via Variational Gradient Flow (VGrow)' names it
    return not NOT_OURS.search(before.rstrip("( ") + " ")


def description_before(sentence: str, start: int, end: int) -> str:
    """What the words between the verb (at `start`) and a name (at `end`) say the named thing
    is ('a new Q&A architecture' in 'we propose a new Q&A architecture called QANet'), or ''."""
    if end - start > DESCRIPTION_SPAN:
        return ""  # more words than a description has
    words = DESCRIPTION_TAIL.sub("", LEADING_FILLER.sub("", sentence[start:end], count=1))
    clauses = list(CLAUSE_END.finditer(words))
    if clauses:  # 'the WFR task and construct the first dataset for this task, named X'
        words = words[clauses[-1].end() :]
    words = words.strip()
    if len(words.split()) < 2 or len(words.split()) > 14 or CITATION.search(words):
        return ""
    if unclosed_mark(words) is not None or all(is_dangling(word) for word in words.split()):
        return ""  # 'our model is the Gromov-Wasserstein distance'
    if words.split()[0].lower() in NOT_INTRODUCED:
        return ""
    return words


def named_after(sentence: str, naming: re.Match[str], seen_before: Container[str]) -> str | None:
    """The name a naming phrase ('which we call', 'dubbed', 'our method,') gives, or None."""
    rest = sentence[naming.end() :]
    quoted = QUOTED.match(rest)
    if quoted:  # 'which we term “Adaptive Radial-Angular Gradient Descent” or AdaRad'
        short = re.match(r"\s*(?:or|\()\s*", rest[quoted.end() :])
        name = short and NAME.match(rest, quoted.end() + short.end())
        if name:
            return f"{name.group(0)}: {quoted.group(1).strip()}"
        phrase = quoted.group(1).strip()
        # a term in quotes names a method when it is spelled as one ('Masking'), not 'structural'
        return phrase if any(c.isupper() or c.isdigit() for c in phrase) else None
    article = ARTICLE.match(rest)
    if article and naming.group(0).lower().split()[-1] in ("call", "name", "term", "dub"):
        rest = rest[article.end() :]  # 'which we call the Littlewood-Richardson polynomials'
    acronym = acronym_after(rest, 0)
    if acronym:
        return acronym
    word = NAMED_WORD.match(rest)
    if not word:
        return None
    if NAME.fullmatch(word.group(0)) and is_ours(rest, word, seen_before, 0):
        return with_following_nouns(describe(rest, word), rest, word)
    # after 'called' a capitalized phrase is a name ('we term Robust Harmful Features');
    # after 'our' only a coined one
    if word.group(0)[0].isupper() and not naming.group(0).lower().startswith(("our", "the")):
        run = CAPITALIZED_RUN.match(rest)
        assert run is not None  # NAMED_WORD matched there, starting with a capital A-Z
        phrase = run.group(0)
        phrase = re.sub(r"\s+(?:of|for|and|in|with)$", "", phrase)
        return phrase if " " in phrase else describe(rest, word)
    return None


def with_following_nouns(label: str, sentence: str, match: re.Match[str]) -> str:
    """A bare name with the lowercase words after it that end its clause ('Sigma-Delta
    networks', 'Littlewood-Richardson polynomials')."""
    if label != match.group(0):
        return label
    following = FOLLOWING_NOUNS.match(sentence, match.end())
    if following and not any(w in DANGLING_WORDS for w in following.group(0).split()):
        return label + following.group(0)
    return label


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


class NamesBefore:
    """The names of the sentences before the one named_method reads, in lowercase, as a
    container: a sentence's names are found only when one is asked for (is_ours asks of a
    name that stands where the paper's own would; most abstracts have none)."""

    __slots__ = ("names", "unread")

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.unread: list[str] = []  # sentences whose names are not in `names` yet

    def __contains__(self, name: object) -> bool:
        for sentence in self.unread:
            self.names.update(w.lower() for w in names_in(sentence))
        self.unread.clear()
        return name in self.names


def named_method(
    sentences: Iterable[str], intros: list[re.Match[str] | None] | None = None
) -> str | None:
    """The method the paper introduces, as a label, or None. `intros`: a list to which the
    first_intro of INTRO of each sentence read is added (None where the prefilter passed it
    over), for introduced_thing to read when no method is named."""
    seen_before = NamesBefore()  # names of the sentences before this one
    introducing: tuple[str, int] | None = None  # the first sentence that introduces a thing
    for sentence in sentences:
        lower = ascii_lower(sentence)
        intro = (
            first_intro(INTRO, sentence, lower) if lowered_may_hold(lower, INTRO_GROUPS) else None
        )
        namings = []
        if lowered_may_hold(lower, NAMING_GROUPS):
            naming, searched = in_lowercase(NAMING, sentence, lower)
            namings = list(naming.finditer(searched))
        if intros is not None:
            intros.append(intro)
        found = (intro or namings) and name_in(sentence, intro, namings, seen_before)
        if found:
            return described(*found, sentence, introducing)
        if intro and introducing is None:
            introducing = sentence, intro.end()
        seen_before.unread.append(sentence)
    return None


# what name_in finds: the label, where the words that may describe a bare name start and end
# (None: nowhere), and where the name ends
Found = tuple[str, int | None, int, int]


def name_in(
    sentence: str,
    intro: re.Match[str] | None,
    namings: list[re.Match[str]],
    seen_before: Container[str],
) -> Found | None:
    """The paper's method named in this sentence, found after INTRO or a naming phrase."""
    for naming in namings:
        if not intro and not AUTHORS_VOICE.search(sentence, 0, naming.end()):
            break  # 'a recent architecture named PWNs': not what the paper introduces
        named = named_after(sentence, naming, seen_before)
        if named:
            verb = intro or first_intro(TOPIC, sentence)  # 'we investigate an algorithm, termed'
            described_from = verb.end() if verb and verb.end() <= naming.start() else None
            name_end = sentence.find(named, naming.end())
            name_end = name_end + len(named) if name_end >= 0 else naming.end()
            return named, described_from, naming.start(), name_end
    start = intro.end() if intro else namings[0].end()
    # a quote mark first, by memchr: few sentences hold one, and the pattern's lazy
    # prefix is tried at every character up to 40 on
    quoted = QUOTED_NAME.match(sentence, start) if holds_any(sentence, QUOTES) else None
    if quoted:  # 'we present innovative approaches, "Reverse LoRA" for extraction'
        return quoted.group(1), start, quoted.start(1), quoted.end()
    # MAY_NAME first: what every NAME match holds, found without NAME's lookarounds at every
    # character (in most sentences that introduce something, no name follows)
    names = NAME.finditer(sentence, start) if MAY_NAME.search(sentence, start) else ()
    for match in names:
        if ANOTHER_DEFINED.match(sentence, match.end()):
            continue  # 'marginal structured SVM (MSSVM)': the name is the one defined
        if not intro and not set(sentence[start : match.start()].lower().split()) <= NAMING_LEAD:
            break  # 'our model naturally covers the Dawid-Skene estimator': no naming
        if is_ours(sentence, match, seen_before, start):
            match = with_capitalized_tail(sentence, match)
            direct = not sentence[start : match.start()].strip(" ,")
            label = acronym_after(sentence, match.start()) or describe(sentence, match, direct)
            label = with_following_nouns(label, sentence, match) if direct else label
            return label, start, match.start(), match.end()
    if intro:  # 'We present Jiffy, a simple and scalable distance metric'
        word = NAMED_WORD.match(sentence, intro.end() + 1)
        if word and word.group(0)[0].isupper() and APPOSITION.match(sentence[word.end() :]):
            return describe(sentence, word), None, word.start(), word.end()
    return None


def described(
    label: str,
    described_from: int | None,
    name_start: int,
    name_end: int,
    sentence: str,
    introducing: tuple[str, int] | None,
) -> str:
    """A bare name with what the abstract says it is: the words before it in its sentence
    ('a new Q&A architecture called QANet'), else the clause after it ('ReMamba, which
    enhances ...'), else what the first sentence that introduces something introduces
    ('we propose a novel approach ... We train our model MMDuet2')."""
    if ":" in label or not all(w[0].isupper() or w in FUNCTION_WORDS for w in label.split()):
        return label  # described already, or 'Sigma-Delta networks'
    description = ""
    if described_from is not None:
        description = description_before(sentence, described_from, name_start)
    clause = WHICH_CLAUSE.match(sentence, name_end)
    if clause and len(description.split()) <= 2:
        # 'MB-TAIL, that achieves ...' says more than 'an algorithm, MB-TAIL'
        return f"{label}, {end_of_clause(clause.group(1))}"
    if description:
        return f"{label}: {description}"
    as_we = AS_WE.search(sentence, 0, name_start)
    if as_we:
        return f"{label}: {as_we.group(1)}"
    if introducing is not None:
        thing = object_phrase(*introducing)
        if thing and label not in thing:
            return f"{label}: {thing[0].lower() + thing[1:] if thing[1:2].islower() else thing}"
    return label


# INTRO, TOPIC and NAMING spell every letter in lowercase: in an ASCII sentence they match, with
# the same spans, where their case-sensitive forms match in its lowercase (of the same length),
# a quicker search than IGNORECASE's, which folds every character it compares
# and there INTRO and TOPIC start with AUTHORS' branches each beginning with its first letter,
# the word boundary checked behind it (as CITATION does: `w(?<!\ww)` holds where `\bw` does):
# SRE then skips to the next 'w', 't' or 'o' where it tried the whole pattern at every character
AUTHORS_BY_FIRST_LETTER = (
    r"(?:w(?<!\ww)e|t(?<!\wt)his (?:paper|work|article|study|note|thesis|chapter)"
    r"|o(?<!\wo)ur (?:work|paper|study))\b"
)


def lowercase_pattern(pattern: re.Pattern[str]) -> re.Pattern[str]:
    source = pattern.pattern
    if source.startswith(AUTHORS):
        source = AUTHORS_BY_FIRST_LETTER + source.removeprefix(AUTHORS)
    return re.compile(source)


LOWERCASE = {pattern: lowercase_pattern(pattern) for pattern in (INTRO, TOPIC, NAMING)}


def in_lowercase(
    pattern: re.Pattern[str], sentence: str, lower: str | None = None
) -> tuple[re.Pattern[str], str]:
    """The pattern (one of LOWERCASE) and the string to search for it in the sentence: its
    case-sensitive form and the lowercase (`lower`, when given) of an ASCII sentence, else
    both as they are. A match is then one in the lowercase: its span is the sentence's."""
    if sentence.isascii():
        return LOWERCASE[pattern], sentence.lower() if lower is None else lower
    return pattern, sentence


def first_intro(
    pattern: re.Pattern[str], sentence: str, lower: str | None = None
) -> re.Match[str] | None:
    """The first match of INTRO or TOPIC whose 'we' is the subject of a main clause, not of a
    relative one ('the approach we developed enables'); in the sentence's lowercase when it is
    ASCII (see in_lowercase), `lower` when given."""
    pattern, sentence = in_lowercase(pattern, sentence, lower)
    match = pattern.search(sentence)  # most sentences: none, or one that is the main clause's
    while match is not None:
        if match.start() == 0 or opens_main_clause(sentence, match):
            return match
        match = pattern.search(sentence, match.start() + 1)
    return None


def opens_main_clause(sentence: str, match: re.Match[str]) -> bool:
    if match.group(0)[:2].lower() != "we":
        return True
    # the clause's words, looked for among the last few hundred characters: a sentence holding
    # many 'we' is read once, not once a 'we'
    before = sentence[max(0, match.start() - CLAUSE_LOOKBACK) : match.start()]
    clause = before[max(map(before.rfind, ",;:(–—")) + 1 :].split()
    if not clause:
        return True
    return clause[0].lower() not in DETERMINERS and clause[-1].lower() not in RELATIVE_WORDS


def with_capitalized_tail(sentence: str, match: re.Match[str]) -> re.Match[str]:
    """The name with the capitalized words right after it ('GenOpt Agent'), as a match."""
    tail = CAPITALIZED_TAIL.match(sentence, match.end())
    if not tail or tail.group(0).split()[0].lower() in DANGLING_WORDS:
        return match
    whole = re.compile(re.escape(match.group(0) + tail.group(0)))
    return whole.match(sentence, match.start()) or match


def end_of_clause(phrase: str) -> str:
    """The phrase up to where another clause starts (', and we show', '; ', ' – ')."""
    end = CLAUSE_END.search(phrase)
    return phrase[: end.start()] if end else phrase


def object_phrase(sentence: str, start: int, claims: bool = False) -> str | None:
    """What the verb ending at `start` introduces, up to the end of its clause, with a capital
    and without its article ('A simple nearest-neighbor approach that ...' from 'we present a
    simple ...'); None when the verb is followed by no thing ('we propose to', 'how').
    `claims`: a verb that may be followed by a clause ('we show that X', 'how X')."""
    rest = LEADING_FILLER.sub("", sentence[start:], count=1)
    following = FOLLOWING.match(rest) if claims else None
    if following:
        rest = rest[following.end() :]  # 'we study the following question: when ...'
    words = rest.split(None, 1)
    if not words:
        return None
    first = words[0].lower().strip(",")
    if claims and first == "that" and len(words) == 2:
        rest = words[1]  # 'we show that X ...': the claim
        first = rest.split(None, 1)[0].lower()
        if first in VAGUE_OPENERS or first in NOT_INTRODUCED:
            return None
    elif claims and first in CLAUSE_OPENERS:
        pass
    elif first in NOT_INTRODUCED or first in NOT_THE_SUBJECT or (claims and first in VAGUE_OPENERS):
        return None  # 'we propose to', 'we show similar results'
    elif claims and PLURAL_CLASS.fullmatch(words[0]):
        return None  # 'we study LLMs ...': a kind of model says little of the paper
    else:
        rest = OPENING.sub("", rest, count=1).strip()
    rest = end_of_clause(rest.replace(TO_OUR_KNOWLEDGE, "")).strip().rstrip(".!?")
    if claims and ANAPHORA.search(" ".join(rest.split()[:ANAPHORA_WORDS])):
        return None  # 'why these perturbations work': it leans on what came before
    if len(rest.split()) < 3 or CITATION.search(rest) or not rest[:1].isalnum():
        return None  # 'several explanations': too little to tell the paper by
    return rest[0].upper() + rest[1:]


def introduced_thing(
    sentences: Sequence[str], intros: Sequence[re.Match[str] | None] | None = None
) -> str | None:
    """'We present a simple nearest-neighbor approach that ...' -> 'A simple nearest-...';
    else what a sentence says is presented, else what the authors study or show.
    `intros`: each sentence's first_intro of INTRO, as named_method found them (None: found
    here; named_method has them for most abstracts, which name no method)."""
    if intros is None:
        # the prefilter named_method uses: most sentences of real abstracts are passed over
        intros = [first_intro(INTRO, s) if may_hold(s, *INTRO_GROUPS) else None for s in sentences]
    for sentence, intro in zip(sentences, intros):
        thing = intro and object_phrase(sentence, intro.end())
        if thing:
            return thing
    for sentence in sentences:
        passive = PASSIVE.match(sentence) if may_hold(sentence, *PASSIVE_GROUPS) else None
        subject = passive.group(1) if passive else ""
        if subject and not CITATION.search(subject) and not FINITE_VERB.search(subject):
            subject = OPENING.sub("", subject, count=1).strip()
            if len(subject.split()) >= 4 and subject.split()[0].lower() not in NOT_INTRODUCED:
                return subject[0].upper() + subject[1:]
    for sentence in sentences[:TOPIC_SENTENCES]:
        topic = first_intro(TOPIC, sentence) if may_hold(sentence, *TOPIC_GROUPS) else None
        if topic and SECONDARY.search(topic.group(0)):
            continue  # 'we further derive ...': not what the paper is about
        thing = topic and object_phrase(sentence, topic.end(), claims=True)
        if thing:
            return thing
    return None


def first_sentence(sentences: Sequence[str]) -> str:
    """The first sentence that cites nothing and starts as a sentence does (not 'and ...'
    after a wrong cut), else the first sentence."""
    for sentence in sentences:
        first = sentence.split(None, 1)[0]
        if CITATION.search(sentence) or first.lower() in NOT_A_SENTENCE_START:
            continue
        if not has_content(sentence):
            continue  # '.', '(1)'

        if first[0].isalpha() and first[0].islower():
            continue
        return sentence
    return sentences[0]


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


def readable_text(text: str) -> str:
    """The abstract's plain text as labels read it: without URLs and citations, one space
    between words."""
    # ':' by memchr first: "://" is a slower search, and most abstracts hold no ':'
    if (":" in text and "://" in text) or "github.com" in text:
        text = URL.sub("", text)
    return collapse_spaces(drop_citations(text))


def title_label(title: str) -> str:
    """A title as its label: the words a reader sees, its LaTeX and Markdown read as an
    abstract's are (`\\textit{in vivo}` -> `in vivo`, ``` ``Factual'' ``` -> `“Factual”`,
    `$\\mathcal{X}$-Armed` -> `X-Armed`), so that search and labels hold no markup; pages
    render the title itself. A title that reads as nothing keeps its source text."""
    return plain_text(title) or collapse_spaces(title)


def derive_label(text: str) -> str:
    """A heading for a paper that has no title, from its abstract's plain text."""
    # the text is cut as named_method reads on: it stops at the sentence that names the method,
    # the second of most abstracts (cutting them all cost a large share of a label)
    sentences: list[str] = []
    intros: list[re.Match[str] | None] = []
    label = named_method(read_sentences(readable_text(text), sentences), intros)
    if label is None:  # named_method has read every sentence, and found each one's intro
        if not sentences:
            return ""
        label = introduced_thing(sentences, intros) or first_sentence(sentences)
    # a phrase of function words and marks cuts down to nothing: the first sentence then
    return cut_at_word(label) or cut_at_word(first_sentence(sentences))


def label_phrases(text: str) -> list[str]:
    """What a paper's label may add to tell it from others: the thing it introduces, then
    each of its sentences, in order, each as a label reads it."""
    sentences = [s.strip() for s in split_sentences(readable_text(text)) if s.strip()]
    phrases = [introduced_thing(sentences) or ""]
    phrases += [end_of_clause(s).rstrip(".!?") for s in sentences]
    return [p for p in phrases if p]


def label_head(label: str) -> str:
    """The part of a shared label that stays ahead of the distinguishing part: its name, or
    the whole label when it is short and not cut; '' for a sentence, which the distinguishing
    part replaces (a cut opening many abstracts share tells a reader nothing)."""
    if ": " in label:
        return label.split(": ", 1)[0]
    if len(label) <= SHARED_HEAD_LENGTH and not label.endswith("…"):
        return label
    return ""


def joined_label(head: str, phrase: str) -> str:
    """'head: phrase' as a label (the phrase without its capital), or the phrase alone."""
    if not head or phrase.lower().startswith(head.lower()):
        return cut_at_word(phrase)
    if phrase[1:2].islower():
        phrase = phrase[0].lower() + phrase[1:]
    return cut_at_word(f"{head}: {phrase}")


def distinguished_labels(papers: Iterable[tuple[str, str, str | None]]) -> dict[str, str]:
    """New labels for the derived labels that more than one paper has.

    `papers`: (paper id, label, abstract plain text, or None where the label is a real title,
    which is never changed) of the catalog's papers: all of them, or (as the build gives them)
    those whose label another paper also has; a label no other paper has is left. Each derived
    label gets a second part from its own abstract that no other paper of its group could
    get (the thing it introduces, else the first sentence of its own); a paper with none
    (an abstract made of the others' sentences) gets its rank among the group's ids. Returns
    {paper id: new label}; the same papers in any order give the same labels."""
    groups: dict[str, list[tuple[str, str | None]]] = {}
    for pid, label, text in papers:
        groups.setdefault(label, []).append((pid, text))
    renamed: dict[str, str] = {}
    for label, members in groups.items():
        derived = sorted((pid, text) for pid, text in members if text is not None)
        if len(members) < 2 or not derived:
            continue
        head = label_head(label)
        # the papers of a group often share sentences (versions, copies): each joined once
        joined = functools.cache(functools.partial(joined_label, head))
        choices = {}
        for pid, text in derived:
            finals = dict.fromkeys(joined(p) for p in label_phrases(text))
            finals.pop(label, None)
            choices[pid] = [f for f in finals if f and f != head]
        counts = Counter(final for finals in choices.values() for final in finals)
        for rank, (pid, _) in enumerate(derived, start=1):
            unique = next((f for f in choices[pid] if counts[f] == 1), None)
            renamed[pid] = unique or f"{label.rstrip('…')} ({rank})"
    return renamed
