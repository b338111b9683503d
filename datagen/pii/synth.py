"""Synthetic Korean documents with gold PII spans, for tests and smoke runs.

Output records have the format of the shared evaluation file: `{"text", "spans": [{"label", "start", "end",
"text"}]}` (character offsets, end exclusive). Values are fake but well-formed (valid dates and checksums where
the real identifiers have them, the right layouts), wrapped in varied Korean sentences, and mixed with
sentences full of near-misses (dates, times, prices, counts, serial numbers) that must not be detected.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from corpora.pii import validators as v

SIDO = ["서울특별시", "부산광역시", "대구광역시", "인천광역시", "광주광역시", "대전광역시", "경기도", "강원특별자치도",
        "충청북도", "전라남도", "경상북도", "제주특별자치도"]
SIGUNGU = ["강남구", "마포구", "수원시", "성남시 분당구", "해운대구", "중구", "청주시 상당구", "춘천시", "서구", "노원구"]
ROADS = ["테헤란로", "세종대로", "중앙로", "월드컵북로", "해운대로", "문화로", "은행나무길", "시청로", "대학로", "공원로"]
DONGS = ["역삼동", "정자동", "우동", "신림동", "상계동", "봉명동", "효자동", "사직동"]
BANKS = ["신한은행", "국민은행", "우리은행", "하나은행", "농협은행", "기업은행", "카카오뱅크"]
SURNAMES = "김이박최정강조윤장임한오서신권황안송전홍"
GIVEN = ["민준", "서연", "도윤", "하은", "지호", "예린", "현우", "수빈", "지훈", "유진", "서준", "민서", "재훈", "은지"]
TITLES = ["주무관", "과장", "팀장", "교수", "기자", "씨", "님", "대리", "사무관", "원장"]

NEAR_MISSES = [
    "회의는 2024년 5월 12일 오후 3시 30분에 시작합니다.",
    "총 결제 금액은 1,234,000원이며 부가세 123,400원이 포함되어 있습니다.",
    "제품 일련번호 SN-2024-0512-7781 을 확인해 주세요.",
    "임진왜란(1592-1598) 당시의 기록이 남아 있다.",
    "작년 대비 매출이 12.5% 증가하여 3,000억 원을 기록했다.",
    "참가자는 총 1,520명이며 접수 기간은 2024.05.01~2024.05.31 입니다.",
    "버전 1.2.3 에서 오류가 수정되었다.",
    "행사는 14:30:00 부터 18:00:00 까지 진행된다.",
    "주문번호 20240512-000123 건이 발송되었습니다.",
    "문서번호 행정-2024-00123 를 참고하십시오.",
    "좌표는 37.5665, 126.9780 이다.",
    "인구는 9,668,465명으로 집계되었다.",
    "2023-2024 시즌 최종 순위는 3위였다.",
    "열차는 08:15 에 출발하여 10:45 에 도착한다.",
]


class _Doc:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.spans: list[dict] = []
        self.n = 0

    def add(self, s: str, label: str | None = None) -> None:
        if label:
            self.spans.append({"label": label, "start": self.n, "end": self.n + len(s), "text": s})
        self.parts.append(s)
        self.n += len(s)

    def record(self) -> dict:
        return {"text": "".join(self.parts), "spans": self.spans}


def _digits(rng: random.Random, k: int) -> str:
    return "".join(str(rng.randint(0, 9)) for _ in range(k))


def fake_value(label: str, rng: random.Random) -> str:
    """A well-formed fake value of a PII type."""
    if label == "PERSON":
        return rng.choice(SURNAMES) + rng.choice(GIVEN)
    if label == "PHONE":
        return rng.choice([f"010-{rng.randint(2000, 9999)}-{_digits(rng, 4)}",
                           f"02-{rng.randint(200, 999)}-{_digits(rng, 4)}",
                           f"031-{rng.randint(200, 999)}-{_digits(rng, 4)}",
                           f"010 {rng.randint(2000, 9999)} {_digits(rng, 4)}",
                           f"+82-10-{rng.randint(2000, 9999)}-{_digits(rng, 4)}",
                           f"1588-{_digits(rng, 4)}"])
    if label == "FAX":
        return f"0{rng.choice(['2', '31', '51', '44'])}-{rng.randint(200, 999)}-{_digits(rng, 4)}"
    if label in ("RRN", "FRN"):
        for _ in range(100):
            yy, mm, dd = rng.randint(50, 99), rng.randint(1, 12), rng.randint(1, 28)
            g = rng.choice("12" if label == "RRN" else "56")
            body = f"{yy:02d}{mm:02d}{dd:02d}-{g}{_digits(rng, 5)}"
            ok = v.rrn_checksum_ok if label == "RRN" else v.frn_checksum_ok
            for d in "0123456789":
                if ok(body + d):
                    return body + d
        raise RuntimeError("unreachable")
    if label == "BUSINESS_REG":
        while True:
            s = f"{rng.randint(100, 899)}-{rng.randint(10, 99)}-{_digits(rng, 5)}"
            if v.business_reg_ok(s):
                return s
    if label == "CORP_REG":
        while True:
            s = f"{rng.choice(['1101', '1301', '1801'])}{rng.randint(11, 86)}-0{_digits(rng, 6)}"
            if v.corp_reg_ok(s) and not v.birth_date_ok(s[:6], s[7]):
                return s
    if label == "CARD":
        while True:
            s = "-".join(["4" + _digits(rng, 3)] + [_digits(rng, 4) for _ in range(3)])
            if v.luhn_ok(s):
                return s
    if label == "ACCOUNT":
        return rng.choice([f"110-{_digits(rng, 3)}-{_digits(rng, 6)}", f"{_digits(rng, 6)}-{_digits(rng, 2)}-"
                           f"{_digits(rng, 6)}", f"1002-{_digits(rng, 3)}-{_digits(rng, 6)}",
                           f"351-{_digits(rng, 4)}-{_digits(rng, 4)}-{_digits(rng, 2)}"])
    if label == "PASSPORT":
        return rng.choice("MSR") + _digits(rng, 8)
    if label == "DRIVER_LICENSE":
        return f"{rng.randint(11, 28)}-{_digits(rng, 2)}-{_digits(rng, 6)}-{_digits(rng, 2)}"
    if label == "MEDICAL_INSURANCE":
        return f"{rng.randint(1, 5)}-{_digits(rng, 10)}"
    if label == "VEHICLE":
        return f"{rng.randint(10, 399)}{rng.choice('가나다라마거너더러머버서어저고노도로모보소오조구누두루무부수우주하허호')}{_digits(rng, 4)}"
    if label == "EMAIL":
        user = rng.choice(["minjun", "seoyeon.kim", "lee_jh", "park2024", "contact"])
        return f"{user}{rng.randint(1, 99)}@{rng.choice(['naver.com', 'gmail.com', 'korea.kr', 'daum.net'])}"
    if label == "URL":
        return f"https://www.{rng.choice(['example', 'minwon', 'data'])}.go.kr/{rng.choice(['board', 'notice'])}/{rng.randint(1, 9999)}"
    if label == "IP":
        return ".".join(str(rng.randint(1, 254)) for _ in range(4))
    if label == "ADDRESS":
        if rng.random() < 0.6:
            return f"{rng.choice(SIDO)} {rng.choice(SIGUNGU)} {rng.choice(ROADS)} {rng.randint(1, 400)}"
        return f"{rng.choice(SIDO)} {rng.choice(SIGUNGU)} {rng.choice(DONGS)} {rng.randint(1, 999)}-{rng.randint(1, 30)}"
    raise ValueError(f"unknown label {label}")


# Each template: a list of literal strings and (label,) slots; "{T}" in a literal is a random title.
TEMPLATES: list[list] = [
    ["담당자 ", ("PERSON",), " {T} (", ("PHONE",), ", ", ("EMAIL",), ") 으로 문의 바랍니다."],
    ["성명: ", ("PERSON",), "\n주민등록번호: ", ("RRN",), "\n주소: ", ("ADDRESS",), "\n연락처: ", ("PHONE",)],
    ["입금 계좌: {BANK} ", ("ACCOUNT",), " (예금주 ", ("PERSON",), ")"],
    ["결제 카드번호 ", ("CARD",), " 로 승인되었습니다."],
    ["사업자등록번호: ", ("BUSINESS_REG",), ", 법인등록번호: ", ("CORP_REG",)],
    ["여권번호 ", ("PASSPORT",), ", 운전면허번호 ", ("DRIVER_LICENSE",), " 확인 완료."],
    ["외국인등록번호: ", ("FRN",), " (체류 자격 E-9)"],
    ["전화 ", ("PHONE",), ", 팩스 ", ("FAX",)],
    ["자세한 내용은 홈페이지 ", ("URL",), " 를 참고하세요. 접속 IP ", ("IP",), " 에서 로그인 기록이 확인되었습니다."],
    ["현장 점검 시 차량번호 ", ("VEHICLE",), " 의 운반차량을 확인하였다."],
    ["건강보험증 번호: ", ("MEDICAL_INSURANCE",), "\n보호자: ", ("PERSON",)],
    ["어제 ", ("PERSON",), " {T}이 회의에서 발표한 내용을 정리했습니다. 연락처는 ", ("PHONE",), "로 하세요."],
    ["신청인 ", ("PERSON",), "은 ", ("ADDRESS",), " 에 거주하며 이메일 ", ("EMAIL",), " 로 회신을 원합니다."],
]


def generate(n: int, seed: int = 0, near_miss_rate: float = 0.5) -> Iterator[dict]:
    """`n` synthetic documents with gold spans; deterministic in `seed`."""
    rng = random.Random(seed)
    for _ in range(n):
        doc = _Doc()
        for k in range(rng.randint(1, 3)):
            if k:
                doc.add("\n")
            if rng.random() < near_miss_rate:
                doc.add(rng.choice(NEAR_MISSES) + " ")
            for part in rng.choice(TEMPLATES):
                if isinstance(part, tuple):
                    doc.add(fake_value(part[0], rng), part[0])
                else:
                    doc.add(part.replace("{T}", rng.choice(TITLES)).replace("{BANK}", rng.choice(BANKS)))
        yield doc.record()


