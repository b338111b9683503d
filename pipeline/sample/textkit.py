"""Shared pieces of the sample generator: Korean particles, documents with gold PII spans, templates, word lists.

Everything here is written for the sample: names of companies, schools, teams and villages are made up; cities,
countries and ministries are real names used as plain vocabulary. PII values come from `corpora.pii.synth`
(fake but well-formed: valid checksums and layouts), imported on first use so that `pipeline/` keeps no
module-level import of the packages above it (tests/test_layout.py).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

# ---- particles -----------------------------------------------------------------------------------------------
# Final consonant of a digit's Korean reading (영 일 이 삼 사 오 육 칠 팔 구): True when it has one.
_DIGIT_FINAL = {"0": True, "1": True, "2": False, "3": True, "4": False, "5": False, "6": True, "7": True,
                "8": True, "9": False}
_DIGIT_RIEUL = {"1", "7", "8"}
_SUFFIX_FINAL = {"%": False, "m": False, "g": False, "k": False, "L": True, "t": False}
# particle (as written after a final consonant) -> (after a final consonant, after a vowel)
_PAIRS = {
    "은": ("은", "는"), "이": ("이", "가"), "을": ("을", "를"), "과": ("과", "와"), "으로": ("으로", "로"),
    "이다": ("이다", "다"), "이라는": ("이라는", "라는"), "이나": ("이나", "나"), "아": ("아", "야"),
    "이에요": ("이에요", "예요"), "이었다": ("이었다", "였다"), "이라고": ("이라고", "라고"), "이며": ("이며", "며"),
    "이고": ("이고", "고"), "이랑": ("이랑", "랑"), "으로서": ("으로서", "로서"), "이었던": ("이었던", "였던"),
}


def _last_letter(word: str) -> str:
    stripped = word.rstrip(" )]\"'’”.")
    return stripped[-1] if stripped else ""


def has_final(word: str) -> bool:
    """Whether the word's last syllable ends in a consonant (digits read in Korean; Latin letters: no)."""
    c = _last_letter(word)
    if "가" <= c <= "힣":
        return (ord(c) - 0xAC00) % 28 != 0
    if c in _DIGIT_FINAL:
        return _DIGIT_FINAL[c]
    return _SUFFIX_FINAL.get(c, False)


def rieul_final(word: str) -> bool:
    c = _last_letter(word)
    if "가" <= c <= "힣":
        return (ord(c) - 0xAC00) % 28 == 8
    return c in _DIGIT_RIEUL


def particle(word: str, p: str) -> str:
    """The form of particle `p` (given in its after-consonant form, e.g. 은, 이, 을, 으로) that fits `word`."""
    if p not in _PAIRS:
        return p
    if p in ("으로", "으로서") and rieul_final(word):
        return _PAIRS[p][1]
    return _PAIRS[p][0] if has_final(word) else _PAIRS[p][1]


def josa(word: str, p: str) -> str:
    return word + particle(word, p)


# ---- documents with gold spans -------------------------------------------------------------------------------
@dataclass
class Span:
    label: str
    start: int
    end: int  # exclusive
    text: str


@dataclass
class Doc:
    """Text built piece by piece; pieces added with a label are gold PII spans (character offsets)."""

    parts: list[str] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    n: int = 0

    def add(self, s: str, label: str | None = None) -> Doc:
        if label:
            self.spans.append(Span(label, self.n, self.n + len(s), s))
        self.parts.append(s)
        self.n += len(s)
        return self

    def extend(self, other: Doc) -> Doc:
        for sp in other.spans:
            self.spans.append(Span(sp.label, sp.start + self.n, sp.end + self.n, sp.text))
        self.parts.extend(other.parts)
        self.n += other.n
        return self

    @property
    def text(self) -> str:
        return "".join(self.parts)


def join(docs: list[Doc], sep: str) -> Doc:
    out = Doc()
    for i, d in enumerate(docs):
        if i:
            out.add(sep)
        out.extend(d)
    return out


# ---- templates -----------------------------------------------------------------------------------------------
# `{slot}` or `{slot:은}` (the slot's value, then the particle form that fits it). A slot value is a string or
# (string, PII label).
SLOT = re.compile(r"\{(\w+)(?::([^}]+))?\}")
Value = str | tuple[str, str | None]
Filler = Callable[[random.Random], Value]


