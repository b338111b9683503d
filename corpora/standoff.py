"""Stand-off Parquet files: per-document annotations stored beside a corpus shard instead of inside it.

Why one module: the PII spans (`corpora.pii.spans`) and the toxicity scores (`corpora.toxicity.scores`) are the
same kind of file (one per input shard, named after it, keyed by document `id`, non-nullable typed columns,
written atomically with fixed writer settings so the same rows give byte-identical files); only their columns
and how a reader groups the rows differ. Keeping the file logic here keeps the two formats from drifting apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import io


class StandoffFile:
    """One kind of stand-off file: `<prefix>-NNNNN.parquet` beside `shard-NNNNN.parquet`, with a first column `id`
    (the document the row annotates) and then `columns`, none nullable."""

    def __init__(self, prefix: str, columns: Sequence[tuple[str, pa.DataType]]) -> None:
        self.prefix = prefix
        self.schema = pa.schema([pa.field(name, t, nullable=False) for name, t in (("id", pa.string()), *columns)])

    def name(self, shard: Path) -> str:
        """The file name that goes with `shard` (shard-00003.parquet -> <prefix>-00003.parquet)."""
        return shard.name.replace("shard-", f"{self.prefix}-", 1)

    def write(self, path: Path, cols: list[list[Any]]) -> None:
        """Write the columns, in schema order, atomically (a crash leaves no half-written file)."""
        table = pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(cols, self.schema, strict=True)],
                                     schema=self.schema)
        with io.atomic_path(path) as tmp:
            pq.write_table(table, tmp, compression="zstd", write_statistics=False)

    def read(self, path: Path) -> list[list[Any]]:
        """The file's columns as Python lists, in schema order (`id` first)."""
        t = pq.read_table(path).to_pydict()
        return [t[name] for name in self.schema.names]
