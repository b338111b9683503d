"""Gopher repetition (Rae et al. 2021, table A1) with FineWeb-2's Korean thresholds, on eojeol n-grams.

Same statistics as datatrove's GopherRepetitionFilter (duplicate line/paragraph fractions, top n-gram and
duplicated n-gram character fractions over the document length). Hand-written rather than calling datatrove
because datatrove needs Kiwi for Korean words (slow, and an extra dependency) and because exact shortcuts skip
most of the n-gram work (issue 49: this filter was 40 % of the filter stage's CPU). Each skips a test only where
the test cannot fail, so the first failing test, and hence the reason code, is unchanged:

- every word of an n-gram seen c times is itself seen at least c times, so a top n-gram's share is at most
  max over c of (n * L(c) + n - 1) * c / chars, L(c) the longest word seen at least c times;
- a repeated n-gram lies in a run of at least n consecutive repeated words, so the duplicated n-gram characters
  are at most those of the words in such runs (and a text without a run of n_min has no repeated n_min-gram).
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


def _top_bound(by_count: list[tuple[int, int]], n: int) -> int:
    """The most (characters + spaces) * count of any repeated n-gram: `by_count` holds (count, length) of each
    repeated word, counts descending; at each count c the longest word seen at least c times bounds every word of
    an n-gram seen c times."""
    best = longest = 0
    for c, length in by_count:
        longest = max(longest, length)
        best = max(best, (n * longest + n - 1) * c)
    return best


def _repeated_runs(words: list[str], counts: Counter[str]) -> list[tuple[int, int]]:
    """(words, characters) of each maximal run of consecutive words that occur more than once."""
    runs: list[tuple[int, int]] = []
    k = chars = 0
    for w in words:
        if counts[w] > 1:
            k += 1
            chars += len(w)
        elif k:
            runs.append((k, chars))
            k = chars = 0
    if k:
        runs.append((k, chars))
    return runs


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
        counts = Counter(words)
        if len(counts) == len(words):  # no word repeats: no n-gram can
            return None
        by_count = sorted(((c, len(w)) for w, c in counts.items() if c > 1), reverse=True)
        for n, frac in sorted(th.top_ngram_fracs.items()):
            if len(words) < n or _top_bound(by_count, n) / n_chars <= frac:
                continue  # cannot fail (the first bound of the module docstring)
            gram, count = Counter(_ngrams(words, n)).most_common(1)[0]
            if count == 1:  # no repeated n-gram, hence no longer one either
                return None
            # Deviation from datatrove: an n-gram seen once is not repetition. Gopher/datatrove count it, which
            # on eojeol n-grams (about twice as long as Kiwi-morpheme n-grams) fails short clean texts.
            if (sum(map(len, gram)) + n - 1) * count / n_chars > frac:  # joined with spaces, as in Gopher
                return f"top_{n}_gram"
        if th.dup_ngram_fracs:
            runs = _repeated_runs(words, counts)
            if max((k for k, _ in runs), default=0) < min(th.dup_ngram_fracs):
                return None  # no repeated n_min-gram, hence no longer one either
            for n, frac in sorted(th.dup_ngram_fracs.items()):
                if sum(c for k, c in runs if k >= n) / n_chars <= frac:
                    continue  # cannot fail (the second bound of the module docstring)
                if duplicated_ngram_chars(words, n) / n_chars > frac:
                    return f"dup_{n}_gram"
        return None
