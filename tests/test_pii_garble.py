"""The garbled copy of a PII gold file (datagen/pii/garble.py): every numeric identifier carries one typing or OCR
error, the gold spans follow the text exactly, and the same input and seed give the same bytes."""

from __future__ import annotations

import random

import pytest

from datagen.pii.garble import GARBLE_TYPES, KINDS, garble_file, garble_record, garble_value

DOC = {"id": "d1", "text": "성명: 홍길동\n운전면허번호: 11-12-345678-90\n연락처 010-1234-5678, 메일 a@b.kr\n"
                           "주민등록번호 880101-1234568 끝",
       "spans": [{"label": "PERSON", "start": 4, "end": 7, "text": "홍길동"},
                 {"label": "DRIVER_LICENSE", "start": 16, "end": 31, "text": "11-12-345678-90"},
                 {"label": "PHONE", "start": 36, "end": 49, "text": "010-1234-5678"},
                 {"label": "EMAIL", "start": 54, "end": 60, "text": "a@b.kr"},
                 {"label": "RRN", "start": 68, "end": 82, "text": "880101-1234568"}]}


def test_fixture_offsets():
    assert all(DOC["text"][s["start"]:s["end"]] == s["text"] for s in DOC["spans"])


@pytest.mark.parametrize("seed", range(20))
def test_spans_follow_the_text_and_only_identifiers_change(seed):
    out = garble_record(DOC, random.Random(seed))
    for s in out["spans"]:
        assert out["text"][s["start"]:s["end"]] == s["text"]
        garbled = s["label"] in GARBLE_TYPES
        assert ("garbled" in s) == garbled and (not garbled or s["garbled"] in KINDS)
    kept = [s["text"] for s in out["spans"] if "garbled" not in s]
    assert kept == ["홍길동", "a@b.kr"]
    # the text between the spans is untouched
    assert between(out) == between(DOC)


def between(rec: dict) -> list[str]:
    """The pieces of text outside the gold spans, in order."""
    cuts = [0, *(x for s in rec["spans"] for x in (s["start"], s["end"])), len(rec["text"])]
    return [rec["text"][a:b] for a, b in zip(cuts[::2], cuts[1::2], strict=True)]


def test_each_kind_is_what_it_says():
    seen: dict[str, tuple[str, str]] = {}
    for i in range(400):
        res = garble_value("11-12-345678-90", random.Random(i))
        assert res is not None
        seen.setdefault(res[1], (res[0], res[1]))
    assert set(seen) == set(KINDS)
    digits = lambda t: sum(c.isdigit() for c in t)  # noqa: E731
    assert digits(seen["extra_group"][0]) in (14, 15) and seen["extra_group"][0].count("-") == 4
    assert digits(seen["short_group"][0]) in (10, 11) and seen["short_group"][0].count("-") == 3
    assert digits(seen["trailing_digit"][0]) == 13 and seen["trailing_digit"][0].startswith("11-12-345678-90-")
    assert digits(seen["doubled_digit"][0]) == 13 and digits(seen["dropped_digit"][0]) == 11
    sep = seen["separator"][0]
    assert digits(sep) == 12 and sep != "11-12-345678-90" and len(sep) == len("11-12-345678-90")
    assert garble_value("12345", random.Random(0)) is None  # too short to garble


def test_deterministic_per_record_and_rate():
    a = list(garble_file([DOC, DOC], seed=3))
    assert a == list(garble_file([DOC, DOC], seed=3))
    assert a[0] != a[1]  # each record its own generator: the same record garbles differently at another line
    assert a != list(garble_file([DOC, DOC], seed=4))
    none = list(garble_file([DOC], seed=3, rate=0.0))
    assert none[0]["text"] == DOC["text"] and none[0]["spans"] == DOC["spans"]


def test_overlapping_gold_is_an_error():
    bad = {"text": "010-1234-5678", "spans": [{"label": "PHONE", "start": 0, "end": 13},
                                               {"label": "PHONE", "start": 4, "end": 8}]}
    with pytest.raises(ValueError, match="overlapping gold spans at 4-8"):
        garble_record(bad, random.Random(0))
