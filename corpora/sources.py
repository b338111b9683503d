"""Source declarations of a recipe: where raw text lives, in which format, under which licence.

Owned by the curation stages; the recipe schema (pipeline/recipe.py) uses `SourceSpec` for its top-level
`sources:` list. Paths may contain `${ENV_VAR}`; the recipe loader expands them before validation.
"""

from __future__ import annotations

import codecs
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class SourceSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", description="short name used in ids, reports and quarantine")
    path: str = Field(description="a file, a folder, or a glob pattern (relative to the recipe file)")
    format: Literal["text", "jsonl", "csv", "tsv", "parquet", "hf_dataset"]
    license: str = Field(default="unknown", description="licence string kept on every document")
    # text: what one document is
    unit: Literal["line", "block", "file"] = "line"
    # jsonl / parquet / hf_dataset: the field holding the text; csv/tsv: columns joined with a newline.
    # jsonl may name a nested field by a dotted path, `*` for every item of a list: `utterances.*.text`
    # (a dialogue's turns), whose strings are joined with a newline.
    text_field: str = "text"
    text_columns: list[str] = Field(default_factory=lambda: ["text"])
    columns: list[str] | None = Field(default=None, description="csv/tsv without a header row: the names of its "
                                                                "columns (the first row is then data)")
    encoding: str = Field(default="utf-8", description="declared encoding, e.g. cp949 / euc-kr for legacy files")
    # KLUE's rule for web/news sources: split into sentences and keep those of at least N characters
    min_sentence_chars: int | None = Field(default=None, ge=1)
    max_docs: int | None = Field(default=None, ge=1, description="read at most N documents (smoke runs)")
    # jsonl / csv / tsv / parquet / hf_dataset: fields copied into each document's meta under "fields"
    meta_fields: list[str] = Field(default_factory=list)
    # csv / tsv: whether fields may be double-quoted (None: yes for csv; no for tsv, whose corpora often
    # carry bare quote characters inside text)
    quoted: bool | None = None

    @model_validator(mode="after")
    def _format_options(self) -> SourceSpec:
        if "." in self.text_field and self.format != "jsonl":
            raise ValueError(f"text_field {self.text_field!r}: a dotted path is for jsonl sources only")
        if self.columns is not None and self.format not in ("csv", "tsv"):
            raise ValueError("columns: only csv and tsv sources have columns to name")
        return self

    @field_validator("encoding")
    @classmethod
    def _known_byte_encoding(cls, v: str) -> str:
        # Readers split lines on the byte b"\n" before decoding, so only encodings where that byte is always a
        # newline are accepted (UTF-8, CP949/EUC-KR, Latin-1, ...); UTF-16/32 must be converted first.
        try:
            name = codecs.lookup(v).name
        except LookupError:
            raise ValueError(f"unknown encoding {v!r} (e.g. utf-8, cp949, euc-kr)") from None
        if name.startswith(("utf-16", "utf-32")):
            raise ValueError(f"encoding {v!r} is not supported: convert the file to UTF-8 first")
        return v
