"""Language-specific pieces behind one small interface (`Language`); Korean is the first implementation.

A second language is a new module registered in `LANGUAGES`, not edits across the tree.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from corpora.lang.base import Language
from pipeline.registry import Registry

LANGUAGES: Registry[Language] = Registry("language", {"ko": "corpora.lang.ko:KOREAN",
                                                     "ja": "corpora.lang.ja:JAPANESE"})


def get_language(code: str) -> Language:
    """The `Language` for an ISO 639-1 code; a `RegistryError` (a ValueError) for one that has no module yet."""
    return LANGUAGES.get(code)


def known_language(code: str) -> str:
    """`code` itself when a language module has it; a `RegistryError` (a ValueError) naming the known ones."""
    LANGUAGES.get(code)
    return code


# The type of every stage's `language` param (the recipe's top-level `language:` fills it in): validated once, here.
LanguageCode = Annotated[str, AfterValidator(known_language)]

__all__ = ["Language", "LANGUAGES", "LanguageCode", "get_language", "known_language"]
