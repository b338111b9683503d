"""The Japanese surrogates that differ from the shared rules of `corpora/pii/surrogates.py` (the pack's
`PackFacts.surrogates`): a valid My Number (check digit last), a valid corporate number (check digit first; the
invoice number's `T` kept), a name written as the original (no space between surname and given name unless it
had one). Every other type: None, the shared rules. `after` (the text after the span) is not read: Japanese
particles (が, は, を, ...) do not change with the word before them."""

from __future__ import annotations

import random

from corpora.lang.ja.pii.patterns import corporate_number_ok, my_number_ok
from corpora.pii import validators as v
from corpora.pii.surrogates import fix_check_digit, reshape


def surrogate(type_: str, original: str, rng: random.Random, f, after: str = "") -> str | None:
    if type_ == "MY_NUMBER":
        return fix_check_digit(reshape(original, rng), my_number_ok)
    if type_ == "CORPORATE_NUMBER":
        head = "T" if original.startswith("T") else ""
        shaped = head + reshape(original[len(head):], rng)
        return fix_check_digit(shaped, corporate_number_ok, first=True) if len(v.digits(shaped)) == 13 else shaped
    if type_ == "PERSON":
        name = f.name()
        return name if any(c.isspace() for c in original) else name.replace(" ", "").replace("\u3000", "")
    return None