def render(template: str, fill: Callable[[str], Value]) -> Doc:
    """The template with every slot filled by `fill(slot name)`; a slot used twice gets one value."""
    doc = Doc()
    seen: dict[str, tuple[str, str | None]] = {}
    pos = 0
    for m in SLOT.finditer(template):
        doc.add(template[pos:m.start()])
        name, p = m.group(1), m.group(2)
        if name not in seen:
            v = fill(name)
            seen[name] = v if isinstance(v, tuple) else (v, None)
        text, label = seen[name]
        doc.add(text, label)
        if p:
            doc.add(particle(text, p))
        pos = m.end()
    doc.add(template[pos:])
    return doc


def filler(rng: random.Random, extra: Mapping[str, Filler] | None = None) -> Callable[[str], Value]:
    """A slot filler over SLOTS (and `extra`, which wins), drawing from `rng`."""
    table = {**SLOTS, **(extra or {})}

    def fill(name: str) -> Value:
        key = name.rstrip("0123456789")  # {person2}: a second person
        if key not in table:
            raise KeyError(f"unknown template slot {{{name}}}")
        return table[key](rng)

    return fill


def memo(fill: Callable[[str], Value]) -> Callable[[str], Value]:
    """`fill` that gives each slot name one value for its whole life (one article keeps its company, city and
    people from the headline to the last sentence)."""
    cache: dict[str, Value] = {}

    def get(name: str) -> Value:
        if name not in cache:
            cache[name] = fill(name)
        return cache[name]

    return get


def fake(label: str) -> Filler:
    """A filler giving a fake PII value of `label` (corpora.pii.synth's value makers), marked with its label."""

    def make(rng: random.Random) -> Value:
        from corpora.pii.synth import fake_value

        return fake_value(label, rng), label

    return make


def pick(words: list[str]) -> Filler:
    return lambda rng: rng.choice(words)


def number(lo: int, hi: int, fmt: str = "{:,}") -> Filler:
    return lambda rng: fmt.format(rng.randint(lo, hi))


# ---- word lists ----------------------------------------------------------------------------------------------
CITIES = ["서울", "부산", "대구", "인천", "광주", "대전", "울산", "세종", "수원", "춘천", "청주", "전주", "포항", "창원",
          "제주", "강릉", "여수", "안동", "경주", "목포", "원주", "천안", "김해", "군산"]
COUNTRIES = ["미국", "중국", "일본", "독일", "프랑스", "영국", "인도", "베트남", "브라질", "호주", "캐나다", "러시아",
             "멕시코", "인도네시아", "이탈리아", "스페인", "태국", "폴란드", "이집트", "칠레"]
COMPANIES = ["한빛전자", "새솔바이오", "푸른에너지", "대한물류", "미래통신", "하늘항공", "누리소프트", "다온제약",
             "바른식품", "서해조선", "한결자동차", "별빛엔터테인먼트", "초록화학", "온누리유통", "가람건설", "새봄금융",
             "빛고을반도체", "한울게임즈", "두리모빌리티", "청솔제지", "해맞이식품", "마루로보틱스", "은빛배터리",
             "다솜화장품", "열매농산"]
MINISTRIES = ["기획재정부", "교육부", "보건복지부", "국토교통부", "환경부", "과학기술정보통신부", "문화체육관광부",
              "행정안전부", "고용노동부", "산업통상자원부", "중소벤처기업부", "농림축산식품부", "해양수산부", "통계청",
              "기상청", "식품의약품안전처", "경찰청", "소방청", "국세청", "질병관리청"]
SCHOOLS = ["한별대학교", "누리대학교", "가온대학교", "새길대학교", "해오름대학교", "은하대학교", "푸른숲대학교",
           "다올대학교"]
TEAMS = ["서울 유니콘스", "부산 마린스", "대구 라이온하트", "인천 씨호크스", "광주 파이어버드", "대전 코메츠",
         "수원 나이츠", "울산 웨일스", "창원 다이노스타", "청주 블루버드"]
PARTIES = ["새미래당", "국민연합", "정의노동당", "희망민주당"]
VILLAGES = ["솔내마을", "해바위마을", "달래골", "은행정이마을", "물푸레마을", "가재울", "노루목마을", "진달래골"]
RIVERS = ["가람천", "솔강", "은빛내", "버들강", "맑은천"]
MOUNTAINS = ["청봉산", "구름산", "노을봉", "하늘재", "바위산"]
FOODS = ["비빔밥", "김치찌개", "된장찌개", "떡볶이", "냉면", "삼계탕", "불고기", "잡채", "칼국수", "수제비", "순두부찌개",
         "갈비탕", "김밥", "파전", "만두국", "닭갈비", "콩국수", "육개장"]
