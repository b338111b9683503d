"""Morpheme pre-tokenization: raw text -> training units for the subword trainer, spacing kept recoverable.

Why every eojeol is analysed on its own: mecab-ko-dic penalises a particle right after a space
(`left-space-penalty-factor` in its dicrc), but only the mecab-ko fork reads that setting. Stock MeCab 0.996
(what mecab-python3 ships) ignores it, so `아버지 가방에` comes out as 아버지 / 가 / 방 / 에. Analysed alone,
`가방에` starts at BOS, where a particle is expensive, and comes out as 가방 / 에. Eojeols repeat heavily
(Zipf), so results are cached per process; the cache is exact because an isolated eojeol's analysis
depends on nothing else.

The output format (one line of units per input line, units separated by one space):
  `unit`    starts an eojeol (and a word of the exported tokenizer);
  `##unit`  continues the eojeol and the word: a non-initial morpheme, trained as a WordPiece continuation;
  `@@unit`  continues the eojeol but starts a new word of the exported tokenizer: punctuation, CJK
            ideographs and PII placeholders are words of their own for BertPreTokenizer / the added-token
            matcher, so the unit after them is looked up in its word-initial form.
So `restore()` gets the (normalized) text back exactly, and the vocab stage only has to turn `##` into a
continuation and drop `@@` (see tokenizer/train.py). A literal `#` or `@` in the text is always a unit of its
own (it is punctuation), so the markers are unambiguous.

Text is first normalized with the exact normalizer of the exported tokenizer (BertNormalizer without
lowercasing or accent stripping; its Chinese-character padding is replaced by the `@@` rule above so that
eojeol boundaries survive).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from itertools import accumulate
from typing import Protocol

from corpora.lang import get_language
from pipeline.memo import Memo

CONT = "##"  # continues eojeol and word
GLUE = "@@"  # continues eojeol, new word
_CONT_SEP = " " + CONT

SPECIAL_TOKENS = ("[CLS]", "[PAD]", "[SEP]", "[UNK]", "[MASK]")  # kept whole, like PII placeholders


class Analyzer(Protocol):
    """The language-specific piece: where an eojeol (a whitespace-free string) splits into morphemes."""

    name: str

    def boundaries(self, eojeol: str) -> tuple[int, ...]:
        """Offsets (0 < b < len) of morpheme boundaries inside `eojeol`."""
        ...

    def surfaces(self, eojeol: str) -> list[str]:
        """`eojeol` cut at its boundaries."""
        ...


class MecabError(RuntimeError):
    """MeCab's output does not reproduce the input (so its offsets cannot be trusted)."""


class MecabAnalyzer:
    """MeCab with the language's dictionary (`Language.morphemes`), one whitespace-free chunk at a time (for
    Korean an eojeol: see `corpora.lang.ko.Korean.morphemes` for why)."""

    name = "mecab"

    def __init__(self, language: str) -> None:
        self._morphemes = get_language(language).morphemes

    def surfaces(self, eojeol: str) -> list[str]:
        """Morphemes of `eojeol` (an eojeol without isolated characters: the fast path of `split_eojeol`)."""
        surfaces = self._morphemes(eojeol)
        if "".join(surfaces) != eojeol:
            raise MecabError(f"MeCab output {surfaces!r} does not reproduce the eojeol {eojeol!r}")
        return surfaces

    def boundaries(self, eojeol: str) -> tuple[int, ...]:
        surfaces = self.surfaces(eojeol)
        out, pos = [], 0
        for s in surfaces[:-1]:
            pos += len(s)
            out.append(pos)
        return tuple(out)


class NoAnalyzer:
    """The plain-text arm of the ablation: no morpheme split, only the exported tokenizer's own word split."""

    name = "none"

    def surfaces(self, eojeol: str) -> list[str]:
        return [eojeol]

    def boundaries(self, eojeol: str) -> tuple[int, ...]:
        return ()


def make_analyzer(name: str, language: str) -> Analyzer:
    if name == "mecab":
        return MecabAnalyzer(language)
    if name == "none":
        return NoAnalyzer()
    raise ValueError(f"unknown analyzer {name!r} (expected 'mecab' or 'none')")


