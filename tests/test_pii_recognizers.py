"""Each Korean recognizer on positive and negative examples, including near-misses (dates, prices, counts,
phone-like serial numbers), through the real detector (presidio recognizers + MeCab)."""

from __future__ import annotations

import random
import re

import pytest

from corpora.lang.ko.pii import names as n
from corpora.pii import validators as v
from corpora.pii.engine import PiiDetector


@pytest.fixture(scope="module")
def det() -> PiiDetector:
    return PiiDetector(language="ko")


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
    # road-name addresses with the detail (동·층·호, building) and reference (법정동, 공동주택) parts
    ("ADDRESS", "주소: 서울특별시 강남구 테헤란로 152, 3층 (역삼동)", "서울특별시 강남구 테헤란로 152, 3층 (역삼동)"),
    ("ADDRESS", "본사: 서울특별시 강남구 테헤란로 152, 한빛타워 B동 1203호 (역삼동, 한빛아파트) 로 이전",
     "서울특별시 강남구 테헤란로 152, 한빛타워 B동 1203호 (역삼동, 한빛아파트)"),
    ("ADDRESS", "부산광역시 해운대구 센텀중앙로 79 (우동, 센텀스카이아파트)에서",
     "부산광역시 해운대구 센텀중앙로 79 (우동, 센텀스카이아파트)"),
    ("ADDRESS", "경기 성남시 분당구 정자일로 95, 5층 501호 방문", "경기 성남시 분당구 정자일로 95, 5층 501호"),  # short 시·도
    ("ADDRESS", "서울 강남구 테헤란로10길 9 소재", "서울 강남구 테헤란로10길 9"),  # numbered side road
    ("ADDRESS", "세종특별자치시 한누리대로 2130 (보람동)", "세종특별자치시 한누리대로 2130 (보람동)"),  # no 시·군·구
    ("ADDRESS", "세종시 도움6로 11, 3층 정부청사", "세종시 도움6로 11, 3층"),
    ("ADDRESS", "서울특별시 종로구 세종대로 지하 172 역사", "서울특별시 종로구 세종대로 지하 172"),  # underground
    ("ADDRESS", "경기도 양평군 양서면 목왕리 산 12-3 임야", "경기도 양평군 양서면 목왕리 산 12-3"),  # mountain lot
    ("ADDRESS", "전라남도 완도군 청산면 도청리 123-4번지 소재", "전라남도 완도군 청산면 도청리 123-4번지"),
    ("ADDRESS", "주소: 서울특별시 강남구\n테헤란로 152, 101동 1502호\n연락처", "서울특별시 강남구\n테헤란로 152, 101동 1502호"),
    # licences: the 12-digit layout with and without separators, and the printed forms with a region name
    ("DRIVER_LICENSE", "운전면허번호 서울 92-123456-01 (1종 보통)", "서울 92-123456-01"),
    ("DRIVER_LICENSE", "면허번호: 경기북부 15-654321-12 입니다", "경기북부 15-654321-12"),
    ("DRIVER_LICENSE", "운전면허 112345678901 확인", "112345678901"),
    ("DRIVER_LICENSE", "운전면허번호 13.05.123456.78", "13.05.123456.78"),
    # resident-number layouts with spaces around the separator, a dash, or a space alone
    ("RRN", "주민등록번호 900101 - 1234567", "900101 - 1234567"),
    ("RRN", "주민번호: 900101–1234567 (본인)", "900101–1234567"),
    ("RRN", "주민등록번호 900101 1234567 기재", "900101 1234567"),
    ("FRN", "외국인등록번호 850315 - 5345676", "850315 - 5345676"),
    # corporate numbers in their printed forms; health-insurance numbers with the label on the line above
    ("CORP_REG", "법인등록번호 110111 - 3847291", "110111 - 3847291"),
    ("CORP_REG", "법인등록번호: 1101113847291", "1101113847291"),
    ("BUSINESS_REG", "사업자등록번호 2118722658 (간이)", "2118722658"),
    ("MEDICAL_INSURANCE", "건강보험증 번호\n1-2345678901", "1-2345678901"),
    ("MEDICAL_INSURANCE", "<tr><th>건강보험증번호</th><td>5-1234567890</td></tr>", "5-1234567890"),
    ("MEDICAL_INSURANCE", "피보험자 증번호: 12345678901", "12345678901"),
    # names after padded labels, before and after titles, in signature blocks, the forms' example names
    ("PERSON", "성    명 : 김민수\n", "김민수"),
    ("PERSON", "이  름   최서윤", "최서윤"),
    ("PERSON", "<th>성명</th><td>황보혜정</td>", "황보혜정"),
    ("PERSON", "과장 김민수에게 보고", "김민수"),
    ("PERSON", "담당 주무관 이서연 (전화 044-200-1234)", "이서연"),
    ("PERSON", "(담당: 이민정, 전화 02-123-4567)", "이민정"),
    ("PERSON", "\n2024. 5. 12.\n\n신청인  홍길동  (서명 또는 인)", "홍길동"),
    ("PERSON", "대표이사 김철수 (인)", "김철수"),
    ("PERSON", "남궁민수 교수", "남궁민수"),
    ("PERSON", "작성자:\t독고영재", "독고영재"),
    # fax keys as letters and signatures print them; area codes closed by ')' alone
    ("FAX", "전화 031-2860-4726  전송 063-571-4787 / 담당", "063-571-4787"),
    ("FAX", "Tel. 043-365-4042 | Fax. 053.7102.1974", "053.7102.1974"),
    ("FAX", "전화 031-5062-2633  F. 052-7345-6726 | Mobile", "052-7345-6726"),
    ("FAX", "<tr><th>팩스</th><td>033-330-4349</td></tr>", "033-330-4349"),
    ("FAX", "팩스번호 055)813-3095 / 메일", "055)813-3095"),
    # accounts of internet banks (bare digits) and with spaced groups, next to a bank word
    ("ACCOUNT", "보증금 입금 계좌: 카카오뱅크 3333996437063 (예금주: 노준소)", "3333996437063"),
    ("ACCOUNT", "케뱅 100286421936 (예금주 임태승)", "100286421936"),
    ("ACCOUNT", "을의 신한은행 계좌 140 548 370617로 지급한다", "140 548 370617"),
    ("BUSINESS_REG", "사업자등록번호: 211 87 22658, 대표자", "211 87 22658"),
    ("VEHICLE", "내 차 20보2551 주차장 B구역", "20보2551"),
    # a value in an HTML table takes its label from the column's header cell
    ("MEDICAL_INSURANCE", "<table><tr><th>성명</th><th>건강보험증번호</th></tr>\n<tr><td>김민수</td><td>1-8922104173</td>"
                          "</tr></table>", "1-8922104173"),
    # chat speakers, e-mail headers, contract parties, self-introductions, table cells, native given names
    ("PERSON", "[김철빈] [오후 6:46] 택배 왔어", "김철빈"),
    ("PERSON", "오수빈: 번호 바뀜 010-1234-5678", "오수빈"),
    ("PERSON", "2025. 10. 21. 오전 11:16, 구은민 : 택배 송장", "구은민"),
    ("PERSON", "To: 김서혁 <seohyeok@example.com>", "김서혁"),
    ("PERSON", '유한회사 샘운바이오(이하 "사업주"라 함)과(와) 오보형(이하 "근로자"라 함)', "오보형"),
    ("PERSON", "주식회사 한빛 구매팀 홍길동입니다.", "홍길동"),
    ("PERSON", "<tr><td>3</td><td>이은지</td><td>1987</td></tr>", "이은지"),
    ("PERSON", "성명: 이한가람  (서명)", "이한가람"),
    ("PERSON", "판 사  김민수", "김민수"),
    ("PERSON", "자세한 사항은 국장 이승명(02-123-4567)에게", "이승명"),
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
    "운전면허 시험장은 서울 11곳이다",  # a region name and a count, not a licence
    "주민등록번호 변경 건수 900101 건",
    "번호 1348672683 은 임의의 숫자",  # ten bare digits with a business checksum, but no 사업자 context
    "사건번호 2023가합12345 판결",
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


