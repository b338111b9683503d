"""Realistic fake values of the same type, consistent within a document.

Same original value -> same surrogate within one document (so "김도현 ... 김도현 과장" stays one person), and
the choice is seeded by (recipe seed, document id), so output does not depend on worker count or order.
Names, e-mails, URLs, IPs and addresses come from Faker's locale of the document's language (`ko_KR`; `ja_JP`
for `language="ja"`); identifier numbers keep the original's layout (separators, letters, length) with random
digits, and are made checksum-valid where a checksum exists, so a model trained on the corpus still sees
well-formed identifiers.
"""

from __future__ import annotations

import random

import xxhash

from corpora.pii import validators as v

_fakers: dict[str, object] = {}
LOCALES = {"ko": "ko_KR", "ja": "ja_JP"}


def _faker(locale: str = "ko_KR"):
    f = _fakers.get(locale)
    if f is None:
        from faker import Faker

        f = Faker(locale)
        _fakers[locale] = f
    return f


def _locale(language: str) -> str:
    try:
        return LOCALES[language]
    except KeyError:
        raise ValueError(f"no surrogates for language {language!r}; known: {', '.join(LOCALES)}") from None


def _reshape(original: str, rng: random.Random) -> str:
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


def _fix_last_digit(s: str, ok) -> str:
    """Change the last digit until `ok` holds (checksums are a function of the last digit)."""
    idx = max(i for i, c in enumerate(s) if c.isdigit())
    for d in "0123456789":
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
    return original[:k] + _reshape(original[k:], rng)


def _fix_first_digit(s: str, ok) -> str:
    """Change the first digit until `ok` holds (the Japanese corporate number's check digit leads)."""
    idx = min(i for i, c in enumerate(s) if c.isdigit())
    for d in "123456789":
        cand = s[:idx] + d + s[idx + 1:]
        if ok(cand):
            return cand
    return s


def make_surrogate(type_: str, original: str, rng: random.Random, language: str = "ko") -> str:
    f = _faker(_locale(language))
    if language == "ja" or type_ in ("MY_NUMBER", "CORPORATE_NUMBER"):
        out = _japanese(type_, original, rng, f)
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
        return _fix_last_digit(_rrn_like(original, rng, "12"), v.rrn_checksum_ok)
    if type_ == "FRN":
        return _fix_last_digit(_rrn_like(original, rng, "56"), v.frn_checksum_ok)
    if type_ == "CARD":
        return _fix_last_digit(_reshape(original, rng), v.luhn_ok)
    if type_ == "BUSINESS_REG":  # the layout rules (python-stdnum: no 00 business type, no 0000 serial) too
        for _ in range(100):
            cand = _fix_last_digit(_reshape(original, rng), v.business_reg_ok)
            if v.business_reg_ok(cand):
                return cand
        return cand
    if type_ == "CORP_REG":
        return _fix_last_digit(_reshape(original, rng), v.corp_reg_ok)
    return _reshape(original, rng)


def _japanese(type_: str, original: str, rng: random.Random, f) -> str | None:
    """The Japanese surrogates that differ from the Korean rules: a valid My Number (check digit last), a
    valid corporate number (check digit first; the invoice number's `T` kept), a name written as the original
    (no space between surname and given name unless it had one); None for the types handled as in Korean."""
    from corpora.pii.ja.patterns import corporate_number_ok, my_number_ok

    if type_ == "MY_NUMBER":
        return _fix_last_digit(_reshape(original, rng), my_number_ok)
    if type_ == "CORPORATE_NUMBER":
        head = "T" if original.startswith("T") else ""
        shaped = head + _reshape(original[len(head):], rng)
        return _fix_first_digit(shaped, corporate_number_ok) if len(v.digits(shaped)) == 13 else shaped
    if type_ == "PERSON":
        name = f.name()
        return name if any(c.isspace() for c in original) else name.replace(" ", "").replace("\u3000", "")
    return None


class DocSurrogates:
    """Surrogates for one document: one fake per distinct (type, original) pair, seeded by doc id."""

    def __init__(self, seed: int, doc_id: str, language: str = "ko"):
        self.rng = random.Random(xxhash.xxh64_intdigest(f"{seed}\x1f{doc_id}".encode()))
        self._faker_seed = self.rng.getrandbits(32)
        self._cache: dict[tuple[str, str], str] = {}
        self.language = language
        self._locale = _locale(language)

    def __call__(self, type_: str, original: str) -> str:
        key = (type_, original)
        if key not in self._cache:
            _faker(self._locale).seed_instance(self._faker_seed + len(self._cache))
            fake = make_surrogate(type_, original, self.rng, self.language)
            for _ in range(8):  # rare (short numbers), but a surrogate must never repeat the original
                if fake != original:
                    break
                fake = make_surrogate(type_, original, self.rng, self.language)
            self._cache[key] = fake
        return self._cache[key]