def is_isolated(ch: str) -> bool:
    """A character that BertPreTokenizer / BertNormalizer(handle_chinese_chars) always makes a word of its own.

    Hand-written because tokenizers does not expose the predicate; mirrors `is_bert_punc` and
    `is_chinese_char` of tokenizers (tests check it against BertPreTokenizer on real text).
    """
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    if unicodedata.category(ch).startswith("P"):
        return True
    return (
        0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F or 0x2B920 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


# CJK ideograph ranges of `is_isolated` (CJK ideographs are letters, so `str.isalnum` does not catch them).
_CJK_RE = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df\U0002a700-\U0002b73f"
                     "\U0002b740-\U0002b81f\U0002b920-\U0002ceaf\U0002f800-\U0002fa1f]")


# Every isolated character is matched by this (`\w` is str.isalnum plus `_`); `is_isolated` decides.
_CANDIDATE_RE = re.compile(r"[^\w]|_|" + _CJK_RE.pattern)


def has_no_isolated(eojeol: str) -> bool:
    """Fast (C-speed) test for the common eojeol: letters and digits only, no CJK ideograph. Punctuation
    (category P) and ASCII symbols are never alphanumeric, so such an eojeol has no isolated character."""
    return eojeol.isalnum() and _CJK_RE.search(eojeol) is None


@lru_cache(maxsize=1)
def _normalizer():
    from tokenizers.normalizers import BertNormalizer

    # Same settings as the exported tokenizer except the CJK padding, which `is_isolated` handles.
    return BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)


def normalize_line(line: str) -> str:
    """The exported tokenizer's normalization of one line. A printable line (no control, format, unassigned
    or separator character other than the ASCII space) without U+FFFD is its own normalization, so the Rust
    call is skipped for it (tests check the shortcut against the normalizer)."""
    if line.isprintable() and "\ufffd" not in line:
        return line
    return _normalizer().normalize_str(line)


def placeholder_regex(tokens: Iterable[str] = ()) -> re.Pattern[str]:
    """Matches the tokens the exported tokenizer keeps whole: its special tokens and the declared PII
    placeholders. Only declared ones: an undeclared `[FOO]` is split by the exported tokenizer, so it must
    be split here too."""
    toks = set(tokens) | set(SPECIAL_TOKENS)
    for t in toks:
        if not t or has_no_isolated(t):
            raise ValueError(f"protected token {t!r} must contain punctuation (e.g. brackets, like [PHONE])")
    return re.compile("|".join(re.escape(t) for t in sorted(toks, key=lambda t: (-len(t), t))))


def split_eojeol(eojeol: str, analyzer: Analyzer, protect: re.Pattern[str]) -> list[str]:
    """Units of one eojeol with their markers (module docstring)."""
    if has_no_isolated(eojeol):  # and so no protected token either: they all contain brackets
        first, *rest = analyzer.surfaces(eojeol)
        return [first, *(CONT + s for s in rest)]
    surfaces = analyzer.surfaces(eojeol)
    if protect.search(eojeol) is None:
        units = _units_of_surfaces(surfaces)
        if units is not None:
            return units
    n = len(eojeol)
    # forced: offsets where the exported tokenizer starts a new word; inside: offsets MeCab may not split
    forced: set[int] = set()
    inside: set[int] = set()
    for m in protect.finditer(eojeol):
        forced.update((m.start(), m.end()))
        inside.update(range(m.start() + 1, m.end()))
    for m in _CANDIDATE_RE.finditer(eojeol):  # the few non-alphanumeric or CJK characters, not every one
        i = m.start()
        if _is_isolated_char(m.group()) and i not in inside and (i + 1) not in inside:
            forced.add(i)
            forced.add(i + 1)
    cuts = set(accumulate(map(len, surfaces)))  # morpheme ends
    if inside:
        cuts -= inside
    cuts |= forced
    cuts.discard(0)
    cuts.add(n)
    units, start = [], 0
    for b in sorted(cuts):
        units.append(_unit(eojeol[start:b], start == 0, start in forced))
        start = b
    return units


def _unit(piece: str, first: bool, glued: bool) -> str:
    """`piece` as a unit: bare when it begins the eojeol, else with the glue (`@@`) or continuation marker. One
    place for the marking rule, which both paths of `split_eojeol` must apply alike (tests/test_tokenizer_mecab.py
    holds the fast path's units to the general path's)."""
    if first:
        return piece
    return (GLUE if glued else CONT) + piece


