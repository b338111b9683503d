"""The offline analyzer: built without any model download, the fast detector finds exactly what presidio's
engine finds with the same recognizers, and pathological input finishes (or is cut off) instead of hanging."""

from __future__ import annotations

import random
import re

import pytest
from presidio_analyzer.nlp_engine import NoOpNlpEngine

from corpora.lang.ko.pii import ADDR_TRIGGER
from corpora.lang.ko.pii.patterns import SIDO, build_pattern_recognizers
from corpora.pii.engine import ALL_TYPES, DocTimeout, PiiDetector, _matches_at, _stdlib_copy, build_analyzer
from datagen.pii.synth import NEAR_MISSES, generate


@pytest.fixture(scope="module")
def det() -> PiiDetector:
    return PiiDetector(language="ko")


def test_offline_construction(monkeypatch):
    import spacy

    def refuse(*a, **k):
        raise AssertionError("a spaCy model was requested")

    monkeypatch.setattr(spacy, "load", refuse)
    monkeypatch.setattr(spacy.cli, "download", refuse)
    analyzer = build_analyzer(language="ko")
    assert isinstance(analyzer.nlp_engine, NoOpNlpEngine)
    assert set(analyzer.get_supported_entities("ko")) == set(ALL_TYPES)
    res = analyzer.analyze("담당자 이서연 주무관 (02-2110-6543)", language="ko", score_threshold=0.4)
    assert {r.entity_type for r in res} >= {"PERSON", "PHONE"}


def test_context_words_work_without_lemmas(det):
    # an account number is only an account near a bank/계좌 word: context must work with no NLP artifacts
    assert [s.type for s in det.detect("번호 110-4872-153649")] == []
    assert [s.type for s in det.detect("신한은행 계좌 110-4872-153649")] == ["ACCOUNT"]


def test_fast_path_equals_presidio(det):
    texts = [r["text"] for r in generate(30, seed=5)] + NEAR_MISSES + [
        "팩스 (02) 1234-5678, 전화 +82 10 1234 5678, 서울 12가 3456",
        "여러 줄\n\n경기도 수원시 팔달구 효원로 1 에서 010-2222-3333로 연락",
        "",
        # label-anchored identifiers (look-behinds reaching before the scanned window, letters in passports)
        "운전면허번호 : 충북 07-77203-61\n여권번호 M4F9063, 환급 계좌 : 하나은행 51114182629667-3",
        "<table><tr><th>성명</th><th>운전면허번호</th></tr><tr><td>홍길동</td><td>12-34-56-78-901-23</td></tr></table>",
        "Tel. (044 32) 869-7741 | Fax. 053)69997-9678\n연락처: +82-110-78774101 / 전화: 063-632-25-2462",
        # a representative number read as one by the e-mail after it (a look-ahead past the digit run's window)
        "가" * 300 + " 김민수 과장 (1588-1673,  " + "s" * 63 + "@korea.kr) 으로 " + "나" * 300,
        "다" * 300 + " (1600-1650) 으로 문의, 홉스(1588-1679)의 책 " + "라" * 300,
    ]
    assert [det.detect(t) for t in texts] == det.detect_presidio(texts)
    assert ("PHONE", "1588-1673") in {(s.type, texts[-2][s.start:s.end]) for s in det.detect(texts[-2])}


PATHOLOGICAL = {
    "100k-digits": "1" * 100_000,
    "phone-prefix-chain": "010-" * 20_000,
    "nested-parens": "(" * 30_000 + "010-1234-5678" + ")" * 30_000,
    "nested-brackets-address": "[" * 20_000 + "서울특별시 " * 5_000 + "]" * 20_000,
    "at-signs": "a@" * 30_000 + "b.kr",
    "long-url": "http://" + "a" * 100_000,
    "one-hangul-word": "김" * 100_000,
}


@pytest.mark.parametrize("text", list(PATHOLOGICAL.values()), ids=list(PATHOLOGICAL))
def test_pathological_input_finishes(det, text):
    spans = det.detect(text)
    assert all(0 <= s.start < s.end <= len(text) for s in spans)


def test_time_limit_raises_doc_timeout():
    slow = PiiDetector(doc_timeout_s=1e-9, language="ko")
    with pytest.raises(DocTimeout):
        slow.detect("연락처 010-1234-5678 " * 1000)


