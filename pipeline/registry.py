"""One generic registry: a name -> an object, imported on first use from a `"module:attr"` string.

Every table of named, pluggable things uses it: the stage graph (`pipeline.stages.STAGES`), the `klue`
subcommands (`pipeline.cli.COMMANDS`), the fine-tuning tasks (`finetune.registry.TASK_CLASSES`) and the language
packs (`corpora.lang.LANGUAGES`). Entries are import strings so that listing names (`klue --help`, recipe key
checks, `--task-list`) imports neither torch nor MeCab; the object is imported when it is first asked for.
A wrong name gets one error that lists the known names and the closest ones (in the spirit of
lm-evaluation-harness's `api/registry.py`).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")


class RegistryError(ValueError):
    """An unknown name, or an entry whose module cannot be imported; the message says which and what exists."""


def import_target(target: str) -> Any:
    """The object a `"package.module:attr"` string names (`attr` may be dotted)."""
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise RegistryError(f"{target!r} is not of the form 'package.module:attr'")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class Registry(Generic[T]):
    """Names in declaration order -> objects of type T, given directly or as `"module:attr"` strings.

    `kind` names the things in error messages ("stage", "fine-tuning task"). `aliases` map other spellings to a
    name (looked up case-insensitively, as the names are). `check(name, obj)` may raise `RegistryError` when
    an imported object does not fit (a stage class that declares another name, say).
    """

    def __init__(self, kind: str, entries: Mapping[str, str | T], *, aliases: Mapping[str, str] | None = None,
                 check: Callable[[str, T], None] | None = None):
        self.kind = kind
        self._entries: dict[str, str | T] = dict(entries)
        self._aliases = {k.lower(): v for k, v in (aliases or {}).items()}
        for alias, name in self._aliases.items():
            if name not in self._entries:
                raise RegistryError(f"{kind} alias {alias!r} points to {name!r}, which is not registered")
        self._check = check
        self._loaded: dict[str, T] = {}

    # -- names --------------------------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        """Registered names, in declaration order (for a stage graph: its topological order)."""
        return tuple(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._canonical(name) is not None

    def _canonical(self, name: str) -> str | None:
        if name in self._entries:
            return name
        low = name.lower()
        by_lower = {n.lower(): n for n in self._entries}
        return by_lower.get(low) or self._aliases.get(low)

    def resolve(self, name: str) -> str:
        """The registered name for `name` or one of its aliases; a `RegistryError` with suggestions otherwise."""
        found = self._canonical(name)
        if found is None:
            raise RegistryError(self.unknown_message(name))
        return found

    def unknown_message(self, name: str) -> str:
        return f"unknown {self.kind} {name!r}{self.did_you_mean(name)} (known: {', '.join(self._entries)})"

    def did_you_mean(self, name: str) -> str:
        """`; did you mean 'x'?` for the names and aliases closest to `name` (case-insensitively), or "" when
        none is close: the one suggestion rule, shared by `unknown_message` and the recipe's key errors."""
        known = [*self._entries, *self._aliases]
        close = difflib.get_close_matches(name.lower(), [k.lower() for k in known], n=3, cutoff=0.6)
        return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""

    # -- adding entries -----------------------------------------------------------------------------------
    def register(self, name: str, target: str | T) -> None:
        """Add `name` (an import string or the object), e.g. a language of a test's fixture folder; a
        `RegistryError` when the name (or one equal to it but for case) is taken."""
        if self._canonical(name) is not None:
            raise RegistryError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = target

    def unregister(self, name: str) -> None:
        """Remove `name` (what `register` added) and its imported object."""
        key = self.resolve(name)
        del self._entries[key]
        self._loaded.pop(key, None)

    # -- objects ------------------------------------------------------------------------------------------
    def target(self, name: str) -> str | T:
        """The entry as declared (an import string or the object), without importing anything."""
        return self._entries[self.resolve(name)]

    def get(self, name: str) -> T:
        """The object registered under `name` (or an alias), imported on first use and cached."""
        key = self.resolve(name)
        if key in self._loaded:
            return self._loaded[key]
        target = self._entries[key]
        if isinstance(target, str):
            try:
                obj = cast(T, import_target(target))
            except ImportError as e:
                raise RegistryError(f"{self.kind} {key!r} is declared as {target} but its module cannot be "
                                    f"imported: {type(e).__name__}: {e}") from None
            except AttributeError as e:
                raise RegistryError(f"{self.kind} {key!r} is declared as {target}, which does not exist: {e}") \
                    from None
        else:
            obj = target
        if self._check is not None:
            self._check(key, obj)
        self._loaded[key] = obj
        return obj

    def items(self) -> Iterator[tuple[str, T]]:
        """(name, object) for every entry, importing each."""
        for name in self._entries:
            yield name, self.get(name)

    @classmethod
    def from_spec(cls, kind: str, spec: str, *, check: Callable[[str, T], None] | None = None) -> Registry[T]:
        """A registry from `"module:ATTR"` naming a dict (or a Registry) of entries, e.g. `klue run --registry`."""
        if ":" not in spec:
            spec += ":REGISTRY"
        try:
            entries = import_target(spec)
        except (ImportError, AttributeError) as e:
            raise RegistryError(f"{spec}: cannot import: {type(e).__name__}: {e}") from None
        if isinstance(entries, Registry):
            entries = entries._entries
        if not isinstance(entries, Mapping):
            raise RegistryError(f"{spec}: expected a dict of name -> {kind}, got {type(entries).__name__}")
        return cls(kind, entries, check=check)
