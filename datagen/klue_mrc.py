"""KLUE-MRC-layout passages and questions for the sample (`pipeline/sample/klue/mrc/`), written from templates.

The embedded default ships real KLUE examples for every task the shared data has; MRC is generated because the
only reading-comprehension set there, KorQuAD 1.0, is CC BY-ND (no derivatives, evaluation only) and no KLUE-MRC
file could be obtained. The people, companies and villages are made up; cities and ministries are real names used
as vocabulary; person names are fake values of `datagen.pii.synth`. Each article is one passage built sentence by
sentence (remembering where each fact sits) with three questions: a paraphrase (type 1), a question joining two
sentences (type 2) and mostly an unanswerable one (type 3, `is_impossible`, with a plausible answer), as KLUE-MRC.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from datagen.pii.synth import fake_value

Record = dict[str, Any]

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



# ---- word lists ----------------------------------------------------------------------------------------------
CITIES = ["서울", "부산", "대구", "인천", "광주", "대전", "울산", "세종", "수원", "춘천", "청주", "전주", "포항", "창원",
          "제주", "강릉", "여수", "안동", "경주", "목포", "원주", "천안", "김해", "군산"]
COMPANIES = ["한빛전자", "새솔바이오", "푸른에너지", "대한물류", "미래통신", "하늘항공", "누리소프트", "다온제약",
             "바른식품", "서해조선", "한결자동차", "별빛엔터테인먼트", "초록화학", "온누리유통", "가람건설", "새봄금융",
             "빛고을반도체", "한울게임즈", "두리모빌리티", "청솔제지", "해맞이식품", "마루로보틱스", "은빛배터리",
             "다솜화장품", "열매농산"]
MINISTRIES = ["기획재정부", "교육부", "보건복지부", "국토교통부", "환경부", "과학기술정보통신부", "문화체육관광부",
              "행정안전부", "고용노동부", "산업통상자원부", "중소벤처기업부", "농림축산식품부", "해양수산부", "통계청",
              "기상청", "식품의약품안전처", "경찰청", "소방청", "국세청", "질병관리청"]
SCHOOLS = ["한별대학교", "누리대학교", "가온대학교", "새길대학교", "해오름대학교", "은하대학교", "푸른숲대학교",
           "다올대학교"]
VILLAGES = ["솔내마을", "해바위마을", "달래골", "은행정이마을", "물푸레마을", "가재울", "노루목마을", "진달래골"]
RIVERS = ["가람천", "솔강", "은빛내", "버들강", "맑은천"]
PRODUCTS = ["스마트폰", "노트북", "무선 이어폰", "전기차", "태블릿", "스마트워치", "로봇청소기", "공기청정기", "전기자전거",
            "게임기", "냉장고", "세탁기"]
MONTHS = [f"{m}월" for m in range(1, 13)]
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


def _person(rng: random.Random) -> str:
    return fake_value("PERSON", rng)


def _unique(make: Callable[[], Any], key: Callable[[Any], str], seen: set[str], tries: int = 50) -> Any:
    """`make()` until its key is new (so a split never holds the same article twice)."""
    for _ in range(tries):
        item = make()
        if key(item) not in seen:
            seen.add(key(item))
            return item
    raise RuntimeError("could not make a new item: the templates are too few for the requested size")


# ---- passages ------------------------------------------------------------------------------------------------
@dataclass
class Passage:
    """A passage built sentence by sentence, remembering where each fact's value sits."""

    text: str = ""
    facts: dict[str, tuple[str, int]] = field(default_factory=dict)  # name -> (value, answer_start)

    def say(self, template: str, values: dict[str, str]) -> None:
        """Append one sentence; each `{name}` is a fact (value and offset), `{name:은}` adds a particle."""
        if self.text:
            self.text += " "
        pos = 0
        for m in re.finditer(r"\{(\w+)(?::([^}]+))?\}", template):
            self.text += template[pos:m.start()]
            name, v = m.group(1), values[m.group(1)]
            self.facts.setdefault(name, (v, len(self.text)))
            self.text += v + (particle(v, m.group(2)) if m.group(2) else "")
            pos = m.end()
        self.text += template[pos:]

    @classmethod
    def of(cls, values: dict[str, str], *templates: str) -> Passage:
        """A passage of `templates`, one sentence each, in order, with the facts `values`."""
        p = cls()
        for template in templates:
            p.say(template, values)
        return p


Question = tuple[int, str, str | None]  # (question_type, question, answer fact; None: unanswerable)