def test_address_stops_at_prose(det):
    # the detail and reference grammar must not swallow the words after an address
    t = "서울특별시 강남구 테헤란로 152 에서 회의를 열었다 (10명 참석)"
    assert found(det, t) == {("ADDRESS", "서울특별시 강남구 테헤란로 152")}


def test_person_anchor_negatives(det):
    persons = lambda t: {v for k, v in found(det, t) if k == "PERSON"}  # noqa: E731
    # a particle-ending word before a title that precedes a name; labels; place heads; company names
    assert persons("자세한 사항은 국장 이승명(02-123-4567)에게") == {"이승명"}
    assert persons("세종특별자치시장\n기안자 주무관 박성승  검토자") == {"박성승"}
    assert persons("신청인 정수인 (인)\n노원구청장 귀하") == {"정수인"}
    assert persons("김제시장 귀하") == set() and persons("고용노동부장관 귀하") == set()
    assert persons("피 고  유한회사 라봉식품") == set()
    assert persons("<tr><th>설립일</th><td>2019</td></tr>") == set()


def test_optional_types_are_off_by_default(det):
    text = "생년월일: 1987년 3월 2일, 만 34세, 우편번호 06236"
    assert {t for t, _ in found(det, text)} == set()
    opt = PiiDetector(types=("AGE", "DT_BIRTH", "POSTAL_CODE"), language="ko")
    assert found(opt, text) == {("DT_BIRTH", "1987년 3월 2일"), ("AGE", "만 34세"), ("POSTAL_CODE", "06236")}
    assert found(opt, "김민서 (1981년 6월 19일생)") == {("DT_BIRTH", "1981년 6월 19일")}
    assert found(opt, "이수정 (1972년생) 은 60대 후반") >= {("DT_BIRTH", "1972년생"), ("AGE", "60대 후반")}
    table = "<table><tr><th>성명</th><th>생년월일</th></tr>\n<tr><td>김민수</td><td>1992.07.20</td></tr></table>"
    assert ("DT_BIRTH", "1992.07.20") in found(opt, table)
    assert ("DT_BIRTH", "1992.07.20") not in found(opt, "회의 1992.07.20 개최")  # a date with no birth label
    # not an age, a date of birth or a postal code: centuries, generations, plain dates, counts
    assert found(opt, "21세기 2030세대의 회의는 2024년 5월 12일, 참가자 12345명") == set()
    with pytest.raises(ValueError, match="unknown PII types"):
        PiiDetector(types=("AGE", "SHOE_SIZE"), language="ko")


