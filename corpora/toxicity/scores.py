"""The stand-off score files that the `toxicity` stage writes and the `pii` stage (for drops) and people read.

Per input shard `shard-NNNNN.parquet`, `scores-NNNNN.parquet`: one row per document, in document order, with
columns `id, score, hate, offensive, start, end` (`score` = P(hate) + P(offensive) of the scored unit, float32;
`start, end`: that unit's character span in the text, end exclusive; see `corpora.toxicity.tagger`).
`drop_ids.json` (only with `action: drop`): the sorted ids whose stored score is above the threshold; the `pii`
stage leaves them out of every arm with the reason code `toxicity`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from corpora.standoff import StandoffFile
from corpora.toxicity.tagger import DocScore

SCORES = StandoffFile("scores", [
    ("score", pa.float32()),
    ("hate", pa.float32()),
    ("offensive", pa.float32()),
    ("start", pa.int32()),
    ("end", pa.int32()),
])
SCORE_SCHEMA = SCORES.schema
DROP_FILE = "drop_ids.json"
DROP_REASON = "toxicity"


def scores_name(shard: Path) -> str:
    return SCORES.name(shard)


def write_scores(path: Path, cols: list[list[Any]]) -> None:
    """Write score columns (id, score, hate, offensive, start, end) atomically."""
    SCORES.write(path, cols)


def read_scores(path: Path) -> dict[str, DocScore]:
    """{doc id: DocScore} for one scores shard (the float32 values as stored)."""
    return {i: DocScore(s, h, o, a, b) for i, s, h, o, a, b in zip(*SCORES.read(path), strict=True)}
