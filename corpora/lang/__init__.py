"""Language-specific pieces behind one small interface (`Language`); Korean is the first implementation.

A second language is a new module registered in `LANGUAGES`, not edits across the tree.
"""

from __future__ import annotations

from corpora.lang.base import Language

LANGUAGES: dict[str, str] = {"ko": "corpora.lang.ko:KOREAN"}


def get_language(code: str) -> Language:
    """The `Language` for an ISO 639-1 code; a clear error for one that has no module yet."""
    import importlib

    target = LANGUAGES.get(code)
    if target is None:
        raise ValueError(f"no language module for {code!r}; known: {sorted(LANGUAGES)}")
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


__all__ = ["Language", "LANGUAGES", "get_language"]
