"""Language-specific pieces behind one small interface (`Language`); Korean is the first implementation.

A second language is a new module registered in `LANGUAGES`, not edits across the tree.
"""

from __future__ import annotations

from corpora.lang.base import Language
from pipeline.registry import Registry

LANGUAGES: Registry[Language] = Registry("language", {"ko": "corpora.lang.ko:KOREAN",
                                                     "ja": "corpora.lang.ja:JAPANESE"})


def get_language(code: str) -> Language:
    """The `Language` for an ISO 639-1 code; a `RegistryError` (a ValueError) for one that has no module yet."""
    return LANGUAGES.get(code)


__all__ = ["Language", "LANGUAGES", "get_language"]