def _mrc_person(rng: random.Random) -> tuple[str, Passage, list[Question], list[Question], list[Question]]:
    name, mentor = _person(rng), _person(rng)
    v = {"name": name, "year": f"{rng.randint(1935, 1985)}년", "city": rng.choice(CITIES),
         "job": rng.choice(["물리학자", "소설가", "건축가", "작곡가", "식물학자", "화가", "수학자"]),
         "school": rng.choice(SCHOOLS), "employer": rng.choice(COMPANIES + ["국립과학원", "한국문학연구소"]),
         "work": rng.choice(["빛의 굴절", "도시 재생", "전통 음악", "습지 생태", "소수 이론", "색채 심리"]),
         "award": rng.choice(["한별학술상", "누리문화상", "가온과학상", "새길예술상"]),
         "award_year": f"{rng.randint(1990, 2020)}년", "book": rng.choice(["빛과 그림자", "느린 강", "새벽의 숲",
                                                                          "작은 우주", "돌의 노래", "바람의 지도"]),
         "copies": rng.choice(["10만 부", "30만 부", "5만 부", "50만 부"]), "home": rng.choice(CITIES), "mentor": mentor,
         "years": f"{rng.randint(5, 30)}년"}
    p = Passage.of(
        v,
        "{name:은} {year} {city}에서 태어난 {job}이다.",
        "{school:을} 졸업한 뒤 {employer}에 들어가 {years} 동안 일했다.",
        "대학 시절 그의 스승은 {mentor:이었다}.",
        "{award_year}에는 {work} 연구로 {award:을} 받았다.",
        "그의 책 『{book}』 역시 {copies} 넘게 팔린 베스트셀러이다.",
        "현재 {name:은} {home}에 살며 후배를 가르치고 있다.")
    t1: list[Question] = [(1, f"{josa(name, '이')} 태어난 도시는 어디인가?", "city"),
          (1, f"{josa(name, '이')} 졸업한 학교는 어디인가?", "school"),
          (1, f"{josa(name, '이')} 받은 상의 이름은 무엇인가?", "award"),
          (1, f"{josa(name, '이')} 쓴 책의 제목은?", "book"), (1, f"{josa(name, '이')} 지금 사는 곳은?", "home")]
    t2: list[Question] = [(2, f"{josa(v['school'], '을')} 졸업한 {josa(v['job'], '이')} 상을 받은 해는?", "award_year"),
          (2, f"『{v['book']}』의 저자가 태어난 해는?", "year"),
          (2, f"{josa(v['award'], '을')} 받은 사람이 일했던 곳은?", "employer"),
          (2, f"{josa(v['mentor'], '을')} 스승으로 둔 사람의 직업은?", "job")]
    t3: list[Question] = [(3, f"{name}의 배우자는 누구인가?", None), (3, f"『{v['book']}』의 출판사는 어디인가?", None),
          (3, f"{josa(name, '이')} 다닌 초등학교는 어디인가?", None), (3, f"{josa(name, '이')} 세상을 떠난 해는?", None)]
    return f"{name} ({v['job']})", p, t1, t2, t3


def _mrc_company(rng: random.Random) -> tuple[str, Passage, list[Question], list[Question], list[Question]]:
    company = rng.choice(COMPANIES)
    v = {"company": company, "year": f"{rng.randint(1960, 2015)}년", "founder": _person(rng), "city": rng.choice(CITIES),
         "industry": industry(company), "hq": rng.choice(CITIES),
         "employees": rng.choice(["1,200명", "350명", "4,800명", "870명", "2만 명"]),
         "prod_year": f"{rng.randint(2000, 2023)}년", "product": rng.choice(PRODUCTS),
         "units": rng.choice(["100만 대", "30만 대", "5만 개", "200만 개"]), "ceo": _person(rng),
         "partner": rng.choice(SCHOOLS + MINISTRIES[:5]), "project": rng.choice(["탄소 중립", "스마트 농업",
                                                                              "청년 창업", "해양 정화"])}
    p = Passage.of(
        v,
        "{company:은} {year} {founder:이} {city}에서 세운 {industry} 기업이다.",
        "본사는 {hq}에 있으며, 직원 수는 {employees}이다.",
        "{prod_year}에 내놓은 {product:은} 출시 첫해에만 {units} 넘게 팔렸다.",
        "지금은 {ceo:이} 대표이사를 맡고 있다.",
        "또한 {company:은} {partner:과} 함께 {project} 사업을 추진하고 있다.")
    t1: list[Question] = [(1, f"{josa(company, '을')} 세운 사람은 누구인가?", "founder"),
          (1, f"{company}의 본사가 있는 곳은?", "hq"), (1, f"{company}의 현재 대표이사는 누구인가?", "ceo"),
          (1, f"{company}에서 일하는 직원은 몇 명인가?", "employees")]
    t2: list[Question] = [(2, f"{josa(v['product'], '을')} 내놓은 회사를 세운 사람은?", "founder"),
          (2, f"{josa(v['founder'], '이')} 세운 기업의 본사는 어디에 있는가?", "hq"),
          (2, f"{josa(v['ceo'], '이')} 이끄는 회사가 설립된 해는?", "year"),
          (2, f"{v['project']} 사업을 추진하는 회사가 {v['prod_year']}에 내놓은 제품은?", "product")]
    t3: list[Question] = [(3, f"{josa(company, '이')} 증권 시장에 상장된 해는?", None),
          (3, f"{v['founder']}의 출신 학교는 어디인가?", None), (3, f"{company}의 지난해 매출은 얼마인가?", None)]
    return f"{company} ({v['year']} 설립)", p, t1, t2, t3


