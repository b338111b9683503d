"""The document filters, one line each: adding a filter is its module (a `Filter` with its `Knobs`) and a line here.

The filter stage's thresholds (`corpora.filters.params.Thresholds`) are the knobs of these filters, in this order,
so a recipe validates a new filter's knobs, bounds included, as soon as it is registered; and a registered filter
runs by default (the `order` param), after those of `RUN_ORDER`. A knob with a default needs no language pack to
change; one without a default is stated by every language (`Language.default_thresholds`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.registry import Registry, RegistryError

if TYPE_CHECKING:
    from corpora.filters.base import Filter


def check_filter(name: str, cls: type[Filter]) -> None:
    """A registry entry must be a `Filter` class whose `name` is the entry's."""
    # lazy: a real cycle (base's package runs corpora/filters/__init__.py -> params -> this registry)
    from corpora.filters.base import Filter

    if not (isinstance(cls, type) and issubclass(cls, Filter)):
        raise RegistryError(f"filter {name!r} is registered as {cls!r}, which is not a Filter class")
    if getattr(cls, "name", None) != name:
        raise RegistryError(f"filter {name!r} is registered as {cls.__qualname__}, whose name is "
                            f"{getattr(cls, 'name', None)!r}")


# Registry order is the order of the knobs in the filter stage's params (as dumped into run.json): a new filter
# goes last. The run order is RUN_ORDER below, not this.
FILTER_CLASSES: Registry[type[Filter]] = Registry("filter", {
    "length": "corpora.filters.length:LengthFilter",
    "script": "corpora.filters.script:ScriptFilter",
    "boilerplate": "corpora.filters.boilerplate:BoilerplateFilter",
    "short_sentences": "corpora.filters.sentences:SentenceFilter",
    "gopher_repetition": "corpora.filters.gopher_repetition:GopherRepetitionFilter",
    "gopher_quality": "corpora.filters.gopher_quality:GopherQualityFilter",
    "fineweb_quality": "corpora.filters.fineweb_quality:FineWebQualityFilter",
}, check=check_filter)

# The order the filters run in unless a recipe sets `order` (a document's drop reason is the first filter that
# fails): the editing filters first (boilerplate lines, short sentences), so that the others judge what is kept.
# A filter registered above but not named here runs after these, in registry order.
RUN_ORDER = ("boilerplate", "short_sentences", "length", "script", "gopher_repetition", "fineweb_quality",
             "gopher_quality")
