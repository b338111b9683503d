"""Korean-aware document filters, one module per family, and the chain that runs them in recipe order.

A filter is its module (a `Filter` subclass that declares its thresholds in a nested `Knobs` model) and one line
in `corpora.filters.registry`; the filter stage's params validate its knobs from then on (`corpora.filters.params`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from corpora.filters.base import DocView, Filter, Transform
from corpora.filters.params import Thresholds
from corpora.filters.registry import FILTER_CLASSES
from corpora.filters.sentences import SentenceFilter
from corpora.lang import get_language
from corpora.normalize import Normalizer

# name -> class of every registered filter (corpora/filters/registry.py), in registry order
FILTERS: dict[str, type[Filter]] = dict(FILTER_CLASSES.items())


class ChainSettings(Protocol):
    """What the chain reads of its settings (`corpora.stages.filter.FilterParams` is one)."""

    @property
    def language(self) -> str: ...

    @property
    def normalization(self) -> Literal["NFC", "NFKC", "none"] | None: ...

    @property
    def max_blank_lines(self) -> int: ...

    @property
    def order(self) -> Sequence[str]: ...

    @property
    def would_fail_stats(self) -> bool: ...

    def thresholds_for(self, source: str | None = None) -> Thresholds: ...


@dataclass
class Outcome:
    """What the chain decided for one document.

    text: the normalized (and possibly edited) text; reason/check: the first failing filter and its check
    (None when kept); fails: every (filter, check) that failed when all filters were evaluated;
    removed: characters removed by each editing step of a kept document ("normalize" may be negative: NFKC
    can expand characters).
    """

    text: str
    reason: str | None = None
    check: str | None = None
    fails: list[tuple[str, str]] = field(default_factory=list)
    removed: dict[str, int] = field(default_factory=dict)


class FilterChain:
    """Normalize, then run the filters of `params.order` with one source's thresholds."""

    def __init__(self, params: ChainSettings, source: str | None = None,
                 source_min_sentence_chars: int | None = None):
        self.lang = get_language(params.language)
        self.normalizer = Normalizer(params.normalization or self.lang.normalization_form, params.max_blank_lines)
        self.thresholds: Thresholds = params.thresholds_for(source)
        self.all_fails = params.would_fail_stats
        steps: list[Filter] = []
        for name in params.order:
            cls = FILTERS[name]
            f = (SentenceFilter(self.thresholds, self.lang, source_min_sentence_chars) if cls is SentenceFilter
                 else cls(self.thresholds, self.lang))
            if f.enabled():
                steps.append(f)
        self.steps = steps

    def __call__(self, raw: str) -> Outcome:
        text = self.normalizer(raw)
        out = Outcome(text)
        if len(text) != len(raw):
            out.removed["normalize"] = len(raw) - len(text)
        if not text.strip():
            out.reason, out.check = "empty", "empty"
            out.fails.append(("empty", "empty"))
            return out
        view = DocView(text, self.lang)
        for f in self.steps:
            if isinstance(f, Transform):
                new, code = f.apply(view.text)
                if new != view.text:
                    out.removed[f"{f.name}_edit"] = len(view.text) - len(new)
                    view = DocView(new, self.lang)
                if not new.strip():  # nothing left to judge: later filters would all fail on an empty text
                    code = code or "emptied"
                    out.fails.append((f.name, code))
                    if out.reason is None:
                        out.reason, out.check = f.name, code
                    break
            else:
                code = f.check(view)
            if code is not None:
                out.fails.append((f.name, code))
                if out.reason is None:
                    out.reason, out.check = f.name, code
                if not self.all_fails:
                    break
        out.text = view.text
        return out
