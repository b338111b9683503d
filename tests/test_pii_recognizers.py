"""Each Korean recognizer on positive and negative examples, including near-misses (dates, prices, counts,
phone-like serial numbers), through the real detector (presidio recognizers + MeCab)."""

from __future__ import annotations

import pytest

from corpora.pii import validators as v
from corpora.pii.engine import PiiDetector


@pytest.fixture(scope="module")
def det() -> PiiDetector:
    return PiiDetector()


def found(det: PiiDetector, text: str) -> set[tuple[str, str]]:
    return {(s.type, text[s.start:s.end]) for s in det.detect(text)}


POSITIVE = [
    ("PHONE", "연락처 010-1234-5678로 연락 주세요", "010-1234-5678"),
    ("PHONE", "휴대폰 01012345678 번으로", "01012345678"),
    ("PHONE", "문의: 02-2110-6543", "02-2110-6543"),
    ("PHONE", "대표번호 031.738.5021 입니다", "031.738.5021"),
    ("PHONE", "고객센터 1588-7234 (평일)", "1588-7234"),
    ("PHONE", "해외에서는 +82-10-4582-7104 로", "+82-10-4582-7104"),
    ("PHONE", "콜센터 1330 으로 문의", "1330"),
    ("FAX", "팩스 02-3475-9999 로 보내 주세요", "02-3475-9999"),
    ("FAX", "FAX: 051-637-1849", "051-637-1849"),
    ("RRN", "주민등록번호 880101-1234568 확인", "880101-1234568"),
    ("RRN", "(950101-2345676)", "950101-2345676"),
    ("RRN", "2020년 이후 발급 210315-3123456 번호", "210315-3123456"),  # no checksum since Oct 2020
    ("FRN", "외국인등록번호: 850315-5345676", "850315-5345676"),
    ("CORP_REG", "법인등록번호: 110111-0247385", "110111-0247385"),
    ("CORP_REG", "법인등록번호 110111-3847291", "110111-3847291"),  # RRN-shaped, but labelled 법인
    ("BUSINESS_REG", "사업자등록번호 211-87-22658 입니다", "211-87-22658"),
    ("DRIVER_LICENSE", "운전면허번호 11-12-345678-90", "11-12-345678-90"),
    ("PASSPORT", "여권번호 M84729168 로", "M84729168"),
    ("PASSPORT", "여권 번호: M123A4567", "M123A4567"),
    ("CARD", "카드번호 4242-4242-4242-4242 결제", "4242-4242-4242-4242"),
    ("CARD", "신용카드 5347-2918-6403-7521 로 결제", "5347-2918-6403-7521"),  # Luhn fails, context saves it
    ("ACCOUNT", "신한은행 110-4872-153649 (예금주 홍길동)", "110-4872-153649"),
    ("ACCOUNT", "농협 계좌 351-0247-1839-22 로 입금", "351-0247-1839-22"),
    ("MEDICAL_INSURANCE", "건강보험증 번호: 1-08472916384", "1-08472916384"),
    ("VEHICLE", "차량번호 47하2918 의 운반차량", "47하2918"),
    ("VEHICLE", "123가4567 차량이", "123가4567"),
    ("EMAIL", "메일은 lsy.environ@me.go.kr로 보내세요", "lsy.environ@me.go.kr"),
    ("URL", "자세한 내용은 https://www.data.go.kr/board/1 참고.", "https://www.data.go.kr/board/1"),
    ("URL", "홈페이지 www.korea.kr 에서", "www.korea.kr"),
    ("IP", "접속 IP 121.135.247.182 에서", "121.135.247.182"),
    ("IP", "IPv6 주소 2001:db8::8a2e:370:7334 로", "2001:db8::8a2e:370:7334"),
    ("ADDRESS", "주소: 서울특별시 강서구 화곡로 287, 102동 1204호", "서울특별시 강서구 화곡로 287, 102동 1204호"),
    ("ADDRESS", "경기도 성남시 분당구 정자동 178-3 소재", "경기도 성남시 분당구 정자동 178-3"),
    ("ADDRESS", "동작구 사당동 거주", "동작구 사당동"),
    ("PERSON", "참조: 김도현 사무관", "김도현"),
    ("PERSON", "작성: 송하은\n오늘", "송하은"),
    ("PERSON", "진행 상황은 정유진 과장이 담당합니다", "정유진"),
    ("PERSON", "청구인: 황보영진\n", "황보영진"),
    ("PERSON", "가구주 (양혜연, 870628-2347619)", "양혜연"),
]