def test_validators_come_from_stdnum_where_it_has_them():
    # python-stdnum's kr.brn layout rules: tax office >= 101, business type not 00, serial not 0000
    assert not v.business_reg_ok("250-00-80636") and not v.business_reg_ok("100-12-34560")
    # exactly one check digit fits, two more than the resident number's (the pre-2020 foreigner scheme)
    body = "850315-534567"
    frn = [d for d in "0123456789" if v.frn_checksum_ok(body + d)]
    rrn = [d for d in "0123456789" if v.rrn_checksum_ok(body + d)]
    assert len(frn) == len(rrn) == 1 and int(frn[0]) == (int(rrn[0]) + 2) % 10


# Issue 34: an identifier after a label that names its type, in a shape no canonical pattern admits (typing and
# OCR errors). (type, text, label, value): the value is found after its label, with the label-anchored reason and
# a score below any validated match, and nothing is found once `label` is replaced by a neutral word.
GARBLED = [
    ("DRIVER_LICENSE", "운전면허번호 12-34-56-78-901-23, 연락처", "운전면허번호", "12-34-56-78-901-23"),  # extra group
    ("DRIVER_LICENSE", "운전면허증(13-05-7788-40)을 제시", "운전면허증", "13-05-7788-40"),  # short group
    ("DRIVER_LICENSE", "운전면허번호 14-22-31-09-876543-2 입니다", "운전면허번호", "14-22-31-09-876543-2"),  # trailing
    ("DRIVER_LICENSE", "제1종 보통 운전면허(면허번호: 충북 07-3477-92)를", "면허번호", "충북 07-3477-92"),  # region
    ("DRIVER_LICENSE", "대상자 운전면허번호: 170966949060-0\n3.", "운전면허번호", "170966949060-0"),  # a lone 0
    ("RRN", "주민등록번호: 900101-1234567-1 확인", "주민등록번호", "900101-1234567-1"),
    ("RRN", "주민등록번호 : 920227.- 2764467\n주 소", "주민등록번호", "920227.- 2764467"),  # OCR: dot and dash
    ("RRN", "주민등록번호: 4111291386823-785   전화", "주민등록번호", "4111291386823-785"),
    ("FRN", "외국인등록번호: 830127-538165   전화", "외국인등록번호", "830127-538165"),  # a digit lost
    ("CORP_REG", "<tr><th>등록번호(법인)</th><td>14611-1643326</td></tr>", "등록번호(법인)", "14611-1643326"),
    ("BUSINESS_REG", "사업자등록번호: 5-87-51331\n", "사업자등록번호", "5-87-51331"),
    ("BUSINESS_REG", "사업자등록번호: 719-86-10324-783, 법인", "사업자등록번호", "719-86-10324-783"),
    ("PASSPORT", "탑승객 박빈님의 여권번호 M315G35, 생년월일", "여권번호", "M315G35"),
    ("PASSPORT", "기존 여권번호 : M990-139Y2512   만료일", "여권번호", "M990-139Y2512"),
    ("ACCOUNT", "환급 계좌 : 하나은행 51114182629667-3   예금주", "환급 계좌 : 하나은행", "51114182629667-3"),
    ("ACCOUNT", "카카오뱅크 계좌(3333-820-99-3520925)로 송금", "카카오뱅크 계좌", "3333-820-99-3520925"),
    ("MEDICAL_INSURANCE", "건강보험증번호 : 4-101-8370346158\n차량", "건강보험증번호", "4-101-8370346158"),
    ("CARD", "자동이체 카드 : 4786-56-8236-7695\n「개인", "카드", "4786-56-8236-7695"),
    ("PHONE", "대표: 강경규  전화: 063-632-25-2462", "전화", "063-632-25-2462"),
    ("PHONE", "연락처: +82-55-111-921-5659\n", "연락처", "+82-55-111-921-5659"),
    ("FAX", "품질관리팀 | Fax. 041-867-3109-8  M.", "Fax.", "041-867-3109-8"),
    # a form field: the label on the line above a value that opens its line
    ("DRIVER_LICENSE", "운전면허번호\n12-34-56-78-901-23\n발급일", "운전면허번호", "12-34-56-78-901-23"),
    # a table: the label in the header of the value's column
    ("DRIVER_LICENSE", "<table><tr><th>성명</th><th>운전면허번호</th></tr>\n<tr><td>홍길동</td>"
                       "<td>12-34-56-78-901-23</td></tr></table>", "운전면허번호", "12-34-56-78-901-23"),
]


