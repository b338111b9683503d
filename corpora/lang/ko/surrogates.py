"""The Korean surrogates that differ from the shared rules of `corpora/pii/surrogates.py` (the pack's
`PackFacts.surrogates`): a person name or an address that ends in the final sound the text around it needs, so
the particle after it still agrees (`홍길동이` -> `박영숙이`, never `박영수이`; rules and sources:
`particles.py`). Every other type: None, the shared rules.

A module of its own, outside `corpora/lang/ko/pii/`: importing that package imports presidio (seconds per process),
which the replace stage never needs.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache

from corpora.lang.ko.particles import DIGITS_OF_CLASS, FinalClass, final_class, wanted_class

ADDRESS_TRIES = 12  # Faker addresses drawn before the last one is adjusted (about 1 in 5 ends right by chance)
TOWN = re.compile(r"\s*\([^()]*\)$")  # Faker ko_KR's optional " (읍면동)" at the end
LAST_DIGIT = re.compile(r"(\d)(\D*)$")


@lru_cache(maxsize=1)
def _name_lists() -> tuple[dict[FinalClass, tuple[list[str], list[float]]], tuple[list[str], list[float]]]:
    """Faker ko_KR's given names by the class of their last syllable (every class has some: 46 vowel, 5 ㄹ, 70
    other), and its surnames, each with Faker's weights."""
    from faker.providers.person.ko_KR import Provider

    given: dict[FinalClass, tuple[list[str], list[float]]] = {k: ([], []) for k in FinalClass}
    for name, weight in Provider.first_names.items():
        k = final_class(name)
        if k is not None:
            given[k][0].append(name)
            given[k][1].append(float(weight))
    surnames = (list(Provider.last_names), [float(w) for w in Provider.last_names.values()])
    return given, surnames


def person_name(rng: random.Random, wanted: FinalClass, original: str) -> str:
    """Surname + given name whose last syllable has class `wanted`, never `original` (the next surname then)."""
    given, (surnames, weights) = _name_lists()
    first = rng.choices(*given[wanted])[0]
    i = surnames.index(rng.choices(surnames, weights)[0])
    if surnames[i] + first == original:
        i = (i + 1) % len(surnames)
    return surnames[i] + first


def with_final_class(address: str, wanted: FinalClass, rng: random.Random) -> str:
    """`address` without Faker's trailing town in brackets, its last digit replaced by one of class `wanted`
    (not a 0 that would start a number), or one appended when it has no digit."""
    address = TOWN.sub("", address)
    m = LAST_DIGIT.search(address)
    if m is None or m.group(2):  # no digit at the very end: a building number of the right class
        return f"{address} {rng.choice(DIGITS_OF_CLASS[wanted].lstrip('0'))}"
    leads = m.start() == 0 or not address[m.start() - 1].isdigit()
    digits = DIGITS_OF_CLASS[wanted].lstrip("0") if leads else DIGITS_OF_CLASS[wanted]
    return address[:m.start()] + rng.choice(digits)


def address(f, rng: random.Random, wanted: FinalClass, original: str) -> str:
    """A Faker ko_KR address ending in class `wanted`: drawn until one does, else the last draw adjusted."""
    fake = original
    for _ in range(ADDRESS_TRIES):
        fake = f.address()
        if final_class(fake) is wanted and fake != original:
            return fake
    return with_final_class(fake, wanted, rng)


def surrogate(type_: str, original: str, rng: random.Random, f, after: str = "") -> str | None:
    """A name or an address of the class `wanted_class(original, after)` asks for; None (the shared rules) for
    other types and where nothing is asked (an original ending in punctuation, no particle after it)."""
    if type_ not in ("PERSON", "ADDRESS"):
        return None
    wanted = wanted_class(original, after)
    if wanted is None:
        return None
    return person_name(rng, wanted, original) if type_ == "PERSON" else address(f, rng, wanted, original)