def _units_of_surfaces(surfaces: list[str]) -> list[str] | None:
    """The common case of `split_eojeol`, without offset sets: every isolated character is a morpheme of its
    own (`있다.` -> 있 / 다 / .), so the cuts are exactly the morpheme boundaries and a unit is glued (`@@`)
    when it is, or follows, an isolated character. None when that does not hold (the general path decides)."""
    units: list[str] = []
    prev_isolated = False
    for s in surfaces:
        if s.isalnum() and _CJK_RE.search(s) is None:  # `has_no_isolated`, inlined
            isolated = False
        elif len(s) == 1:
            isolated = _is_isolated_char(s)
        else:
            return None
        units.append(_unit(s, not units, isolated or prev_isolated))
        prev_isolated = isolated
    return units


# Characters repeat (`.`, `,`, brackets): the predicate is pure, so its answers are memoized.
_is_isolated_char = lru_cache(maxsize=1 << 12)(is_isolated)


# A whitespace-free chunk of a language without spaces is often a whole line: caching those would hold the
# corpus, not its vocabulary. Korean eojeols are far shorter, so this changes nothing there.
MAX_CACHED_CHARS = 64


def _cacheable(eojeol: str) -> bool:
    return len(eojeol) <= MAX_CACHED_CHARS


class Pretokenizer:
    """Analyzer + protected tokens, with the units of each distinct eojeol cached (per process).

    `language`: its analyzer (`Language.morphemes`) and its kind of exported tokenizer. A language whose
    words are spaced (Korean) is tokenized at inference by BertPreTokenizer, so the characters it isolates
    (punctuation, CJK ideographs) start new words (`@@`, `split_eojeol`). A language without spaces (Japanese)
    gets a Metaspace tokenizer that isolates nothing: a chunk's units are its morphemes, the protected tokens
    kept whole, every unit after the first marked `##` (`_split_unspaced`)."""

    def __init__(self, analyzer: Analyzer | str = "mecab", protected: Iterable[str] = (),
                 cache_size: int = 1 << 18, *, language: str):
        self.analyzer = make_analyzer(analyzer, language) if isinstance(analyzer, str) else analyzer
        self.protect = placeholder_regex(protected)
        self._surfaces = self.analyzer.surfaces
        self._spaced = get_language(language).whitespace_words
        # eojeol -> its units joined by single spaces
        self._cache: Memo[str, str] = Memo(self._split if self._spaced else self._split_unspaced, cache_size,
                                           keep=_cacheable)
        self._units = self._cache.__getitem__

    def _split(self, eojeol: str) -> str:
        if eojeol.isalnum() and _CJK_RE.search(eojeol) is None:  # `has_no_isolated`, inlined: the hot path
            return _CONT_SEP.join(self._surfaces(eojeol))  # CONT before every morpheme but the first
        return " ".join(split_eojeol(eojeol, self.analyzer, self.protect))

    def _split_unspaced(self, chunk: str) -> str:
        units: list[str] = []
        pos = 0
        for m in self.protect.finditer(chunk):
            if m.start() > pos:
                units += self._surfaces(chunk[pos:m.start()])
            units.append(m.group())
            pos = m.end()
        if pos < len(chunk):
            units += self._surfaces(chunk[pos:])
        return _CONT_SEP.join(units)

    def eojeol_units(self, eojeol: str) -> tuple[str, ...]:
        """The units of one eojeol (a whitespace-free string), cached."""
        return tuple(self._units(eojeol).split(" "))

    def line(self, line: str) -> str:
        return " ".join(map(self._units, normalize_line(line).split()))

    def text(self, text: str) -> str:
        """A document's units; line breaks are kept (each line is pre-tokenized on its own)."""
        if "\n" not in text:
            return self.line(text)
        return "\n".join(map(self.line, text.split("\n")))


def pretokenize_text(text: str, analyzer: Analyzer | str = "mecab", protected: Iterable[str] = (),
                     *, language: str) -> str:
    """One-off convenience; long runs should keep one `Pretokenizer` for its cache."""
    return Pretokenizer(analyzer, protected, language=language).text(text)


def restore(pretokenized: str) -> str:
    """The normalized text back from units: markers glue a unit to the one before it."""
    out_lines = []
    for line in pretokenized.split("\n"):
        parts: list[str] = []
        for u in line.split(" "):
            if len(u) > 2 and u[:2] in (CONT, GLUE):
                parts.append(u[2:])
            elif u:
                parts.append(" " + u if parts else u)
        out_lines.append("".join(parts))
    return "\n".join(out_lines)


def unit_starts(units: Iterable[str]) -> set[int]:
    """Offsets inside an eojeol where its units (from `split_eojeol`) start, 0 excluded."""
    pos, out = 0, set()
    for u in units:
        if pos:
            out.add(pos)
        pos += len(u) - (2 if pos else 0)
    return out
