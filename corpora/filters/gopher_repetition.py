"""Gopher repetition (Rae et al. 2021, table A1) with FineWeb-2's Korean thresholds, on eojeol n-grams.

Same statistics as datatrove's GopherRepetitionFilter (duplicate line/paragraph fractions, top n-gram and
duplicated n-gram character fractions over the document length). Hand-written rather than calling datatrove
because datatrove needs Kiwi for Korean words (slow, and an extra dependency) and because one shortcut is
exact and large: if no 5-gram repeats, no longer n-gram can, so the per-n scan is skipped for most documents.
"""

from __future__ import annotations

import re
from collections import Counter

from pydantic import Field

from corpora.filters.base import DocView, Filter, FilterKnobs, Frac, NGramFracs, find_duplicates

_PARA = re.compile(r"\n{2,}")


def _ngrams(words: list[str], n: int) -> list[tuple[str, ...]]:
    return list(zip(*[words[i:] for i in range(n)], strict=False))


def duplicated_ngram_chars(words: list[str], n: int) -> int:
    """Characters in repeated n-grams, skipping past each repeat (Gopher's definition, as in datatrove)."""
    seen: set[tuple[str, ...]] = set()
    chars = 0
    i = 0
    last = len(words) - n + 1
    while i < last:
        g = tuple(words[i : i + n])
        if g in seen:
            chars += sum(map(len, g))
            i += n
        else:
            seen.add(g)
            i += 1
    return chars


class GopherRepetitionFilter(Filter):
    name = "gopher_repetition"

    class Knobs(FilterKnobs):
        # The language's (no default): FineWeb-2's per-language dup_line_frac / top_n_grams / dup_n_grams
        # (configs/kor_Hang.yml, jpn_Jpan.yml), cited in each language pack. The paragraph and line-character
        # checks are disabled (0) in fineweb-2-pipeline.py.
        dup_line_frac: Frac | None = Field(description="most share of duplicated lines (FineWeb-2, per language)")
        dup_para_frac: Frac | None = Field(
            None, description="most share of duplicated paragraphs (disabled in fineweb-2-pipeline.py)")
        dup_line_char_frac: Frac | None = Field(
            None, description="most share of characters in duplicated lines (disabled in fineweb-2-pipeline.py)")
        dup_para_char_frac: Frac | None = Field(
            None, description="most share of characters in duplicated paragraphs (disabled in fineweb-2-pipeline.py)")
        top_ngram_fracs: NGramFracs = Field(
            description="n -> most share of characters in the top n-gram (FineWeb-2 top_n_grams, per language)")
        dup_ngram_fracs: NGramFracs = Field(
            description="n -> most share of characters in duplicated n-grams (FineWeb-2 dup_n_grams, per language)")

    th: Knobs

    def check(self, v: DocView) -> str | None:
        th = self.th
        text = v.text
        n_chars = len(text)
        if not n_chars:
            return "empty"
        if th.dup_para_frac is not None or th.dup_para_char_frac is not None:
            paras = _PARA.split(text.strip())
            dup, dup_chars = find_duplicates(paras)
            if th.dup_para_frac is not None and dup / len(paras) > th.dup_para_frac:
                return "dup_para_frac"
            if th.dup_para_char_frac is not None and dup_chars / n_chars > th.dup_para_char_frac:
                return "dup_para_char_frac"
        if th.dup_line_frac is not None or th.dup_line_char_frac is not None:
            lines = v.lines
            dup, dup_chars = find_duplicates(lines)
            if th.dup_line_frac is not None and lines and dup / len(lines) > th.dup_line_frac:
                return "dup_line_frac"
            if th.dup_line_char_frac is not None and dup_chars / n_chars > th.dup_line_char_frac:
                return "dup_line_char_frac"
        words = v.words
        # Exact shortcuts: an n-gram can repeat only if a word repeats, and only if a shorter n-gram repeats.
        if len(set(words)) == len(words):
            return None
        for n, frac in sorted(th.top_ngram_fracs.items()):
            if len(words) < n:
                continue
            gram, count = Counter(_ngrams(words, n)).most_common(1)[0]
            if count == 1:  # no repeated n-gram, hence no longer one either
                return None
            # Deviation from datatrove: an n-gram seen once is not repetition. Gopher/datatrove count it, which
            # on eojeol n-grams (about twice as long as Kiwi-morpheme n-grams) fails short clean texts.
            if (sum(map(len, gram)) + n - 1) * count / n_chars > frac:  # joined with spaces, as in Gopher
                return f"top_{n}_gram"
        if th.dup_ngram_fracs:
            n_min = min(th.dup_ngram_fracs)
            grams = _ngrams(words, n_min)
            if len(set(grams)) == len(grams):  # no repeated n_min-gram -> no repeated longer n-gram either
                return None
            for n, frac in sorted(th.dup_ngram_fracs.items()):
                if duplicated_ngram_chars(words, n) / n_chars > frac:
                    return f"dup_{n}_gram"
        return None
