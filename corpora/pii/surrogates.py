"""Realistic fake values of the same type, consistent within a document.

Same original value -> same surrogate within one document (so "김도현 ... 김도현 과장" stays one person), and
the choice is seeded by (recipe seed, document id), so output does not depend on worker count or order.
Names, e-mails, URLs, IPs and addresses come from Faker's locale of the document's language (`ko_KR`; `ja_JP`
for `language="ja"`); identifier numbers keep the original's layout (separators, letters, length) with random
digits, and are made checksum-valid where a checksum exists, so a model trained on the corpus still sees
well-formed identifiers.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable

import xxhash

from corpora.pii import validators as v
from corpora.pii.types import PACKS, owner, pack_facts

_fakers: dict[str, object] = {}


def _faker(locale: str):
    f = _fakers.get(locale)
    if f is None:
        from faker import Faker

        f = Faker(locale)
        _fakers[locale] = f
    return f


def _locale(language: str) -> str:
    try:
        return pack_facts(language).faker_locale
    except ValueError:
        raise ValueError(f"no surrogates for language {language!r}; known: {', '.join(PACKS)}") from None


def _pack_surrogate(type_: str, language: str) -> Callable[..., str | None] | None:
    """The surrogate function of the pack whose format `type_` has (`PackFacts.surrogates`), or None. Named as
    "module:function" and imported on first use: the Japanese rules need its pack's check digits, a Korean run
    never imports them."""
    target = owner(type_, language).surrogates
    if target is None:
        return None
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def reshape(original: str, rng: random.Random) -> str:
    """Random digits (and capital letters) in the original's layout; the first digit keeps its class."""
    out = []
    for i, c in enumerate(original):
        if c.isdigit() and c.isascii():
            out.append(str(rng.randint(1, 9)) if i == 0 else str(rng.randint(0, 9)))
        elif "A" <= c <= "Z":
            out.append(chr(rng.randint(65, 90)))
        else:
            out.append(c)
    return "".join(out)


def fix_check_digit(s: str, ok, first: bool = False) -> str:
    """Change the check digit until `ok` holds: the last digit (checksums are a function of it), or with `first`
    the first (the Japanese corporate number's check digit leads; never a 0 there)."""
    digits = [i for i, c in enumerate(s) if c.isdigit()]
    idx = digits[0] if first else digits[-1]
    for d in "123456789" if first else "0123456789":
        cand = s[:idx] + d + s[idx + 1:]
        if ok(cand):
            return cand
    return s


def _rrn_like(original: str, rng: random.Random, gender: str) -> str:
    yy, mm, dd = rng.randint(50, 99), rng.randint(1, 12), rng.randint(1, 28)
    sep = "-" if "-" in original else ""
    body = f"{yy:02d}{mm:02d}{dd:02d}{sep}{rng.choice(gender)}{rng.randint(0, 999999):06d}"
    return body


def _phone_like(original: str, rng: random.Random) -> str:
    """Keep the prefix (area code, 010, +82, 15xx) up to the first separator; randomise the rest."""
    import re

    m = re.match(r"\D*\d+", original)
    k = m.end() if m and len(v.digits(m.group())) <= 4 and m.end() < len(original) else 0
    return original[:k] + reshape(original[k:], rng)


def make_surrogate(type_: str, original: str, rng: random.Random, language: str, after: str = "") -> str:
    """A fake of `type_` for `original`; `after`, the text right after the span, lets a pack fit the fake to
    what follows (Korean: the final sound a particle needs, corpora/lang/ko/surrogates.py)."""
    f = _faker(_locale(language))
    own = _pack_surrogate(type_, language)
    if own is not None:
        out = own(type_, original, rng, f, after)
        if out is not None:
            return out
    if type_ == "PERSON":
        return f.name()
    if type_ == "EMAIL":
        return f.free_email()
    if type_ == "URL":
        return f.url().rstrip("/") if not original.endswith("/") else f.url()
    if type_ == "IP":
        return f.ipv6() if ":" in original else f.ipv4_public()
    if type_ == "ADDRESS":
        return f.address()
    if type_ in ("PHONE", "FAX"):
        return _phone_like(original, rng)
    if type_ == "RRN":
        return fix_check_digit(_rrn_like(original, rng, "12"), v.rrn_checksum_ok)
    if type_ == "FRN":
        return fix_check_digit(_rrn_like(original, rng, "56"), v.frn_checksum_ok)
    if type_ == "CARD":
        return fix_check_digit(reshape(original, rng), v.luhn_ok)
    if type_ == "BUSINESS_REG":  # the layout rules (python-stdnum: no 00 business type, no 0000 serial) too
        for _ in range(100):
            cand = fix_check_digit(reshape(original, rng), v.business_reg_ok)
            if v.business_reg_ok(cand):
                return cand
        return cand
    if type_ == "CORP_REG":
        return fix_check_digit(reshape(original, rng), v.corp_reg_ok)
    return reshape(original, rng)


class DocSurrogates:
    """Surrogates for one document: one fake per distinct (type, original) pair, seeded by doc id.

    The cache key stays (type, original), not (type, original, class wanted): in a grammatical text every
    particle after a name agrees with the name's own final sound, so its first occurrence asks for the class
    all the others need, and one person stays one person. Only a text that puts 이 after a name once and 가
    after it once (ungrammatical one way or the other) gets the first occurrence's class for both.
    """

    def __init__(self, seed: int, doc_id: str, language: str):
        self.rng = random.Random(xxhash.xxh64_intdigest(f"{seed}\x1f{doc_id}".encode()))
        self._faker_seed = self.rng.getrandbits(32)
        self._cache: dict[tuple[str, str], str] = {}
        self.language = language
        self._locale = _locale(language)

    def __call__(self, type_: str, original: str, after: str = "") -> str:
        """The surrogate of `original`; `after` is the text right after this occurrence (see make_surrogate)."""
        key = (type_, original)
        if key not in self._cache:
            _faker(self._locale).seed_instance(self._faker_seed + len(self._cache))
            fake = make_surrogate(type_, original, self.rng, self.language, after)
            for _ in range(8):  # rare (short numbers), but a surrogate must never repeat the original
                if fake != original:
                    break
                fake = make_surrogate(type_, original, self.rng, self.language, after)
            self._cache[key] = fake
        return self._cache[key]
