"""The filters' thresholds, assembled from the knobs each registered filter declares: every one with bounds, so
that a bad value is a recipe error.

Each filter declares its knobs in its own class (`Filter.Knobs`, see `corpora.filters.base`); `Thresholds` has
the knobs of every filter of `corpora.filters.registry` (registry order, each filter's in its declared order), so
adding a filter is its module and one registry line. `None` disables one check. The defaults are the filters' own
and, for the knobs a language states, the recipe's default language's (`pipeline.recipe.DEFAULT_LANGUAGE`:
Korean, `corpora.lang.ko.DEFAULTS`, where each value's origin is cited). A language's defaults are checked against
the declared knobs (`language_thresholds`): an unknown knob, a value out of bounds or a language knob left unset is
an error naming the language and the key. The filter stage's params (`corpora.stages.filter.FilterParams`) extend `Thresholds`
with the stage's own settings; for another `language`, keys the recipe does not set come from that language's
defaults, else from the filter's.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError, create_model, model_validator
from pydantic.fields import FieldInfo

from corpora.filters.base import Filter, Frac, NGramFracs
from corpora.filters.registry import FILTER_CLASSES, RUN_ORDER
from corpora.lang import get_language
from corpora.lang.base import Language
from pipeline.recipe import DEFAULT_LANGUAGE
from pipeline.registry import Registry, RegistryError
from pipeline.stage import StageParams

__all__ = ["FILTER_NAMES", "KNOB_DEFAULTS", "KNOB_OWNERS", "THRESHOLD_KEYS", "Frac", "NGramFracs", "Thresholds",
           "language_thresholds", "thresholds_model"]


def thresholds_model(filters: Registry[type[Filter]], defaults: Mapping[str, Any] | None = None,
                     model_name: str = "Thresholds") -> type[StageParams]:
    """A params model with the knobs of every filter in `filters`: each knob's type, bounds and description as
    its filter declares it, its default replaced by `defaults[knob]` where given, and one check of every filter's
    `Knobs.ordered` pairs. A knob declared by two filters is a `RegistryError`."""
    fields: dict[str, Any] = {}
    owners: dict[str, str] = {}
    pairs: list[tuple[str, str]] = []
    defaults = defaults or {}
    for name, cls in filters.items():
        for knob, info in cls.Knobs.model_fields.items():
            if knob in owners:
                raise RegistryError(f"filter {name!r} declares the knob {knob!r}, which filter {owners[knob]!r} "
                                    "declares too")
            owners[knob] = name
            if knob in defaults:
                info = FieldInfo.merge_field_infos(info, default=defaults[knob])
            fields[knob] = (info.annotation, info)
        pairs.extend(cls.Knobs.ordered)

    def _ranges(self: StageParams) -> StageParams:
        for lo, hi in pairs:
            a, b = getattr(self, lo), getattr(self, hi)
            if a is not None and b is not None and a > b:
                raise ValueError(f"{lo}={a} is larger than {hi}={b}")
        return self

    validators: dict[str, Any] = {"_ranges": model_validator(mode="after")(_ranges)}
    model: type[StageParams] = create_model(model_name, __base__=StageParams, __module__=__name__,
                                            __validators__=validators, **fields)
    return model


# Every knob with the filters' own defaults (a knob without one is required): what a language's defaults are
# validated against.
_Knobs = thresholds_model(FILTER_CLASSES, model_name="FilterKnobValues")
KNOB_OWNERS: dict[str, str] = {k: name for name, cls in FILTER_CLASSES.items() for k in cls.Knobs.model_fields}
KNOB_DEFAULTS: dict[str, Any] = {k: f.get_default(call_default_factory=True)
                                 for k, f in _Knobs.model_fields.items() if not f.is_required()}


@cache
def language_thresholds(lang: Language) -> Mapping[str, Any]:
    """`lang.default_thresholds`, checked against the knobs the registered filters declare: an unknown knob, a
    value out of bounds, or a knob without a default (a language's) that the language does not set raises a
    ValueError naming the language and the key."""
    values = dict(lang.default_thresholds)
    where = f"language {lang.code!r} ({type(lang).__module__}.{type(lang).__qualname__}.default_thresholds)"
    try:
        _Knobs.model_validate(values)
    except ValidationError as e:
        problems = []
        for err in e.errors(include_url=False):
            key = ".".join(str(p) for p in err["loc"])
            if err["type"] == "extra_forbidden":
                problems.append(f"{key}: unknown knob; the registered filters declare: {', '.join(KNOB_OWNERS)}")
            elif err["type"] == "missing":
                problems.append(f"{key}: not set; the {KNOB_OWNERS[key]!r} filter's knob {key!r} has no default, "
                                "so every language states it")
            else:
                problems.append(f"{key}: {err['msg']} (got {err.get('input')!r})")
        raise ValueError(f"{where}: " + "; ".join(problems)) from None
    return MappingProxyType(values)


if TYPE_CHECKING:
    class Thresholds(StageParams):
        """For the type checker: the model assembled below, every knob an attribute."""

        def __getattr__(self, name: str) -> Any: ...
else:
    Thresholds = thresholds_model(FILTER_CLASSES, language_thresholds(get_language(DEFAULT_LANGUAGE)))
    Thresholds.__doc__ = ("The knobs of every registered filter (corpora/filters/registry.py), with the filters' "
                          "defaults and the Korean pack's.")

THRESHOLD_KEYS = frozenset(Thresholds.model_fields)
assert THRESHOLD_KEYS == set(KNOB_OWNERS)

_unknown = sorted(set(RUN_ORDER) - set(FILTER_CLASSES.names))
assert not _unknown, f"RUN_ORDER names filters that are not registered: {_unknown}"
# the default `order`: RUN_ORDER, then any other registered filter in registry order
FILTER_NAMES: tuple[str, ...] = RUN_ORDER + tuple(n for n in FILTER_CLASSES.names if n not in RUN_ORDER)