@pytest.mark.parametrize("type_,text,label,value", GARBLED, ids=[f"{g[0]}-{i}" for i, g in enumerate(GARBLED)])
def test_garbled_identifier_after_its_label(det, type_, text, label, value):
    from corpora.lang.ko.pii.patterns import LABELLED, SURE

    spans = [s for s in det.detect(text) if text[s.start:s.end] == value]
    assert [s.type for s in spans] == [type_], det.detect(text)
    assert spans[0].recognizer.startswith(f"ko_labelled_{type_.lower()}") and spans[0].score == LABELLED < SURE
    unlabelled = text.replace(label, "참고")
    start = unlabelled.index(value)
    hits = [s for s in det.detect(unlabelled) if s.start < start + len(value) and start < s.end
            and s.type not in ("PERSON", "ADDRESS")]
    assert hits == [], [(s.type, unlabelled[s.start:s.end], s.recognizer) for s in hits]


def test_validated_identifiers_keep_their_own_reason(det):
    """A value in its canonical shape after its label is the canonical recognizer's (checksum, full score), not
    the label-anchored one's."""
    for text, value, rec in (("운전면허번호 11-12-345678-90", "11-12-345678-90", "ko_driver_license"),
                             ("주민등록번호 880101-1234568", "880101-1234568", "ko_rrn"),
                             ("사업자등록번호 211-87-22658", "211-87-22658", "ko_business_reg")):
        [span] = [s for s in det.detect(text) if text[s.start:s.end] == value]
        assert span.recognizer == rec and span.score == 1.0


LABELLED_NEGATIVE = [
    "사업자등록번호 2019.03.01 발급",  # a date after the label
    "전화 2024. 1. 15. 접수",
    "주민등록번호 발급일 2020. 1. 1.",  # another word between the label and the number
    "카드 3장과 계좌 2개를 보유",  # counts
    "운전면허번호 12-34 만 기재",  # too few digits for a licence
    "주민등록번호: 000000-0000000",  # a dummy value
    "계좌번호 000-000-000000 (예시)",
    "여권번호 미기재, 2024년 접수",
]


@pytest.mark.parametrize("text", LABELLED_NEGATIVE)
def test_labels_do_not_make_identifiers_of_dates_counts_or_dummies(det, text):
    assert {t for t, _ in found(det, text)} - {"PERSON", "ADDRESS"} == set(), found(det, text)


