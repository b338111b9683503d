"""Checksums and plausibility checks for Korean identifiers.

A checksum turns a shape match into near-certainty, so recognizers use these to raise a score to 1.0. A failed
checksum lowers the score rather than discarding the match where the scheme is not universal (resident numbers
issued since October 2020 carry a random last digit; many documents show made-up but well-formed numbers), so
context words can still carry a number over the threshold.
"""

from __future__ import annotations

import datetime as _dt
import ipaddress
import re

from stdnum import luhn
from stdnum.kr import brn, rrn

_NON_DIGITS = re.compile(r"[^0-9]+")


def digits(s: str) -> str:
    # every matched identifier is ASCII, where isdigit() means [0-9]: one C call instead of a per-char loop
    if s.isascii():
        return _NON_DIGITS.sub("", s)
    return "".join(c for c in s if c.isdigit())


def luhn_ok(number: str) -> bool:
    """Card numbers (ISO/IEC 7812), by python-stdnum's Luhn; fewer than 12 digits is no card number."""
    ds = digits(number)
    return len(ds) >= 12 and luhn.is_valid(ds)


def birth_date_ok(yymmdd: str, century_digit: str) -> bool:
    """The first six digits of an RRN/FRN must be a real calendar date; the 7th digit gives the century."""
    century = {"1": 1900, "2": 1900, "5": 1900, "6": 1900, "3": 2000, "4": 2000, "7": 2000, "8": 2000,
               "9": 1800, "0": 1800}.get(century_digit)
    if century is None or len(yymmdd) != 6 or not yymmdd.isdigit():
        return False
    try:
        _dt.date(century + int(yymmdd[:2]), int(yymmdd[2:4]), int(yymmdd[4:6]))
    except ValueError:
        return False
    return True


def rrn_checksum_ok(number: str) -> bool:
    """The pre-October-2020 resident registration checksum (mod 11), python-stdnum's `kr.rrn`. Newer numbers
    need not satisfy it. The date is checked by `birth_date_ok` (stdnum's `validate` adds a place-of-birth rule
    that numbers issued since 2020 do not follow, so only its check digit is used)."""
    ds = digits(number)
    return len(ds) == 13 and rrn.calc_check_digit(ds[:12]) == ds[12]


def frn_checksum_ok(number: str) -> bool:
    """Foreigner registration checksum (pre-2020 scheme: the RRN's mod 11, then +2). python-stdnum has no
    foreigner number, hence written here on top of its RRN check digit."""
    ds = digits(number)
    return len(ds) == 13 and (int(rrn.calc_check_digit(ds[:12])) + 2) % 10 == int(ds[12])


def business_reg_ok(number: str) -> bool:
    """사업자등록번호 (10 digits): python-stdnum's `kr.brn` checks the layout (tax office >= 101, business type
    and serial not zero) but not the check digit, which is added here: weights 1,3,7,1,3,7,1,3,5 plus the carry
    of the 9th digit × 5 (국세청 사업자등록번호 검증 규칙)."""
    ds = digits(number)
    if len(ds) != 10 or not brn.is_valid(ds):
        return False
    w = (1, 3, 7, 1, 3, 7, 1, 3, 5)
    s = sum(int(d) * k for d, k in zip(ds[:9], w, strict=True)) + (int(ds[8]) * 5) // 10
    return (10 - s % 10) % 10 == int(ds[9])


def corp_reg_ok(number: str) -> bool:
    """법인등록번호 (13 digits): weights alternating 1,2; check = (10 - sum mod 10) mod 10. Not in python-stdnum
    (its `kr` package has RRN and BRN only), hence written here."""
    ds = [int(c) for c in digits(number)]
    if len(ds) != 13:
        return False
    s = sum(d * (1 if i % 2 == 0 else 2) for i, d in enumerate(ds[:12]))
    return (10 - s % 10) % 10 == ds[12]


def ipv4_ok(s: str) -> bool:
    parts = s.split(".")
    return len(parts) == 4 and all(p.isdigit() and int(p) <= 255 and (p == "0" or not p.startswith("0"))
                                   for p in parts)


def ipv6_ok(s: str) -> bool:
    if s.count(":") < 2:
        return False
    try:
        ipaddress.IPv6Address(s)
    except ValueError:
        return False
    return True


def repeated_digits(s: str) -> bool:
    """All digits the same (0000-0000, 1111111111): placeholders, not identifiers."""
    ds = digits(s)
    return len(ds) > 0 and len(set(ds)) == 1


def placeholder_digits(s: str) -> bool:
    """Dummy values such as 000-00-00000 or 010-0000-0000: one repeated digit, or zeros after the first group."""
    if repeated_digits(s):
        return True
    groups = (_NON_DIGITS.split(s) if s.isascii()
              else "".join(c if c.isdigit() else " " for c in s).split())
    groups = [g for g in groups if g]
    return len(groups) > 1 and set("".join(groups[1:])) == {"0"}
