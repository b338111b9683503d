"""The filters' thresholds: every one with bounds, so that a bad value is a recipe error.

`None` disables one check. Defaults are the Korean ones (`corpora.lang.ko.DEFAULTS`, where each value's
origin is cited). The filter stage's params (`corpora.stages.filter.FilterParams`) extend these with the
stage's own settings; for another `language`, keys the recipe does not set come from that language's defaults.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

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
