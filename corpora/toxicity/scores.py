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
import pyarrow.parquet as pq

from corpora.toxicity.tagger import DocScore
from pipeline import io

SCORE_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=False),
    pa.field("score", pa.float32(), nullable=False),
    pa.field("hate", pa.float32(), nullable=False),
    pa.field("offensive", pa.float32(), nullable=False),
    pa.field("start", pa.int32(), nullable=False),
    pa.field("end", pa.int32(), nullable=False),
])
DROP_FILE = "drop_ids.json"
DROP_REASON = "toxicity"


def scores_name(shard: Path) -> str:
    return shard.name.replace("shard-", "scores-", 1)


def write_scores(path: Path, cols: list[list[Any]]) -> None:
    """Write score columns (id, score, hate, offensive, start, end) atomically."""
    table = pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(cols, SCORE_SCHEMA, strict=True)],
                                 schema=SCORE_SCHEMA)
    with io.atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", write_statistics=False)


def read_scores(path: Path) -> dict[str, DocScore]:
    """{doc id: DocScore} for one scores shard (the float32 values as stored)."""
    t = pq.read_table(path).to_pydict()
    return {i: DocScore(s, h, o, a, b) for i, s, h, o, a, b in
            zip(t["id"], t["score"], t["hate"], t["offensive"], t["start"], t["end"], strict=True)}