PRODUCTS = ["스마트폰", "노트북", "무선 이어폰", "전기차", "태블릿", "스마트워치", "로봇청소기", "공기청정기", "전기자전거",
            "게임기", "냉장고", "세탁기"]
SPORTS = ["축구", "야구", "농구", "배구", "골프", "마라톤", "수영", "양궁", "탁구", "테니스", "배드민턴", "쇼트트랙"]
MONTHS = [f"{m}월" for m in range(1, 13)]
WEEKDAYS = ["월요일", "화요일", "수요일", "목요일", "금요일", "토요일", "일요일"]
TITLES_GOV = ["장관", "차관", "청장", "국장", "과장", "대변인"]
TITLES_EXPERT = ["교수", "연구위원", "선임연구원", "소장", "박사", "애널리스트"]
TITLES_BIZ = ["대표", "사장", "부사장", "회장", "상무", "본부장"]
NEWS_OUTLETS = ["한빛일보", "새날신문", "누리뉴스", "오늘경제", "바른방송"]
REGIONS = ["강원도 평창군", "강원도 영월군", "충청북도 단양군", "전라남도 구례군", "경상북도 봉화군", "경기도 가평군",
           "경상남도 하동군", "경상북도 청송군", "충청남도 부여군", "전라북도 무주군"]
# what each made-up company does, read off its name
INDUSTRY = {"전자": "전자", "바이오": "바이오", "에너지": "에너지", "물류": "물류", "통신": "통신", "항공": "항공",
            "소프트": "소프트웨어", "제약": "제약", "식품": "식품", "조선": "조선", "자동차": "자동차",
            "엔터테인먼트": "엔터테인먼트", "화학": "화학", "유통": "유통", "건설": "건설", "금융": "금융",
            "반도체": "반도체", "게임즈": "게임", "모빌리티": "모빌리티", "제지": "제지", "로보틱스": "로봇",
            "배터리": "배터리", "화장품": "화장품", "농산": "농업"}


def industry(company: str) -> str:
    return next(v for k, v in INDUSTRY.items() if company.endswith(k))


def team_city(team: str) -> str:
    return team.split()[0]


SLOTS: dict[str, Filler] = {
    # PII (gold spans)
    "person": fake("PERSON"),
    "phone": fake("PHONE"), "fax": fake("FAX"), "rrn": fake("RRN"), "frn": fake("FRN"),
    "corp_reg": fake("CORP_REG"), "business_reg": fake("BUSINESS_REG"), "license": fake("DRIVER_LICENSE"),
    "passport": fake("PASSPORT"), "card": fake("CARD"), "account": fake("ACCOUNT"),
    "insurance": fake("MEDICAL_INSURANCE"), "vehicle": fake("VEHICLE"), "email": fake("EMAIL"),
    "url": fake("URL"), "ip": fake("IP"), "address": fake("ADDRESS"),
    # plain vocabulary
    "city": pick(CITIES), "country": pick(COUNTRIES), "company": pick(COMPANIES), "ministry": pick(MINISTRIES),
    "school": pick(SCHOOLS), "team": pick(TEAMS), "party": pick(PARTIES), "village": pick(VILLAGES),
    "river": pick(RIVERS), "mountain": pick(MOUNTAINS), "food": pick(FOODS), "product": pick(PRODUCTS),
    "sport": pick(SPORTS), "month": pick(MONTHS), "weekday": pick(WEEKDAYS), "gov_title": pick(TITLES_GOV),
    "expert_title": pick(TITLES_EXPERT), "biz_title": pick(TITLES_BIZ), "outlet": pick(NEWS_OUTLETS),
    "day": number(1, 28, "{}일"), "year": number(1998, 2024, "{}년"), "old_year": number(1920, 1990, "{}년"),
    "pct": lambda rng: f"{rng.randint(1, 39)}.{rng.randint(0, 9)}%", "num": number(2, 90, "{}"),
    "count": number(120, 9800), "won": lambda rng: f"{rng.randint(2, 950):,}억 원",
    "won_small": lambda rng: f"{rng.randint(1, 99) * 1000:,}원", "people": number(30, 4800, "{:,}명"),
    "hour": lambda rng: rng.choice(["오전", "오후"]) + f" {rng.randint(1, 11)}시",
    "region": pick(REGIONS),
    "branch": pick(["신한은행", "국민은행", "우리은행", "하나은행", "농협은행", "기업은행", "카카오뱅크"]),
}


def chance(rng: random.Random, p: float) -> bool:
    return rng.random() < p
