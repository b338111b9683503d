"""Gopher quality heuristics on eojeols, with FineWeb-2's Korean thresholds rescaled from morphemes.

Word count, mean word length, '#' and ellipsis per word, bullet and ellipsis-ending lines, the share of words
with a letter, and the stop-word test (why hand-written: speed, and the language's own words instead of
datatrove's tokenizers). The words are the language's: Korean eojeols, or for a language without spaces
(Japanese) the analyzer's tokens, so that 。 or 」 is a symbol word of its own, as in datatrove, and not a part of
a clause.

The symbol and letter tests run once per word with str methods, which settle most words by their first
character (a Hangul eojeol is a letter word, not a symbol word). Issue 49 measured them against the two
whole-text regex passes they replaced (a whole whitespace token of `_PUNCT`; one of digits, `_` and non-word
characters: look-behind-first patterns that sre tries at every character): the same counts, at a fraction of the
cost; tests keep the regexes as the oracle, on every word class.
"""

from __future__ import annotations

import re

from pydantic import Field

from corpora.filters.base import DocView, Filter, FilterKnobs, Frac

# datatrove's PUNCTUATION set (ASCII and common CJK/typographic punctuation); a word made only of these is a symbol.
_PUNCT = "!/—”:％１〈&(、━\\【#%「」，】；+^]~“《„';’{|∶´[=-`*．（–？！：$～«〉,><》)?）。…@_.\"}►»"
_PUNCT_SET = frozenset(_PUNCT)
# a letter in sre's sense: a word character that is neither a digit nor '_'
_LETTER = re.compile(r"[^\W\d_]")


def symbol_words(tokens: list[str]) -> list[str]:
    """The tokens made only of punctuation (`_PUNCT`)."""
    return [w for w in tokens if w[0] in _PUNCT_SET and not w.strip(_PUNCT)]


def no_letter_words(tokens: list[str]) -> int:
    """How many tokens hold no letter (only digits, underscores, punctuation or symbols)."""
    return sum(1 for w in tokens if not w.isalpha() and _LETTER.search(w) is None)


class GopherQualityFilter(Filter):
    name = "gopher_quality"

    class Knobs(FilterKnobs):
        # The language's (no default): FineWeb-2's per-language min/max_avg_word_length and
        # max_non_alpha_words_ratio, datatrove's min_doc_words and max_symbol_word_ratio rescaled to the language's
        # words, cited in each language pack. The others: max_doc_words 100,000, bullet lines 0.9 and ellipsis
        # lines 0.3 (datatrove defaults, kept by the pipeline), min_stop_words 2 (fineweb-2-pipeline.py).
        gopher_min_words: int | None = Field(
            ge=0, description="fewest non-symbol words (datatrove min_doc_words, in the language's words)")
        gopher_max_words: int | None = Field(
            100_000, ge=1, description="most non-symbol words (datatrove max_doc_words, kept by FineWeb-2)")
        min_avg_word_length: float | None = Field(
            ge=0, description="least mean word length (FineWeb-2, per language)")
        max_avg_word_length: float | None = Field(
            gt=0, description="most mean word length (FineWeb-2, per language)")
        max_symbol_word_ratio: float | None = Field(
            ge=0, description="most '#' or ellipses per word (datatrove 0.1 per its word, rescaled per language)")
        max_bullet_lines_ratio: Frac | None = Field(
            0.9, description="most share of lines starting with a bullet (datatrove default, kept by FineWeb-2)")
        max_ellipsis_lines_ratio: Frac | None = Field(
            0.3, description="most share of lines ending in an ellipsis (datatrove default, kept by FineWeb-2)")
        min_alpha_words_ratio: Frac | None = Field(
            description="least share of words with a letter (FineWeb-2 max_non_alpha_words_ratio, per language)")
        min_stop_words: int | None = Field(
            2, ge=0, description="fewest distinct stop words (fineweb-2-pipeline.py)")
        ordered = (("gopher_min_words", "gopher_max_words"), ("min_avg_word_length", "max_avg_word_length"))

    th: Knobs

    def check(self, v: DocView) -> str | None:
        th = self.th
        text = v.text
        words = v.words
        n_words = len(words)
        if not n_words:
            return "no_words"
        # the words as whitespace tokens: the words themselves where they are the text's whitespace tokens
        tokens = words if self.lang.whitespace_words else " ".join(words).split()
        symbols = symbol_words(tokens)
        n_real = n_words - len(symbols)
        if th.gopher_min_words is not None and n_real < th.gopher_min_words:
            return "too_few_words"
        if th.gopher_max_words is not None and n_real > th.gopher_max_words:
            return "too_many_words"
        if n_real and (th.min_avg_word_length is not None or th.max_avg_word_length is not None):
            avg = (sum(map(len, words)) - sum(map(len, symbols))) / n_real
            if th.min_avg_word_length is not None and avg < th.min_avg_word_length:
                return "short_words"
            if th.max_avg_word_length is not None and avg > th.max_avg_word_length:
                return "long_words"
        if th.max_symbol_word_ratio is not None:
            if text.count("#") / n_words > th.max_symbol_word_ratio:
                return "too_many_hashes"
            if (text.count("...") + text.count("…")) / n_words > th.max_symbol_word_ratio:
                return "too_many_ellipsis"
        lines = v.lines
        if lines and th.max_bullet_lines_ratio is not None:
            bullets = sum(1 for ln in lines if ln.lstrip().startswith(("•", "-", "·", "*", "●", "○", "■", "□", "◦")))
            if bullets / len(lines) > th.max_bullet_lines_ratio:
                return "too_many_bullets"
        if lines and th.max_ellipsis_lines_ratio is not None:
            ell = sum(1 for ln in lines if ln.rstrip().endswith(("...", "…")))
            if ell / len(lines) > th.max_ellipsis_lines_ratio:
                return "too_many_end_ellipsis"
        if th.min_alpha_words_ratio is not None:
            if 1.0 - no_letter_words(tokens) / n_words < th.min_alpha_words_ratio:
                return "few_alpha_words"
        if th.min_stop_words:
            if self.lang.stop_word_hits(words, th.min_stop_words) < th.min_stop_words:
                return "few_stop_words"
        return None
