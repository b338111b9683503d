"""Parameters of the filter stage: every threshold, with bounds, so that a bad value is a recipe error.

`None` disables one check. Defaults are the Korean ones (`corpora.lang.ko.DEFAULTS`, where each value's
origin is cited); for another `language`, keys the recipe does not set come from that language's defaults.
`per_source` overrides any threshold for one source, e.g. `per_source: {nsmc: {min_chars: 10}}`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from corpora.lang import get_language
from corpora.lang.ko import DEFAULTS as KO
from pipeline.stage import StageParams

Frac = Annotated[float, Field(ge=0.0, le=1.0)]
NGramFracs = dict[Annotated[int, Field(ge=1, le=50)], Frac]

FILTER_NAMES = ("boilerplate", "short_sentences", "length", "script", "gopher_repetition", "fineweb_quality",
                "gopher_quality")


class Thresholds(StageParams):
    # length
    min_chars: int | None = Field(KO["min_chars"], ge=0)
    max_chars: int | None = Field(KO["max_chars"], ge=1)
    min_words: int | None = Field(KO["min_words"], ge=0)
    max_words: int | None = Field(KO["max_words"], ge=1)
    # script
    min_script_ratio: Frac | None = KO["min_script_ratio"]
    # boilerplate
    max_boilerplate_frac: Frac | None = KO["max_boilerplate_frac"]
    # sentences (the source's `min_sentence_chars` applies unless set here, e.g. under per_source)
    min_sentence_chars: int | None = Field(None, ge=1)
    # Gopher repetition
    dup_line_frac: Frac | None = KO["dup_line_frac"]
    dup_para_frac: Frac | None = KO["dup_para_frac"]
    dup_line_char_frac: Frac | None = KO["dup_line_char_frac"]
    dup_para_char_frac: Frac | None = KO["dup_para_char_frac"]
    top_ngram_fracs: NGramFracs = Field(default_factory=lambda: dict(KO["top_ngram_fracs"]))
    dup_ngram_fracs: NGramFracs = Field(default_factory=lambda: dict(KO["dup_ngram_fracs"]))
    # Gopher quality
    gopher_min_words: int | None = Field(KO["gopher_min_words"], ge=0)
    gopher_max_words: int | None = Field(KO["gopher_max_words"], ge=1)
    min_avg_word_length: float | None = Field(KO["min_avg_word_length"], ge=0)
    max_avg_word_length: float | None = Field(KO["max_avg_word_length"], gt=0)
    max_symbol_word_ratio: float | None = Field(KO["max_symbol_word_ratio"], ge=0)
    max_bullet_lines_ratio: Frac | None = KO["max_bullet_lines_ratio"]
    max_ellipsis_lines_ratio: Frac | None = KO["max_ellipsis_lines_ratio"]
    min_alpha_words_ratio: Frac | None = KO["min_alpha_words_ratio"]
    min_stop_words: int | None = Field(KO["min_stop_words"], ge=0)
    # FineWeb quality
    line_punct_thr: Frac | None = KO["line_punct_thr"]
    short_line_thr: Frac | None = KO["short_line_thr"]
    short_line_length: int = Field(KO["short_line_length"], ge=1)
    char_dup_ratio: Frac | None = KO["char_dup_ratio"]
    new_line_ratio: float | None = Field(KO["new_line_ratio"], ge=0)

    @model_validator(mode="after")
    def _ranges(self) -> Thresholds:
        for lo, hi in (("min_chars", "max_chars"), ("min_words", "max_words"),
                       ("gopher_min_words", "gopher_max_words"), ("min_avg_word_length", "max_avg_word_length")):
            a, b = getattr(self, lo), getattr(self, hi)
            if a is not None and b is not None and a > b:
                raise ValueError(f"{lo}={a} is larger than {hi}={b}")
        return self


THRESHOLD_KEYS = frozenset(Thresholds.model_fields)


class FilterParams(Thresholds):
    language: str = "ko"
    normalization: Literal["NFC", "NFKC", "none"] | None = None  # None: the language's form (Korean: NFC)
    max_blank_lines: int = Field(1, ge=0, le=100)
    # filters run in this order; a document's drop reason is the first that fails. Leave one out to disable it.
    order: tuple[str, ...] = FILTER_NAMES
    per_source: dict[str, dict[str, Any]] = Field(default_factory=dict)
    would_fail_stats: bool = True  # evaluate every filter on every document (for the report), not just until the first failure
    samples_per_reason: int = Field(5, ge=0, le=1000)

    @field_validator("order")
    @classmethod
    def _known(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [n for n in v if n not in FILTER_NAMES]
        if unknown:
            raise ValueError(f"unknown filter(s) {unknown}; known: {list(FILTER_NAMES)}")
        if len(set(v)) != len(v):
            raise ValueError(f"filter listed twice in order: {list(v)}")
        return v

    @field_validator("language")
    @classmethod
    def _lang(cls, v: str) -> str:
        get_language(v)
        return v

    @model_validator(mode="after")
    def _per_source(self) -> FilterParams:
        for src in self.per_source:
            self.thresholds_for(src)  # raises a validation error naming the bad key
        return self

    def thresholds_for(self, source: str | None = None) -> Thresholds:
        """The thresholds for one source: language defaults < recipe keys < per_source overrides."""
        lang = get_language(self.language)
        base = {k: getattr(self, k) for k in THRESHOLD_KEYS}
        if self.language != "ko":
            base.update({k: v for k, v in lang.default_thresholds.items() if k not in self.model_fields_set})
        over = self.per_source.get(source, {}) if source is not None else {}
        bad = sorted(set(over) - THRESHOLD_KEYS)
        if bad:
            raise ValueError(f"per_source.{source}: unknown threshold(s) {bad}")
        return Thresholds.model_validate({**base, **over})
