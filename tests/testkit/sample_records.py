"""The shipped sample (pipeline/sample) read as the collect stage's readers read it, for tests that need its
documents without running collect."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from corpora.readers import ReadOptions, SourceFile, read_file
from corpora.sources import SourceSpec
from datagen import sample as ds
from pipeline.sample import SAMPLE_DIR


def sample_records() -> Iterator[tuple[str, str, Any]]:
    """(source name, file relative to the sample folder, `Record` or `Bad`) for every record of every file."""
    for src in ds.SOURCES:
        spec = SourceSpec(name=src.name, path="x", license=src.licence, **src.recipe)
        path = SAMPLE_DIR / src.out
        for f in sorted(path.glob("*.txt")) if path.is_dir() else [path]:
            rel = f.relative_to(SAMPLE_DIR).as_posix()
            for rec in read_file(spec, SourceFile(f, f.name), ReadOptions()):
                yield src.name, rel, rec


def locator(rec: Any) -> int:
    """The record's line or row number (0 for a whole file): collect's index for the document id."""
    return int(rec.where.get("row", rec.where.get("line", 0)))