def test_dedup_is_presidios_remove_duplicates():
    """The fast path's tuple version of remove_duplicates keeps the same results, in the same order, and the
    same one of several equal results (which recognizer's name a span carries depends on it)."""
    import random

    from presidio_analyzer import EntityRecognizer, RecognizerResult

    from corpora.pii.engine import _dedup

    rng = random.Random(7)
    for _ in range(400):
        tuples = []
        for _ in range(rng.randint(0, 12)):
            s = rng.randint(0, 20)
            tuples.append((rng.choice(["PHONE", "ACCOUNT", "IP"]), s, s + rng.randint(1, 8),
                           rng.choice([0.0, 0.3, 0.45, 0.85, 1.0]), rng.randint(0, 3), False))
        results = [RecognizerResult(t[0], t[1], t[2], t[3], recognition_metadata={"rec": t[4]}) for t in tuples]
        want = [(r.entity_type, r.start, r.end, r.score, r.recognition_metadata["rec"])
                for r in EntityRecognizer.remove_duplicates(results)]
        assert [t[:5] for t in _dedup(tuples)] == want


def test_stdlib_pattern_copies_match_regex():
    """Where the fast path runs a pattern with `re` instead of `regex`, both find the same matches, also around
    the characters whose whitespace class differs between the two modules (\\x1c-\\x1f)."""
    from corpora.lang.ko.pii.patterns import build_pattern_recognizers
    from corpora.pii.engine import _stdlib_copy

    texts = [r["text"] for r in generate(60, seed=11)] + [
        "서울특별시\x1c강남구 테헤란로 123", "서울특별시 강남구\x1f역삼동 12-3", "경기도\u3000수원시 팔달구 효원로 1",
        "부산광역시 해운대구\x85우동 1408", "서울 12가\x1d3456", "차량 12가\u20023456 확인", "강남구 역삼동\x1e",
    ]
    copied = 0
    for rec in build_pattern_recognizers():
        for p in rec.patterns:
            std = _stdlib_copy(p.regex)
            if std is None:
                continue
            copied += 1
            for t in texts:
                assert [m.span() for m in std.finditer(t)] == [m.span() for m in p.compiled_regex.finditer(t)], \
                    (rec.name, p.name, t)
    assert copied >= 5  # the address patterns at least
    assert _stdlib_copy(r"(?<=팩스|FAX)\d") is None  # variable-width look-behind: `regex` only
    assert _stdlib_copy(r"[\s,]") is None  # \s inside a class: not rewritten


def test_fast_path_equals_presidio_around_odd_whitespace(det):
    texts = ["주소: 서울특별시\x1c강남구 테헤란로 123, 연락처 010-1234-5678", "경기도\u3000수원시 팔달구 효원로 1",
             "서울특별시 강남구\x1f역삼동 12-3 거주 김민준 씨", "차량 12가\x1d3456", "서울 12가 3456\x1c번호판"]
    assert [det.detect(t) for t in texts] == det.detect_presidio(texts)


def _address_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    words = ["서울특별시", "서울", "경기도", "세종시", "세종특별자치시", "수원시", "팔달구", "강남구", "중구", "양평군", "당시",
             "역시", "효원로", "테헤란로10길", "중앙로12번길", "역삼동", "신림1동", "읍내리", "1", "23-4", "산 12", "지하 3",
             "101동", "1203호", "B1층", "한빛타워", "(역삼동)", "에서", "는", "시", "군", "구", "가", "나다"]
    glue = [" ", " ", "  ", "\n", ", ", "", "\t", "\u3000"]
    return ["".join(rng.choice(words) + rng.choice(glue) for _ in range(rng.randint(1, 14))) for _ in range(count)]


def test_address_trigger_finds_what_the_plain_alternation_finds():
    """ADDR_TRIGGER is written as literal-first alternatives for speed; it finds what `(?:[시군구]\\s|SIDO)` finds."""
    plain = re.compile(rf"(?:[시군구]\s|{SIDO})")
    texts = _address_texts(1, 3000)
    assert sum(len(plain.findall(t)) for t in texts) > 3000
    for t in texts:
        assert [m.span() for m in ADDR_TRIGGER.finditer(t)] == [m.span() for m in plain.finditer(t)], t


def test_patterns_tried_only_where_they_can_start_match_as_a_full_scan():
    """`_matches_at` (the address patterns tried at Hangul word starts only) yields, in any window, what the
    window's `finditer` yields before the window's end, for every pattern of every recognizer that has `starts`."""
    recs = [r for r in build_pattern_recognizers() if r.starts is not None]
    assert [r.name for r in recs] == ["ko_address"]
    rng = random.Random(2)
    found = 0
    for text in _address_texts(3, 1500):
        n = len(text)
        start = rng.randint(0, n)
        stop = rng.randint(start, n)
        if rng.random() < 0.5:
            start, stop = 0, n
        endpos = min(n, stop + 160)
        for rec in recs:
            for p in rec.patterns:
                rx = _stdlib_copy(p.regex)
                assert rx is not None
                want = []
                for m in rx.finditer(text, start, endpos):
                    if m.start() >= stop:
                        break
                    if m.end() > m.start():
                        want.append(m.span())
                got = [m.span() for m in _matches_at(rx, rec.starts, text, start, stop, endpos)]
                assert got == want, (p.name, text, start, stop)
                found += len(got)
    assert found > 300
