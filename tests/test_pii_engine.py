"""The offline analyzer: built without any model download, the fast detector finds exactly what presidio's
engine finds with the same recognizers, and pathological input finishes (or is cut off) instead of hanging."""

from __future__ import annotations

import pytest
from presidio_analyzer.nlp_engine import NoOpNlpEngine

from corpora.pii.engine import ALL_TYPES, DocTimeout, PiiDetector, build_analyzer
from corpora.pii.synth import NEAR_MISSES, generate


@pytest.fixture(scope="module")
def det() -> PiiDetector:
    return PiiDetector()


def test_offline_construction(monkeypatch):
    import spacy

    def refuse(*a, **k):
        raise AssertionError("a spaCy model was requested")

    monkeypatch.setattr(spacy, "load", refuse)
    monkeypatch.setattr(spacy.cli, "download", refuse)
    analyzer = build_analyzer()
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
    ]
    assert [det.detect(t) for t in texts] == det.detect_presidio(texts)


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
    slow = PiiDetector(doc_timeout_s=1e-9)
    with pytest.raises(DocTimeout):
        slow.detect("연락처 010-1234-5678 " * 1000)
