"""Overlap resolution, the three replacement modes, and surrogate consistency."""

from __future__ import annotations

import random

from corpora.pii import validators as v
from corpora.pii.replace import (
    DiffCounts,
    density,
    placeholder_substitute,
    placeholder_token,
    replace_spans,
    surrogate_substitute,
)
from corpora.pii.resolve import Span, resolve_overlaps
from corpora.pii.surrogates import DocSurrogates, make_surrogate


def S(start, end, type_, score, rec="r"):
    return Span(start, end, type_, score, rec)


def test_resolve_keeps_higher_score_then_priority_then_length():
    spans = [S(0, 10, "PHONE", 0.7), S(0, 10, "FAX", 0.7), S(2, 14, "ACCOUNT", 0.9), S(20, 25, "PERSON", 0.6),
             S(21, 23, "PERSON", 0.6), S(30, 40, "ADDRESS", 0.5), S(30, 35, "ADDRESS", 0.5)]
    out = resolve_overlaps(spans)
    assert out == [S(2, 14, "ACCOUNT", 0.9), S(20, 25, "PERSON", 0.6), S(30, 40, "ADDRESS", 0.5)]
    # the FAX/PHONE tie is decided by type priority, whatever the input order
    tie = [S(0, 10, "PHONE", 1.0), S(0, 10, "FAX", 1.0)]
    assert resolve_overlaps(tie) == resolve_overlaps(tie[::-1]) == [S(0, 10, "FAX", 1.0)]


def test_resolve_is_order_independent():
    rng = random.Random(3)
    spans = [S(a, a + rng.randint(1, 8), rng.choice(["PHONE", "RRN", "PERSON"]), rng.choice([0.5, 0.85, 1.0]))
             for a in (rng.randint(0, 50) for _ in range(40))]
    ref = resolve_overlaps(spans)
    for _ in range(5):
        rng.shuffle(spans)
        assert resolve_overlaps(spans) == ref
    assert all(a.end <= b.start for a, b in zip(ref, ref[1:], strict=False))


def test_placeholder_mode_and_diff():
    text = "담당 김도현 (010-1234-5678) 및 김도현"
    spans = [S(3, 6, "PERSON", 0.85), S(8, 21, "PHONE", 0.85), S(25, 28, "PERSON", 0.6)]
    diff = DiffCounts()
    out = replace_spans(text, spans, placeholder_substitute, diff)
    assert out == "담당 [PERSON] ([PHONE]) 및 [PERSON]"
    assert placeholder_token("PHONE") == "[PHONE]"
    assert diff.to_json()["per_type"] == {"PERSON": {"spans": 2, "chars": 6, "docs": 1},
                                          "PHONE": {"spans": 1, "chars": 13, "docs": 1}}
    assert diff.docs_changed == 1


def test_surrogate_consistent_within_document_and_seeded():
    text = "김도현 과장과 이서연 주무관, 그리고 다시 김도현 과장. 전화 010-1234-5678"
    k = text.rfind("김도현")
    p = text.find("010")
    spans = [S(0, 3, "PERSON", 0.85), S(8, 11, "PERSON", 0.85), S(k, k + 3, "PERSON", 0.85),
             S(p, p + 13, "PHONE", 0.85)]
    out1 = replace_spans(text, spans, surrogate_substitute(DocSurrogates(42, "doc-a", language="ko")))
    out2 = replace_spans(text, spans, surrogate_substitute(DocSurrogates(42, "doc-a", language="ko")))
    out3 = replace_spans(text, spans, surrogate_substitute(DocSurrogates(42, "doc-b", language="ko")))
    assert out1 == out2  # deterministic
    assert out1 != out3  # seeded by document
    # outside spans untouched: split the output on the unchanged context to recover the surrogates
    n1, rest = out1.split(" 과장과 ", 1)
    n2, rest = rest.split(" 주무관, 그리고 다시 ", 1)
    n3, rest = rest.split(" 과장. 전화 ", 1)
    assert n1 == n3 and n1 != n2  # same person -> same surrogate; different person -> different
    assert "김도현" not in out1 and "010-1234-5678" not in out1 and rest != "010-1234-5678"


def test_surrogates_keep_type_validity():
    rng = random.Random(1)
    for _ in range(20):
        rrn = make_surrogate("RRN", "880101-1234568", rng, language="ko")
        assert v.rrn_checksum_ok(rrn) and v.birth_date_ok(rrn[:6], rrn[7])
        assert v.luhn_ok(make_surrogate("CARD", "4242-4242-4242-4242", rng, language="ko"))
        assert v.business_reg_ok(make_surrogate("BUSINESS_REG", "211-87-22658", rng, language="ko"))
        phone = make_surrogate("PHONE", "010-1234-5678", rng, language="ko")
        assert phone.startswith("010-") and len(phone) == 13
        assert "@" in make_surrogate("EMAIL", "a@b.kr", rng, language="ko")


def test_drop_density():
    text = "가" * 80 + "010-1234-5678 "
    spans = [S(80, 93, "PHONE", 1.0)]
    assert abs(density(text, spans) - 13 / len(text)) < 1e-9