def _mrc_village(rng: random.Random) -> tuple[str, Passage, list[Question], list[Question], list[Question]]:
    village = rng.choice(VILLAGES)
    province, county = rng.choice(REGIONS).split()
    v = {"village": village, "province": province, "county": county, "river": rng.choice(RIVERS),
         "pop": rng.choice(["120명", "300명", "450명", "80명"]), "crop": rng.choice(["감자", "사과", "고추", "녹차", "배추"]),
         "month": rng.choice(MONTHS), "fest": rng.choice(["반딧불이", "단풍", "산나물", "별빛", "얼음"]),
         "visitors": rng.choice(["3만 명", "10만 명", "5천 명"]), "age": str(rng.randint(200, 600)),
         "tree": rng.choice(["느티나무", "은행나무", "소나무", "팽나무"]), "year": f"{rng.randint(1995, 2022)}년",
         "designation": rng.choice(["전통 마을", "생태 관광지", "슬로시티"])}
    p = Passage.of(
        v,
        "{village:은} {province} {county}에 있는 마을로, {river} 상류에 자리 잡고 있다.",
        "주민은 약 {pop}이며, 대부분 {crop:을} 재배한다.",
        "해마다 {month}이면 {fest} 축제가 열려 {visitors}의 관광객이 찾는다.",
        "마을 입구에는 수령 {age}년이 넘은 {tree:이} 서 있다.",
        "{year}에는 {designation:으로} 지정되었다.")
    t1: list[Question] = [(1, f"{village} 주민들이 주로 기르는 작물은?", "crop"), (1, f"{v['fest']} 축제가 열리는 달은?", "month"),
          (1, f"{josa(village, '이')} 자리 잡은 하천은?", "river"), (1, f"{village} 입구에 있는 나무는?", "tree")]
    t2: list[Question] = [(2, f"{v['fest']} 축제가 열리는 마을의 주민 수는?", "pop"),
          (2, f"{josa(v['crop'], '을')} 주로 재배하는 마을 입구에 서 있는 나무는?", "tree"),
          (2, f"{v['tree']}가 서 있는 마을이 {josa(v['designation'], '으로')} 지정된 해는?", "year")]
    t3: list[Question] = [(3, f"{village}의 이장은 누구인가?", None), (3, f"{v['fest']} 축제의 입장료는 얼마인가?", None),
          (3, f"{village}에서 가장 가까운 기차역은?", None)]
    return f"{village} ({v['county']})", p, t1, t2, t3


MRC_ARTICLES = [_mrc_person, _mrc_company, _mrc_village]


def mrc(split: str, n_articles: int) -> dict[str, Any]:
    """The KLUE-MRC JSON: {version, data: [{title, source, news_category, paragraphs: [{context, qas}]}]};
    three questions an article: a paraphrase (type 1), a two-sentence question (type 2, or 1) and mostly an
    unanswerable one (type 3, is_impossible, no answers, a plausible answer)."""
    rng = random.Random(f"klue-sample:mrc:{split}")
    data = []
    titles: set[str] = set()
    k = 0
    for i in range(n_articles):
        make = MRC_ARTICLES[i % len(MRC_ARTICLES)]
        title, passage, t1, t2, t3 = _unique(partial(make, rng), lambda a: a[0], titles)
        picks = [rng.choice(t1), rng.choice(t2) if rng.random() < 0.7 else rng.choice(t1)]
        picks.append(rng.choice(t3) if rng.random() < 0.9 else rng.choice([q for q in t1 if q != picks[0]]))
        qas = []
        for qtype, question, fact in picks:
            qa: Record = {"question": question, "answers": [], "guid": f"klue-mrc-v1_{split}_{k:05d}",
                          "question_type": qtype, "is_impossible": fact is None}
            if fact is None:
                value, start = rng.choice(sorted(f for f in passage.facts.values() if f[0] not in question))
                qa["plausible_answers"] = [{"answer_start": start, "text": value}]
            else:
                value, start = passage.facts[fact]
                qa["answers"] = [{"answer_start": start, "text": value}]
            qas.append(qa)
            k += 1
        category = {"_mrc_person": "생활문화", "_mrc_company": "경제", "_mrc_village": "사회"}[make.__name__]
        data.append({"title": title, "source": "sample", "news_category": category,
                     "paragraphs": [{"context": passage.text, "qas": qas}]})
    return {"version": "v1.1", "data": data}
