"""KLUE's rule for web and news sources: keep only sentences of at least N characters.

N comes from the source (`SourceSpec.min_sentence_chars`) or from `per_source` thresholds. The kept
sentences are joined with newlines; a document with none left fails with reason `short_sentences`.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from corpora.filters.base import DocView, FilterKnobs, Transform
from corpora.lang.base import Language


class SentenceFilter(Transform):
    name = "short_sentences"

    class Knobs(FilterKnobs):
        # the source's `min_sentence_chars` applies unless set here, e.g. under per_source
        min_sentence_chars: int | None = Field(
            None, ge=1, description="fewest characters of a kept sentence (KLUE's rule; default: the source's "
                                    "min_sentence_chars)")

    th: Knobs

    def __init__(self, th: BaseModel, lang: Language, source_min: int | None = None):
        super().__init__(th, lang)
        self.min_chars = self.th.min_sentence_chars if self.th.min_sentence_chars is not None else source_min

    def enabled(self) -> bool:
        return self.min_chars is not None

    def apply(self, text: str) -> tuple[str, str | None]:
        if self.min_chars is None:
            return text, None
        kept = [text[a:b] for a, b in self.lang.sentence_spans(text) if b - a >= self.min_chars]
        if not kept:
            return "", "no_long_sentence"
        return "\n".join(kept), None

    def check(self, v: DocView) -> str | None:
        return self.apply(v.text)[1]
