"""The `Language` interface: everything the pipeline needs to know about one language.

Why an interface: normalization form, script test, word and sentence splitting, boilerplate patterns, filter
thresholds, morphemes, PII recognizers and surrogates, the model card's example and the evaluation suite all
differ between languages; keeping them in one folder per language (`corpora/lang/<code>/`, its `Language`
registered once in `corpora.lang.LANGUAGES`) means a second language is one new folder, not edits across
filters, dedup, decontamination, PII, the tokenizer and the card.

`PackFacts` is here, not in `corpora.pii`: it is what a language states about its PII pack without importing
it (a pack imports presidio), so a language's `__init__` can state it with nothing but this light module.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class PackFacts:
    """What the light parts of the pipeline (recipe validation, the replace stage, stage keys, the CLI) need of a
    language's PII pack without importing it (a pack imports presidio): a language's `Language.pii`. The pack
    itself (`pack`) holds the recognizers; everything else that differs by language is here, so no module
    outside the language folders branches on a language code.

    - `pack`: "module:attr" of the language's `corpora.pii.common.PiiLanguage` (its recognizers), imported by
      `corpora.pii.engine.pii_language` on first use.
    - `types`, `optional`: what the pack detects by default, and only when named in `optional_types`.
    - `structured`: the structured identifiers among `types` (the evaluation's `structured` row).
    - `faker_locale`: Faker's locale for the surrogates of names, e-mails and addresses.
    - `surrogates`: "module:function" of the pack's own surrogates for the types whose format or grammar is its
      own (`(type, original, rng, faker, after) -> str | None`, `after` the text right after the span; None: the
      shared rules of `corpora/pii/surrogates.py`).
    - `key_packages`: the distributions whose versions are part of the `pii_detect` stage's key (data the pack
      reads at run time: a MeCab dictionary, python-stdnum's checks).
    - `presidio_region`, `presidio_recognizers`: for the baseline of presidio's shipped recognizers, the phone
      region its PhoneRecognizer must be given and the country-specific recognizer classes it ships.
    """

    pack: str
    types: tuple[str, ...]
    faker_locale: str
    presidio_region: str
    optional: tuple[str, ...] = ()
    structured: tuple[str, ...] = ()
    surrogates: str | None = None
    key_packages: tuple[str, ...] = ()
    presidio_recognizers: tuple[str, ...] = ()


class Language:
    """Base class; subclasses set the ClassVars and may override the splitters. One instance per language, in
    its folder's `__init__.py`, registered in `corpora.lang.LANGUAGES`."""

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
    # its PII pack (recognizers, surrogates, light facts), or None: a language without one cannot run the
    # `pii_detect` stage (its params refuse the language: "no PII recognizers for language ...")
    pii: ClassVar[PackFacts | None] = None
    # the model card's fill-mask example, with `{mask}` where the mask token goes (None: the card has none)
    card_example: ClassVar[str | None] = None
    # the fine-tuning suite of the language's benchmark (`finetune.registry.SUITES`; None: none registered)
    evaluation_suite: ClassVar[str | None] = None

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
    # the PyPI distribution of the MeCab dictionary `morphemes` uses (fingerprinted in the pretokenize key;
    # the `pretokenize` stage refuses a language without one)
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