@pytest.mark.parametrize("type_,text,value", POSITIVE, ids=[f"{p[0]}-{i}" for i, p in enumerate(POSITIVE)])
def test_positive(det, type_, text, value):
    assert (type_, value) in found(det, text)


NEGATIVE = [
    # dates, times, prices, counts, versions: never phone/account/identifier numbers
    "회의는 2024년 5월 12일 오후 3시 30분에 시작합니다.",
    "접수 기간은 2024-05-01 부터 2024-05-31 까지입니다.",
    "총 결제 금액은 1,234,000원입니다.",
    "인구는 9,668,465명으로 집계되었다.",
    "임진왜란(1592-1598) 당시의 기록",
    "행사는 14:30:00 부터 18:00:00 까지",
    "버전 1.2.3 에서 수정",
    "매출이 12.5% 증가하여 3,000억 원",
    "좌표는 37.5665, 126.9780 이다.",
    # phone-like serial numbers and codes
    "제품 일련번호 SN-2024-0512-7781 확인",
    "주문번호 20240512-000123 발송",
    "문서번호 행정-2024-00123 참고",
    "모델명 AB-010-1234-56789 부품",
    "02-1234-56789 는 잘못된 번호",
    # invalid shapes
    "991332-1234567 은 날짜가 아니다",  # month 13
    "256.1.1.1 은 IP가 아니다",
    "매년 63조 7000억 원을 지출한다",  # 조 is a plate letter, but here it is 'trillion'
    "여권 발급 수수료는 53,000원이다",
    "123456789 는 임의의 숫자",  # nine digits without 여권 nearby
    "번호 1-08472916384 는 임의의 숫자",  # health-insurance shape without its context
    "11-12-34 는 규격 번호",
    "이메일 주소는 공개하지 않습니다 @korea",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_negative_structured(det, text):
    structured = {t for t, _ in found(det, text)} - {"PERSON", "ADDRESS"}
    assert structured == set(), found(det, text)


def test_checksum_failure_needs_context(det):
    # Luhn-invalid 16 digits: detected as CARD only with a card context word
    assert ("CARD", "1234-5678-9012-3456") not in found(det, "번호 1234-5678-9012-3456 예시")
    assert ("CARD", "1234-5678-9012-3456") in found(det, "신용카드 1234-5678-9012-3456 예시")


def test_hangul_boundaries(det):
    # `\b` would fail here: Hangul is a word character on both sides
    assert ("PHONE", "010-1234-5678") in found(det, "번호는010-1234-5678로")
    assert ("EMAIL", "a.b@korea.kr") in found(det, "메일a.b@korea.kr로")


def test_address_negatives(det):
    # 당시 ends in 시 and 의경이다가 in 가, but neither is an administrative unit
    assert not found(det, "그 당시 의경이다가 2007년에 전역했다")


def test_person_negatives(det):
    assert not {t for t, _ in found(det, "이번 과장 회의에서 정부 장관이 발표했다")} & {"PERSON"}
    assert not {t for t, _ in found(det, "문의 전화는 고객센터로 하세요")} & {"PERSON"}
    assert not {t for t, _ in found(det, "오스트리아와 우크라이나의 관계")} & {"PERSON"}


def test_validators():
    assert v.luhn_ok("4242-4242-4242-4242") and not v.luhn_ok("4242-4242-4242-4241")
    assert v.rrn_checksum_ok("880101-1234568") and not v.rrn_checksum_ok("880101-1234567")
    assert v.business_reg_ok("211-87-22658") and not v.business_reg_ok("110-83-12345")
    assert v.birth_date_ok("880229", "1") and not v.birth_date_ok("890229", "1")  # leap years
    assert v.ipv4_ok("10.0.5.0") and not v.ipv4_ok("256.1.1.1") and not v.ipv4_ok("01.2.3.4")
    assert v.ipv6_ok("::1") and not v.ipv6_ok("14:30:00")