def test_key_value_table_rows_are_not_column_headers(det):
    """A table whose first row holds data cells (`<th>label</th><td>value</td>`) has no header row: a value
    further down takes its label from its own row, not from the first row's cells."""
    text = ("<table><tr><th>주민등록번호</th><td>880101-1234568</td></tr>\n"
            "<tr><th>운전면허번호</th><td>11-99-60653-41</td></tr></table>")
    assert ("DRIVER_LICENSE", "11-99-60653-41") in found(det, text)
    assert ("RRN", "11-99-60653-41") not in found(det, text)


# Representative numbers (전국대표번호: a 15YY/16YY/18YY block, then four digits) whose digits also read as a year
# range, within a century (issue 49): `_phone` dropped them as years before any context word could count, so the
# scale test's planted contact line `담당자 NAME TITLE (1588-16xx, e-mail)` lost its phone (3 of 26,365 values).
REP_YEAR_POSITIVE = [
    ("담당자 김민수 과장 (1588-1673, minjun12@naver.com) 으로 문의 바랍니다.", "1588-1673"),  # the planted line
    ("김민수 과장 (1588-1673, minjun12@naver.com)", "1588-1673"),  # an e-mail beside it, no phone word
    ("(1600-1650, contact7@korea.kr)", "1600-1650"),
    ("(1877-1900 / seoyeon.kim99@daum.net)", "1877-1900"),
    ("담당자 이서연 주무관 (1588-1600)", "1588-1600"),  # 담당자 before it
    ("고객센터 1544-1600 (평일 09시~18시)", "1544-1600"),  # 15YY
    ("대표번호 1666-1700 으로 연락", "1666-1700"),  # 16YY
    ("상담: 1899-1950", "1899-1950"),  # 18YY
    ("1522-1530으로 문의하세요", "1522-1530"),  # a call to call after it
    ("예약은 (1833-1900) 전화 주세요", "1833-1900"),
    ("전화번호: 1588-1673", "1588-1673"),
]


@pytest.mark.parametrize("text,value", REP_YEAR_POSITIVE)
def test_representative_number_that_reads_as_a_year_range(det, text, value):
    assert ("PHONE", value) in found(det, text), found(det, text)


REP_YEAR_NEGATIVE = [
    "홉스(1588-1679)의 리바이어던",  # an assigned block, but a life and no phone word: a year range
    "조선 중기(1600-1650)의 기록",
    "(1800-1850)",
    "고객센터 1592-1598",  # a phone word, but 1592 is no assigned block: the year range stays one
    "전화 발명가 벨(1847-1922)",
    "고객센터 1234-5678 (예시)",  # not a 15/16/18 block: never a representative number
    "대표번호 1234-5678, help@korea.kr",
    "문의 2023-1204",  # a year and a date
    "고객센터 1588-0000",  # a dummy value
]


@pytest.mark.parametrize("text", REP_YEAR_NEGATIVE)
def test_year_ranges_and_other_blocks_stay_unmatched(det, text):
    assert {t for t, _ in found(det, text)} - {"PERSON", "ADDRESS", "EMAIL"} == set(), found(det, text)


def test_planted_contact_line_keeps_every_representative_number(det):
    """The scale corpus's line (datagen.pii.synth's first template) with every number of each family that reads
    as a year range: all found, with the e-mail and the name beside them."""
    import random

    from datagen.pii import synth

    template = synth.TEMPLATES[0]
    assert [p for p in template if isinstance(p, tuple)] == [("PERSON",), ("PHONE",), ("EMAIL",)]
    rng = random.Random(49)
    for block in ("1588", "1644", "1899"):
        for last in range(int(block), int(block) + 101):
            values = {"PERSON": synth.fake_value("PERSON", rng), "PHONE": f"{block}-{last:04d}",
                      "EMAIL": synth.fake_value("EMAIL", rng)}
            text = "".join(values[p[0]] if isinstance(p, tuple) else p.replace("{T}", rng.choice(synth.TITLES))
                           for p in template)
            got = found(det, text)
            assert ("PHONE", values["PHONE"]) in got and ("EMAIL", values["EMAIL"]) in got, (text, got)


