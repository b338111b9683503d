"""The `Language` interface: everything the curation stages need to know about one language.

Why an interface: normalization form, script test, word and sentence splitting, boilerplate patterns and
filter thresholds all differ between languages; keeping them in one object per language means a second
language is one new module (see `corpora.lang.ko`), not edits across filters, dedup and decontamination.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

_NON_LETTER = re.compile(r"[\W\d_]+")
_WORD = re.compile(r"\w+")

def append_stripped(out: list[tuple[int, int]], line: str, a: int, b: int) -> None:
    """Append the span `line[a:b]` without its surrounding whitespace, unless nothing is left: how every
    sentence splitter here closes a sentence."""
    while a < b and line[a].isspace():
        a += 1
    while b > a and line[b - 1].isspace():
        b -= 1
    if b > a:
        out.append((a, b))


class Language:
    """Base class; subclasses set the ClassVars and may override the splitters."""

    code: ClassVar[str]
    name: ClassVar[str]
    normalization_form: ClassVar[Literal["NFC", "NFKC", "none"]] = "NFC"
    # regex matching a run of characters that are NOT of the language's script (removed to count the script)
    non_script_re: ClassVar[re.Pattern[str]]
    # characters that end a sentence or a "well-punctuated" line (FineWeb's line punctuation check)
    terminal_punctuation: ClassVar[tuple[str, ...]] = (".", "!", "?", "…")
    # line patterns of web boilerplate (copyright lines, share/login buttons, ...): matched with .search
    boilerplate_patterns: ClassVar[Sequence[re.Pattern[str]]] = ()
    # Gopher stop-word check: function words of the language (see `stop_word_hits`)
    stop_words: ClassVar[tuple[str, ...]] = ()
    # True when `split_words` gives the text's whitespace tokens (then the text itself stands for its words in
    # the regex passes of the Gopher quality filter); False for a language without spaces between words
    whitespace_words: ClassVar[bool] = True
    # default thresholds of the filter stage: values of the knobs the filters declare (each filter's `Knobs`,
    # corpora/filters/). A knob without a default there is a language's and must be set here; one with a default
    # (the same for every language) may be. Checked by `corpora.filters.params.language_thresholds`: an unknown
    # knob or a value out of bounds is an error naming the language and the key.
    default_thresholds: ClassVar[dict[str, Any]] = {}

    # ---- characters -------------------------------------------------------------------------------
    def letter_count(self, text: str) -> int:
        """Letters of any script (Unicode letters, not digits, not punctuation)."""
        return len(_NON_LETTER.sub("", text))

    def script_count(self, text: str) -> int:
        """Characters of this language's script."""
        return len(self.non_script_re.sub("", text))

    def script_ratio(self, text: str) -> float:
        """Share of this language's script among all letters (1.0 for a text without letters: nothing foreign)."""
        letters = self.letter_count(text)
        return 1.0 if letters == 0 else self.script_count(text) / letters

    # ---- words and sentences ----------------------------------------------------------------------
    def split_words(self, text: str) -> list[str]:
        """Whitespace words (for Korean: eojeols)."""
        return text.split()

    def sentence_spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of each sentence, stripped. A newline always ends a sentence, so a language's splitter
        (`line_sentence_spans`) sees one line at a time and the offsets are put together here, once."""
        spans: list[tuple[int, int]] = []
        pos = 0
        for line in text.split("\n"):
            for a, b in self.line_sentence_spans(line):
                spans.append((pos + a, pos + b))
            pos += len(line) + 1
        return spans

    def line_sentence_spans(self, line: str) -> list[tuple[int, int]]:  # pragma: no cover - abstract
        """(start, end) of each sentence of one line (no newline in it), stripped (see `append_stripped`)."""
        raise NotImplementedError

    def split_sentences(self, text: str) -> list[str]:
        return [text[a:b] for a, b in self.sentence_spans(text)]

    # ---- words for benchmark decontamination ----------------------------------------------------------
    def match_words(self, text: str) -> list[str]:
        """The words that benchmark n-grams are made of: NFKC-normalized and case-folded, without punctuation.
        Default: `\\w+` runs of the whole text normalized at once (C speed), i.e. eojeols without their
        punctuation, so "흘렸다." in a document matches "흘렸다" in KLUE-DP."""
        return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())

    def match_word_spans(self, text: str) -> list[tuple[str, tuple[int, int]]]:
        """`match_words` word by word, each with its span in `text` (slower: to locate a match)."""
        out = []
        for m in _WORD.finditer(text):
            w = m.group()
            out.append(((w if w.isascii() else unicodedata.normalize("NFKC", w)).casefold(), m.span()))
        return out

    # ---- morphemes (pre-tokenization) ------------------------------------------------------------------
    # the PyPI distribution of the MeCab dictionary `morphemes` uses (fingerprinted in the pretokenize key)
    mecab_dictionary: ClassVar[str | None] = None

    def morphemes(self, chunk: str) -> list[str]:  # pragma: no cover - abstract
        """MeCab's surfaces of one whitespace-free `chunk`, in order; they concatenate to `chunk`."""
        raise NotImplementedError(f"language {self.code!r} has no morphological analyzer")

    # ---- boilerplate and stop words ---------------------------------------------------------------
    def is_boilerplate_line(self, line: str) -> bool:
        return any(p.search(line) for p in self.boilerplate_patterns)

    def stop_word_hits(self, words: Sequence[str], enough: int) -> int:
        """Distinct stop words present (counting stops at `enough`). Whole-word match by default."""
        sw = set(self.stop_words)
        found: set[str] = set()
        for w in words:
            if w in sw:
                found.add(w)
                if len(found) >= enough:
                    break
        return len(found)
