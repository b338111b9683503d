"""Scoring documents: one toxicity score per document, from the whole text or from its most toxic sentence.

`level: sentence` (the default of the stage) scores each sentence (`Language.sentence_spans`) and keeps the
maximum, with the sentence's character span, as Dolma's `jigsaw_hatespeech_sentence_v2` tagger scores spans:
the model was trained on one- or two-sentence news comments, and one toxic sentence in a long article is
diluted to nothing in a document-level TF-IDF vector. `level: document` scores the text as one unit (cheaper
bookkeeping, same n-gram cost; memory grows with the longest document).

Scores are batched by characters, and the vectorizer and the linear model work row by row, so a document's
score does not depend on which other documents share its batch, its shard or its worker.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from corpora.lang import get_language
from corpora.toxicity.model import ToxicityModel

Level = Literal["sentence", "document"]
BATCH_CHARS = 200_000  # characters vectorized at once: bounds the n-gram lists scikit-learn builds in memory


@dataclass(frozen=True)
class DocScore:
    score: float  # P(hate) + P(offensive) of the scored unit (the most toxic sentence at sentence level)
    hate: float
    offensive: float
    start: int  # character span of that unit in the document text (end exclusive); 0, 0 for an empty text
    end: int


EMPTY = DocScore(0.0, 0.0, 0.0, 0, 0)


def units(text: str, level: Level, language: str) -> list[tuple[int, int]]:
    """The (start, end) spans that are scored: the sentences, or the whole (stripped) text."""
    if level == "document":
        start, end = len(text) - len(text.lstrip()), len(text.rstrip())
        return [(start, end)] if end > start else []

    return [(a, b) for a, b in get_language(language).sentence_spans(text) if b > a]


def score_documents(model: ToxicityModel, texts: Sequence[str], level: Level, language: str,
                    batch_chars: int = BATCH_CHARS) -> list[DocScore]:
    """One `DocScore` per text, in order: the unit with the highest score (the first of equal ones)."""
    best: list[DocScore] = [EMPTY] * len(texts)
    for doc_idx, spans, unit_texts in _batches(texts, level, language, batch_chars):
        p, known = model.proba(unit_texts)
        tox = np.where(known > 0, p[:, 0] + p[:, 1], 0.0)
        hate = np.where(known > 0, p[:, 0], 0.0)
        off = np.where(known > 0, p[:, 1], 0.0)
        for j, d in enumerate(doc_idx):
            cur = best[d]
            s = float(tox[j])
            if cur is EMPTY or s > cur.score:
                best[d] = DocScore(s, float(hate[j]), float(off[j]), *spans[j])
    return best


def _batches(texts: Sequence[str], level: Level, language: str, batch_chars: int
             ) -> Iterator[tuple[list[int], list[tuple[int, int]], list[str]]]:
    doc_idx: list[int] = []
    spans: list[tuple[int, int]] = []
    unit_texts: list[str] = []
    size = 0
    for i, text in enumerate(texts):
        for a, b in units(text, level, language):
            doc_idx.append(i)
            spans.append((a, b))
            unit_texts.append(text[a:b])
            size += b - a
            if size >= batch_chars:
                yield doc_idx, spans, unit_texts
                doc_idx, spans, unit_texts, size = [], [], [], 0
    if unit_texts:
        yield doc_idx, spans, unit_texts