@pytest.mark.parametrize("seed", range(3))
def test_the_person_gates_hold_wherever_their_pattern_matches(seed):
    """`ID_GATE` and `speaker_possible` skip ID_RX / SPEAKER_RX on texts that cannot hold a match (issue 49):
    on texts assembled from fragments of both kinds, wherever the pattern matches, its gate passes; and the gates
    do reject texts (else they would save nothing)."""
    frags = ["[김철빈] [오후 6:46] 택배 왔어", "이서연: 네 알겠습니다", "  박민수 : 확인", "오후 2:53, 최지우 : 안녕",
             "AM 9:05, 정하늘: 출발", "양혜연, 870628-2", "차예진 (010-9214-", "김영수(만 34세)", "이준호, 29세",
             "회의는 3시: 안건", "가격은 (약 3만 원)", "[공지] 내일 휴무", "오늘 날씨는 맑음.", "\n", " ", "위원장 김민수",
             "2024, 1분기", "연락처(02-", "[사진]", "오후 3:10 회의", ":", ","]
    rng = random.Random(seed)
    rejected = {"id": 0, "speaker": 0}
    for _ in range(3000):
        text = "".join(rng.choice(frags) + rng.choice(["", " ", "\n"]) for _ in range(rng.randint(1, 6)))
        if n.ID_RX.search(text):
            assert n.ID_GATE.search(text), text
        rejected["id"] += n.ID_GATE.search(text) is None
        if n.SPEAKER_RX.search(text):
            assert n.speaker_possible(text), text
        rejected["speaker"] += not n.speaker_possible(text)
    assert min(rejected.values()) > 100


_PLAIN = n.plain_patterns()


def _person_texts(seed: int, count: int) -> list[str]:
    """Texts assembled from what the person patterns look for and what trips them: titles and labels, spread or
    glued, surnames (compound ones too), particles, syllables, markup and breaks."""
    rng = random.Random(seed)
    words = [*n.TITLES, *n.LABELS, *n.COMPOUND_SURNAMES, *n.PARTICLES, *n.CANONICAL, "김민수", "이서연", "황보민",
             "남궁은서", "독고", "선우진", "김", "이", "박", "가", "나", "하은", "국장", "과장님", "위원장"]
    glue = ["", "", " ", "  ", "\n", ": ", "\t", "<td>", "</td>", "(", ", ", "\u3000", "1"]
    out = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 12)):
            w = rng.choice(words)
            if len(w) > 1 and rng.random() < 0.15:
                w = " ".join(w)  # a label spread over a column
            parts.append(w + rng.choice(glue))
        out.append("".join(parts))
    return out


@pytest.mark.parametrize("name", sorted(_PLAIN))
def test_fast_person_patterns_match_what_the_plain_ones_match(name):
    """`alternation` (a trie of the titles or labels) and the word-start test behind the first character
    (`WORD_START`) are speed only: on 4,000 assembled texts every match of each fast pattern, its span and its
    group, equals the plain pattern's; and the texts do hold matches (else the comparison would say nothing)."""
    fast, plain = getattr(n, name), _PLAIN[name]
    assert fast.pattern != plain.pattern
    matches = 0
    for text in _person_texts(sorted(_PLAIN).index(name), 4000):
        got = [(m.span(), m.groups()) for m in fast.finditer(text)]
        assert got == [(m.span(), m.groups()) for m in plain.finditer(text)], text
        matches += len(got)
    assert matches > 500


def test_alternation_prefers_the_longest_word_as_the_plain_alternation_does():
    words = ["과장", "과장님", "과", "교수", "교수님", "부장", "부"]
    fast = re.compile(rf"(?:{n.alternation(words, '[ ]?')})([가-힣]?)")
    plain = re.compile(rf"(?:{'|'.join('[ ]?'.join(w) for w in sorted(words, key=len, reverse=True))})([가-힣]?)")
    for text in ["과장님께", "과 장 님", "과장 님이", "교수", "부 장", "부", "과", "교수님님"]:
        assert [(m.span(), m.groups()) for m in fast.finditer(text)] == \
            [(m.span(), m.groups()) for m in plain.finditer(text)], text
    assert n.alternation(["ab", "a"]) == "(?:a(?:(?:b))?)"


def test_dictionary_candidates_are_the_candidate_matches_mecab_admits():
    """`dictionary_candidates` (findall, a word cache, `str.find`) returns exactly the CANDIDATE_RX matches whose
    word is no title or place and reads alone as a name, compound surnames and a syllable after them included."""
    texts = _person_texts(7, 1500) + ["황보민수 씨", "황보민", "남궁은서가", "김민수김민수 김민수", "(김민수)", "선우진호"]
    admitted = 0
    for text in texts:
        want = [m.span() for m in _PLAIN["CANDIDATE_RX"].finditer(text)
                if not (m.group()[1:] in n.TITLE_SET or m.group()[-1] in "시군구읍면") and n.is_dictionary_name(m.group())]
        assert n.dictionary_candidates(text) == want, text
        admitted += len(want)
    assert admitted > 100
