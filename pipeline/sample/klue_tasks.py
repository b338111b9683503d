"""The eight KLUE tasks of the sample, in the official file layouts, written from templates of this module.

Each task has one function that returns its records (or TSV text) for a split; labels follow from the text
(topic words for YNAT, shared slot values for STS, cue phrases for NLI, entity patterns for NER, templated
relations for RE, head-final dependency trees built with the sentence for DP, facts placed in a passage for
MRC, the WoS generator's states for DST). No KLUE, KorQuAD or WoS text is copied. See make_sample.py.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pipeline.sample.textkit import (
    CITIES,
    COMPANIES,
    COUNTRIES,
    FOODS,
    MINISTRIES,
    MONTHS,
    PARTIES,
    PRODUCTS,
    REGIONS,
    RIVERS,
    SCHOOLS,
    SPORTS,
    TEAMS,
    VILLAGES,
    industry,
    josa,
    particle,
)

Record = dict[str, Any]


def _rng(task: str, split: str) -> random.Random:
    return random.Random(f"klue-sample:{task}:{split}")


def _person(rng: random.Random) -> str:
    from corpora.pii.synth import fake_value

    return fake_value("PERSON", rng)


def _unique(make: Callable[[], Any], key: Callable[[Any], str], seen: set[str], tries: int = 50) -> Any:
    """`make()` until its key is new (so a split never holds the same text twice)."""
    for _ in range(tries):
        item = make()
        if key(item) not in seen:
            seen.add(key(item))
            return item
    raise RuntimeError("could not make a new item: the templates are too few for the requested size")


def _fill(template: str, values: dict[str, str]) -> str:
    """`{slot}` / `{slot:은}` replaced by the value (and the particle that fits it)."""
    def sub(m: re.Match[str]) -> str:
        v = values[m.group(1)]
        return v + (particle(v, m.group(2)) if m.group(2) else "")

    return re.sub(r"\{(\w+)(?::([^}]+))?\}", sub, template)


# ================================================================================================ YNAT
YNAT_WORDS: dict[str, dict[str, list[str]]] = {
    "정치": {"issue": ["추경안", "예산안", "선거법 개정안", "민생 법안", "특별법", "정부조직법", "연금 개혁안"],
           "agenda": ["공급망", "안보", "경제", "기후", "통상"]},
    "경제": {"quarter": ["1분기", "2분기", "3분기", "4분기", "상반기"], "rate": ["연 3.5%", "연 3.25%", "연 3%"],
           "export": ["반도체", "자동차", "선박", "석유화학", "이차전지"]},
    "사회": {"crime": ["사기", "횡령", "뇌물", "음주운전", "불법 촬영"],
           "job": ["전직 공무원", "회사 대표", "학원 원장", "20대 남성", "50대 운전자"]},
    "생활문화": {"era": ["조선 시대", "고려 시대", "삼국 시대", "근대"],
             "movie": ["바람의 기억", "푸른 밤", "마지막 여름", "별을 쫓는 아이", "시간의 문"],
             "book": ["느리게 걷는 법", "오늘의 식탁", "작은 정원", "혼자 떠나는 여행"]},
    "세계": {"disaster": ["대지진", "대형 산불", "홍수", "폭설"]},
    "IT과학": {"chip": ["메모리 반도체", "인공지능 칩", "고대역폭 메모리", "이미지 센서"],
             "disease": ["치매", "당뇨", "폐암", "희귀 질환"]},
    "스포츠": {"score": ["1-1", "2-2", "0-0"], "medal": ["금메달", "은메달", "동메달"]},
}
YNAT_TEMPLATES: dict[str, list[str]] = {
    "정치": ["{party} 원내대표 \"{issue} 처리 서두를 것\"", "국회 본회의서 {issue} 통과…{party2} 반발",
           "대통령, {country} 정상과 회담…{agenda} 협력 논의", "{party}, 총선 앞두고 {city} 공천 심사 착수",
           "여야, {issue} 놓고 이틀째 공방", "{ministry} 장관 후보자 인사청문회 열려",
           "국정감사 {ministry} 대상…{issue} 두고 질타", "{city}시장 후보 TV 토론회서 공약 검증",
           "당정, {agenda} 대책 협의…추가 지원 검토", "대통령실 \"{issue} 국회 협조 요청\"",
           "{party} 지도부, {city} 찾아 민심 청취", "국무회의서 {issue} 의결", "{party} 새 대표에 4선 의원 선출",
           "여야 원내대표 회동…{issue} 합의 불발"],
    "경제": ["{company} {quarter} 영업이익 {won}…전년보다 {pct} 증가", "코스피 {num}포인트 상승 마감…외국인 순매수",
           "한국은행 기준금리 {rate} 동결", "{month} 수출 {pct} 증가…{export} 호조",
           "원·달러 환율 1,3{num}원대로 상승", "{company}, {city}에 {won} 규모 신규 공장 투자",
           "소비자물가 상승률 {pct}…석 달 만에 최고", "{ministry}, 중소기업 정책자금 {won} 지원",
           "아파트 거래량 {pct} 감소…집값 하락세 이어져", "{company} 주가 급등…{product} 판매 기대감",
           "가계대출 증가세 둔화…은행권 대출 금리 인상 영향", "{company}·{company2} 합병 추진…업계 재편 가속",
           "{quarter} 경제성장률 {pct}…내수 회복 더뎌", "{export} 수출 {month} 역대 최대"],
    "사회": ["{city} 아파트 화재로 주민 {num}명 대피", "경찰, {city} 보이스피싱 조직 {num}명 검거",
           "법원, {crime} 혐의 {job}에 징역 {small}년 선고", "{city} 초등학교 식중독 의심 환자 {num}명 발생",
           "고속도로 {small}중 추돌 사고…{num}명 부상", "{city}시, 출퇴근 시간 시내버스 증차 결정",
           "폭염 특보 확대…{city} 온열 질환자 잇따라", "교육청, {city} 고교 배정 방식 개편",
           "{city} 전세사기 피해자 {num}명 구제 신청", "소방당국, {city} 공장 화재 원인 조사",
           "검찰, {crime} 의혹 {company} 압수수색", "{city} 지하철 노조 파업 예고…출근길 불편 우려",
           "{city} 도심 싱크홀 발생…차량 통행 통제", "실종 초등학생 {small}시간 만에 무사히 발견"],
    "생활문화": ["{city} 봄꽃 축제 개막…주말 나들이객 북적", "국립박물관, {era} 유물 특별전 개최",
             "올여름 휴가지 1위 {city}…여행 수요 회복", "영화 '{movie}' 개봉 첫 주 관객 {num}만 돌파",
             "{food} 맛집 찾아 떠나는 {city} 미식 여행", "환절기 감기 주의…면역력 높이는 생활 습관",
             "{city}국제영화제 다음 달 개막…{num}개국 작품 상영", "주말 날씨 맑고 포근…나들이하기 좋아",
             "40대 이후 건강검진 필수 항목은", "{city} 전통시장 야시장 운영…먹거리 풍성",
             "에세이 '{book}' 베스트셀러 1위", "{era} 궁중 음식 재현 행사 열려", "뮤지컬 '{movie}' 초연 앞두고 연습 한창",
             "겨울철 실내 운동 이렇게 하세요"],
    "세계": ["{country} 대선서 야당 후보 승리…{small}년 만의 정권 교체", "{country}·{country2} 정상회담…무역 갈등 해소 합의",
           "{country} 중앙은행 기준금리 0.25%p 인상", "{country} {disaster} 사망자 {num}명으로 늘어",
           "유엔 안보리, {country} 사태 긴급회의 소집", "{country} 총리 전격 사임…정국 혼란",
           "{country} {disaster}로 이재민 {num}만 명 발생", "{country}, {country2}산 수입품 관세 인상",
           "G20 정상회의 {country}서 개막…기후 위기 논의", "{country} 수도서 대규모 반정부 시위",
           "{country} 외교장관 방한…양국 협력 강화 논의", "{country} 새 대통령 취임…\"통합의 시대 열 것\"",
           "{country} 의회, 이민법 개정안 가결", "{country} 물가 급등에 서민 생활고"],
    "IT과학": ["{company}, 차세대 {chip} 세계 최초 양산", "인공지능 챗봇 이용자 {num}00만 명 돌파",
             "누리호 발사 성공…위성 {small}기 궤도 진입", "{company} 새 {product} 공개…배터리 성능 {pct} 개선",
             "과기정통부, 6G 기술 개발에 {won} 투자", "국내 연구진, {disease} 치료 신물질 개발",
             "개인정보 유출 사고 잇따라…보안 투자 확대 시급", "양자컴퓨터 상용화 눈앞…{company} 시제품 발표",
             "{company} 클라우드 서비스 장애…이용자 불편", "자율주행 셔틀 {city}서 시범 운행",
             "{company} 메타버스 플랫폼 가입자 급증", "{chip} 미세공정 경쟁 치열…{small}나노 돌파",
             "{disease} 조기 진단 인공지능 개발", "달 탐사선, 궤도 진입 {small}개월 만에 첫 영상 전송"],
    "스포츠": ["{team}, {team2} 꺾고 {small}연승 질주", "{sport} 국가대표팀, 아시안게임 {medal} 획득",
             "{team} 새 감독 선임…\"우승 도전하겠다\"", "프로야구 {team} 에이스, 시즌 {num}승 달성",
             "{sport} 대표팀, {country}와 평가전서 {score} 무승부", "올림픽 {sport} 예선 통과…본선 진출 확정",
             "{team} 공격수 해트트릭…팀 대승 견인", "{city} 국제마라톤 대회에 {num}00명 참가",
             "{team}, 플레이오프 진출 확정…홈 팬 환호", "골프 투어 최종 라운드서 극적인 역전 우승",
             "배구 {team}, 시즌 개막전 승리", "{sport} 세계선수권 {medal}…한국 신기록 수립",
             "{team} 주전 선수 부상…{small}주 결장 전망", "{sport} 유망주, 국제대회 {medal} 쾌거"],
}
YNAT_LABELS = ["정치", "경제", "사회", "생활문화", "세계", "IT과학", "스포츠"]  # finetune.tasks.ynat order


def _ynat_values(rng: random.Random, topic: str) -> dict[str, str]:
    values = {"party": rng.choice(PARTIES), "party2": rng.choice(PARTIES), "country": rng.choice(COUNTRIES),
              "country2": rng.choice(COUNTRIES), "city": rng.choice(CITIES), "ministry": rng.choice(MINISTRIES),
              "company": rng.choice(COMPANIES), "company2": rng.choice(COMPANIES), "team": rng.choice(TEAMS),
              "team2": rng.choice(TEAMS), "sport": rng.choice(SPORTS), "product": rng.choice(PRODUCTS),
              "food": rng.choice(FOODS), "month": rng.choice(MONTHS), "num": str(rng.randint(11, 95)),
              "small": str(rng.randint(2, 9)), "pct": f"{rng.randint(1, 29)}.{rng.randint(0, 9)}%",
              "won": f"{rng.randint(2, 99) * 100:,}억 원"}
    values.update({k: rng.choice(v) for k, v in YNAT_WORDS[topic].items()})
    return values


def _ynat_title(rng: random.Random, topic: str) -> str:
    return _fill(rng.choice(YNAT_TEMPLATES[topic]), _ynat_values(rng, topic))


def ynat(split: str, n: int) -> list[Record]:
    """{guid, title, label, url, date}; topics in turn, titles unique within the split."""
    rng = _rng("ynat", split)
    seen: set[str] = set()
    out = []
    for i in range(n):
        topic = YNAT_LABELS[i % len(YNAT_LABELS)] if i % 9 else rng.choice(YNAT_LABELS)
        title = _unique(partial(_ynat_title, rng, topic), lambda x: x, seen)
        hour = rng.randint(6, 23)
        date = (f"2016.{rng.randint(1, 12):02d}.{rng.randint(1, 28):02d}. {'오전' if hour < 12 else '오후'} "
                f"{(hour - 1) % 12 + 1}:{rng.randint(0, 59):02d}")
        out.append({"guid": f"ynat-v1_{split}_{i:05d}", "title": title, "label": topic,
                    "url": f"https://news.example.com/article/{split}/{i:05d}", "date": date})
    return out


# ================================================================================================ STS
# A frame: paraphrase templates over the same slots. Pairs from one frame score by how many slot values they
# share; pairs from two frames score near 0.
@dataclass(frozen=True)
class StsFrame:
    source: str
    templates: tuple[str, ...]
    slots: dict[str, list[str]]


STS_FRAMES = [
    StsFrame("airbnb-sampled", ("{room:은} 정말 깨끗하고 {feature:이} 마음에 들었어요.",
                                "{feature:이} 좋았고 {room:이} 아주 청결했습니다.",
                                "깨끗한 {room:과} {feature} 덕분에 편하게 지냈어요."),
             {"room": ["방", "욕실", "주방", "거실", "침구"],
              "feature": ["넓은 창문", "조용한 분위기", "푹신한 침대", "따뜻한 조명", "멋진 전망"]}),
    StsFrame("airbnb-rtt", ("호스트가 {time} {help} 친절하게 알려 주셨어요.",
                            "{time} {help} 호스트분이 자세히 안내해 주셨습니다.",
                            "호스트께서 {time} {help} 상냥하게 설명해 주셔서 좋았어요."),
             {"time": ["도착하자마자", "밤늦게", "미리", "아침 일찍"],
              "help": ["체크인 방법을", "주변 맛집을", "교통편을", "주차 위치를", "분리수거 방법을"]}),
    StsFrame("airbnb-sampled", ("{spot}까지 걸어서 {minutes}이면 갈 수 있어요.",
                                "걸어서 {minutes} 거리에 {spot:이} 있습니다.",
                                "{spot}에서 도보로 {minutes} 정도 걸리는 위치예요."),
             {"spot": ["지하철역", "해변", "전통시장", "버스 터미널", "공원", "편의점"],
              "minutes": ["3분", "5분", "10분", "15분", "20분"]}),
    StsFrame("airbnb-rtt", ("밤에는 {noise} 소리 때문에 {effect}.", "{noise} 소리가 커서 밤에 {effect}.",
                            "{noise} 탓에 밤새 시끄러워서 {effect}."),
             {"noise": ["공사", "옆방 손님", "도로 차량", "에어컨", "길고양이"],
              "effect": ["잠을 설쳤어요", "잘 쉬지 못했어요", "자꾸 깼어요", "일찍 일어났어요"]}),
    StsFrame("policy-sampled", ("정부는 {target}에게 {support:을} 지원하기로 했다.",
                                "{target:을} 위한 {support} 지원이 추진된다.",
                                "{target}에게 {support:을} 제공하는 방안이 마련됐다."),
             {"target": ["청년", "노인", "소상공인", "농민", "한부모 가정", "대학생"],
              "support": ["주거비", "교통비", "창업 자금", "의료비", "통신비", "교육비"]}),
    StsFrame("policy-rtt", ("{month}부터 {place}에서 {act:이} 금지된다.",
                            "{place}에서의 {act:은} {month}부터 허용되지 않는다.",
                            "{month}부터는 {place}에서 {act:을} 할 수 없다."),
             {"month": ["다음 달", "내년 1월", "7월", "올해 하반기"],
              "place": ["공원", "버스 정류장", "학교 앞", "지하철역 입구", "해수욕장"],
              "act": ["흡연", "음주", "불법 주차", "야간 공사"]}),
    StsFrame("policy-sampled", ("{stat:이} 지난해보다 {pct} 늘었다.", "지난해와 비교해 {stat:이} {pct} 증가했다.",
                                "{stat:은} 1년 전보다 {pct} 많아졌다."),
             {"stat": ["출생아 수", "수출액", "관광객 수", "취업자 수", "전기차 판매량"],
              "pct": ["3%", "5%", "10%", "12%", "20%"]}),
    StsFrame("paraphrase-rtt", ("{day}은 {region}에 {weather:이} 내릴 예정입니다.",
                                "{region}에는 {day} {weather:이} 내릴 것으로 보입니다.",
                                "{day} {region} 지역에 {weather} 소식이 있습니다."),
             {"day": ["내일", "모레", "주말", "오늘 밤"],
              "region": ["중부 지방", "남부 지방", "제주도", "강원 산간", "수도권"],
              "weather": ["비", "눈", "소나기", "우박"]}),
    StsFrame("paraphrase-sampled", ("{meeting:은} {weekday} {hour}에 시작합니다.",
                                    "{weekday} {hour}부터 {meeting:이} 진행됩니다.",
                                    "{meeting} 시간은 {weekday} {hour}입니다."),
             {"meeting": ["팀 회의", "설명회", "면접", "동아리 모임", "정기 총회"],
              "weekday": ["월요일", "수요일", "금요일", "토요일"], "hour": ["오전 9시", "오전 11시", "오후 2시", "오후 5시"]}),
    StsFrame("paraphrase-rtt", ("이 식당은 {dish:이} 맛있고 {service:이} 좋아요.",
                                "{dish:이} 훌륭한 식당이고 {service}도 만족스러웠어요.",
                                "{service:이} 좋은 데다 {dish}까지 맛있는 곳입니다."),
             {"dish": ["김치찌개", "파스타", "국밥", "초밥", "디저트"], "service": ["서비스", "분위기", "가격", "직원 응대"]}),
]


def _sts_pair(rng: random.Random) -> tuple[str, str, str, float]:
    frame = rng.choice(STS_FRAMES)
    values = {k: rng.choice(v) for k, v in frame.slots.items()}
    t1, t2 = rng.sample(frame.templates, 2)
    s1 = _fill(t1, values)
    kind = rng.random()
    if kind < 0.35:  # paraphrase: the same values in other words
        return frame.source, s1, _fill(t2, values), rng.uniform(4.0, 5.0)
    if kind < 0.75:  # one or more values changed
        names = list(frame.slots)
        k = 1 if len(names) == 1 or rng.random() < 0.6 else rng.randint(2, len(names))
        changed = dict(values)
        for name in rng.sample(names, k):
            changed[name] = rng.choice([v for v in frame.slots[name] if v != values[name]])
        share = 1 - k / len(names)
        lo, hi = (2.0 + 1.6 * share, 2.6 + 1.4 * share) if share else (0.6, 1.8)
        return frame.source, s1, _fill(rng.choice([t1, t2]), changed), rng.uniform(lo, hi)
    other = rng.choice([f for f in STS_FRAMES if f is not frame])
    s2 = _fill(rng.choice(other.templates), {k: rng.choice(v) for k, v in other.slots.items()})
    return frame.source, s1, s2, rng.uniform(0.0, 0.6)


def sts(split: str, n: int) -> list[Record]:
    """{guid, source, sentence1, sentence2, labels: {label, real-label, binary-label}}."""
    rng = _rng("sts", split)
    seen: set[str] = set()
    out = []
    for i in range(n):
        source, s1, s2, score = _unique(lambda: _sts_pair(rng), lambda p: p[1] + "|" + p[2], seen)
        real = round(score, 4)
        out.append({"guid": f"klue-sts-v1_{split}_{i:05d}", "source": source, "sentence1": s1, "sentence2": s2,
                    "labels": {"label": round(real, 1), "real-label": real, "binary-label": int(real >= 3.0)}})
    return out


# ================================================================================================ NLI
@dataclass(frozen=True)
class Activity:
    past: str  # 축구를 했다
    general: str  # 운동을 했다
    negated: str  # 축구를 하지 않았다
    liked: str  # 축구를 (좋아한다)


NLI_ACTIVITIES = [
    Activity("축구를 했다", "운동을 했다", "축구를 하지 않았다", "축구를"),
    Activity("책을 읽었다", "독서를 했다", "책을 전혀 읽지 않았다", "독서를"),
    Activity("그림을 그렸다", "그림 작업을 했다", "그림을 그리지 않았다", "그림 그리기를"),
    Activity("김밥을 먹었다", "음식을 먹었다", "아무것도 먹지 않았다", "김밥을"),
    Activity("노래를 불렀다", "노래를 했다", "노래를 한 곡도 부르지 않았다", "노래 부르기를"),
    Activity("자전거를 탔다", "자전거를 이용했다", "자전거를 타지 않았다", "자전거 타기를"),
    Activity("사진을 찍었다", "사진 촬영을 했다", "사진을 한 장도 찍지 않았다", "사진 찍기를"),
    Activity("편지를 썼다", "글을 썼다", "편지를 쓰지 않았다", "편지 쓰기를"),
    Activity("피아노를 연습했다", "악기를 연습했다", "피아노 연습을 하지 않았다", "피아노를"),
    Activity("배드민턴을 쳤다", "운동을 했다", "배드민턴을 치지 않았다", "배드민턴을"),
    Activity("커피를 마셨다", "음료를 마셨다", "커피를 마시지 않았다", "커피를"),
    Activity("영화를 봤다", "영상을 감상했다", "영화를 보지 않았다", "영화를"),
]
NLI_PLACES = ["공원", "도서관", "카페", "학교 운동장", "동네 식당", "시민회관", "한강 둔치", "동네 체육관", "바닷가", "교회 앞마당"]
NLI_TIMES = ["어제 오후", "지난 주말", "오늘 아침", "그제 저녁", "토요일 오전", "지난달 초", "퇴근 후"]
NLI_COMPANIONS = ["동생", "친구들", "할아버지", "직장 동료", "이웃", "반 친구"]
NLI_REASONS = ["시험이 끝나서", "날씨가 좋아서", "비가 그쳐서", "휴가를 받아서", "약속이 취소되어서"]
NLI_POLICIES = ["대중교통 요금 할인", "일회용 컵 보증금제", "청년 월세 지원", "경로당 냉방비 지원", "야간 소아과 운영"]


def _other(rng: random.Random, pool: list[str], not_this: str) -> str:
    return rng.choice([x for x in pool if x != not_this])


# Hypotheses share their wording across labels where they can ("P은 T L에 있었다": entailed with the premise's
# place and time, contradicted with another place at that time, neutral at another time), so the label depends
# on comparing the pair, not on the hypothesis alone.
def _nli_person(rng: random.Random) -> tuple[str, dict[str, list[str]]]:
    p, act = _person(rng), rng.choice(NLI_ACTIVITIES)
    t, place = rng.choice(NLI_TIMES), rng.choice(NLI_PLACES)
    t2, place2 = _other(rng, NLI_TIMES, t), _other(rng, NLI_PLACES, place)
    act2 = rng.choice([a for a in NLI_ACTIVITIES if a.general != act.general])
    premise = rng.choice([f"{josa(p, '은')} {t} {place}에서 {act.past}.",
                          f"{t} {place}에 간 {josa(p, '은')} 그곳에서 {act.past}.",
                          f"{josa(p, '은')} {rng.choice(NLI_REASONS)} {t} {place}에서 {act.past}."])
    other = _person(rng)
    return premise, {
        "entailment": [f"{josa(p, '은')} {t} {place}에 있었다.", f"{josa(p, '은')} {t} {act.general}.",
                       f"{place}에서 {josa(p, '이')} {act.past}."],
        "contradiction": [f"{josa(p, '은')} {t} {place2}에 있었다.", f"{josa(p, '은')} {t} {act.negated}.",
                          f"{josa(p, '은')} {t} 하루 종일 집에만 있었다."],
        "neutral": [f"{josa(p, '은')} {t2} {place}에 있었다.", f"{josa(p, '은')} {t} {act2.general}.",
                    f"{josa(p, '은')} {josa(rng.choice(NLI_COMPANIONS), '과')} 함께 {act.past}.",
                    f"{josa(p, '은')} {t} {place}에서 {josa(other, '을')} 만났다."],
    }


def _nli_company(rng: random.Random) -> tuple[str, dict[str, list[str]]]:
    c, prod, city = rng.choice(COMPANIES), rng.choice(PRODUCTS), rng.choice(CITIES)
    city2, prod2 = _other(rng, CITIES, city), _other(rng, PRODUCTS, prod)
    when = rng.choice(["지난달", "이번 주", "어제", "올해 초"])
    premise = rng.choice([f"{josa(c, '은')} {when} {city}에서 열린 행사에서 새 {josa(prod, '을')} 처음 공개했다.",
                          f"{when} {city}에서 {josa(c, '이')} 새 {josa(prod, '을')} 처음으로 선보였다."])
    return premise, {
        "entailment": [f"{josa(c, '은')} 새 {josa(prod, '을')} {city}에서 처음 공개했다.", f"{josa(c, '이')} 새 제품을 공개했다.",
                       f"{city}에서 {c}의 새 {josa(prod, '이')} 공개되었다."],
        "contradiction": [f"{josa(c, '은')} 새 {josa(prod, '을')} {city2}에서 처음 공개했다.",
                          f"{josa(c, '은')} 아직 새 {josa(prod, '을')} 공개하지 않았다.",
                          f"{city}에서 {c}의 새 {josa(prod, '이')} 공개된 적은 없다."],
        "neutral": [f"{josa(c, '은')} 새 {josa(prod2, '도')} {city}에서 공개했다.", f"{c}의 새 {josa(prod, '은')} 가격이 저렴하다.",
                    f"{josa(c, '은')} {city}에 본사를 두고 있다.", f"새 {josa(prod, '은')} 해외에서도 판매될 예정이다."],
    }


def _nli_policy(rng: random.Random) -> tuple[str, dict[str, list[str]]]:
    m, pol, city = rng.choice(MINISTRIES), rng.choice(NLI_POLICIES), rng.choice(CITIES)
    city2 = _other(rng, CITIES, city)
    month = rng.choice(["다음 달", "내년 1월", "7월", "하반기"])
    premise = rng.choice([f"{josa(m, '은')} {month}부터 {city}에서만 {josa(pol, '을')} 시범 시행한다고 밝혔다.",
                          f"{month}부터 {city}에서만 {josa(pol, '이')} 시범적으로 시행된다고 {josa(m, '이')} 발표했다."])
    return premise, {
        "entailment": [f"{city}에서 {josa(pol, '이')} 시행될 예정이다.", f"{josa(m, '은')} {pol} 시행 계획을 발표했다.",
                       f"{city2}에서는 {josa(pol, '이')} 시범 시행되지 않는다."],
        "contradiction": [f"{city2}에서 {josa(pol, '이')} 시범 시행될 예정이다.", f"{city}에서는 {josa(pol, '이')} 시행되지 않는다.",
                          f"{josa(m, '은')} {pol} 시행 계획을 철회했다."],
        "neutral": [f"{josa(pol, '은')} 내년에 {city2}에서도 시행될 것이다.", f"{josa(pol, '은')} 시민 다수의 지지를 받고 있다.",
                    f"{city} 시민들은 이 정책을 오래 기다려 왔다.", f"{pol}에는 많은 예산이 든다."],
    }


def nli(split: str, n: int) -> list[Record]:
    """{guid, source, premise, hypothesis, gold_label, author, label2..label5}; labels in turn."""
    rng = _rng("nli", split)
    makers = [(_nli_person, "NSMC"), (_nli_person, "wikitree"), (_nli_company, "wikinews"), (_nli_policy, "policy")]
    labels = ["entailment", "contradiction", "neutral"]
    seen: set[str] = set()
    out = []
    for i in range(n):
        label = labels[i % 3]
        make, source = makers[(i // 3) % len(makers)]

        def one(make: Callable[[random.Random], tuple[str, dict[str, list[str]]]] = make,
                label: str = label) -> tuple[str, str]:
            premise, hyps = make(rng)
            return premise, rng.choice(hyps[label])

        premise, hypothesis = _unique(one, lambda x: x[0] + "|" + x[1], seen)
        out.append({"guid": f"klue-nli-v1_{split}_{i:05d}", "source": source, "premise": premise,
                    "hypothesis": hypothesis, "gold_label": label, "author": label, "label2": label,
                    "label3": label, "label4": label, "label5": label})
    return out


# ================================================================================================ NER
NER_COMMENTS = ["## 토큰, 레이블 구분자 : \\t", "## 토큰 구분자 : \\n", "## 문장 구분자 : \\n\\n", "## 주석 : ##",
                "## 컬럼명 : CHAR\tNE_TAG"]
DP_COMMENTS = ["## 토큰, 레이블 구분자 : \\t", "## 토큰 구분자 : \\n", "## 문장 구분자 : \\n\\n", "## 주석 : ##",
               "## 칼럼명 : INDEX\tWORD_FORM\tLEMMA\tPOS\tHEAD\tDEPREL"]
NER_POOLS: dict[str, list[str]] = {
    "LC": ["서울", "부산 해운대", "제주도", "강원도 춘천", "광화문 광장", "남산", "인천공항", "대구 동성로", "경주",
           "전주 한옥마을", "미국 뉴욕", "일본 도쿄", "프랑스 파리", "베트남 하노이", "여수", "울릉도", "세종시"],
    "OG": COMPANIES[:12] + ["국회", "서울시청", "대한축구협회", "교육부", "한국은행", "기상청"] + SCHOOLS[:4] + TEAMS[:4],
    "DT": ["2023년 5월 3일", "지난해", "올해 봄", "다음 달", "지난 12일", "3월 초", "어제", "내년 상반기", "1998년",
           "지난주 금요일", "8월 15일", "올해 1월", "지난 주말", "2019년"],
    "TI": ["오후 3시", "오전 10시 30분", "새벽 2시", "밤 11시", "정오", "오후 6시", "오전 7시 40분", "자정"],
    "QT_people": ["200명", "3천여 명", "열다섯 명", "1만 2천 명", "약 500명", "두 사람"],
    "QT_money": ["2천억 원", "150억 원", "3조 원", "약 40억 원"],
    "QT_pct": ["3.2%", "12%", "0.5%p", "27퍼센트"],
    "QT_temp": ["영하 5도", "영하 12도", "섭씨 35도", "영상 2도"],
    "QT_copies": ["5만 부", "10만 권", "30만 장"],
    "QT_things": ["세 개", "10개", "두 상자", "스무 개"],
    "QT_goals": ["두 골", "세 골", "한 골", "네 골"],
}
NER_TEMPLATES = [
    "{PS}씨는 {DT} {LC}에서 열린 {OG} 행사에 참석했다.",
    "{OG:은} {DT} {TI}에 {LC} 본사에서 기자회견을 열었다.",
    "{DT} {LC}에는 {QT_people}의 관광객이 몰렸다.",
    "{PS} 감독이 이끄는 {OG:은} {LC} 원정 경기에서 승리했다.",
    "{TI}쯤 {LC}의 한 상가에서 불이 나 {QT_people}이 대피했다.",
    "{PS} 교수는 {OG} 연구팀과 함께 새로운 결과를 발표했다.",
    "{LC}에 사는 {PS}씨는 {DT}부터 매일 {TI}에 산책을 한다.",
    "{OG:은} {DT} 매출이 {QT_pct} 늘었다고 밝혔다.",
    "이번 주말 {LC}의 최저 기온은 {QT_temp}까지 떨어질 전망이다.",
    "{OG} 소속 {PS} 선수는 {LC} 대회에서 금메달을 땄다.",
    "{DT} {TI} {LC}행 열차에는 {QT_people}의 승객이 타고 있었다.",
    "{PS}님, {DT} {TI}에 {LC} 앞에서 만나요.",
    "{OG:은} {LC}에 {QT_money} 규모의 공장을 짓기로 했다.",
    "{PS} 작가의 신작은 {DT} 출간된 뒤 {QT_copies:이} 팔렸다.",
    "{LC} 시민 {QT_people}이 {DT} 광장에 모여 응원을 펼쳤다.",
    "{PS}씨와 {PS2}씨는 {DT} {LC}에서 결혼식을 올렸다.",
    "{OG} 측은 {TI}까지 {LC} 일대의 도로를 통제한다고 밝혔다.",
    "{DT} 발표된 {OG} 보고서에 따르면 실업률은 {QT_pct}였다.",
    "어제 {LC} 시장에서 사과 {QT_things:을} 샀는데 모두 싱싱했어요.",
    "{PS} 기자가 {DT} {LC} 현장을 직접 취재했다.",
    "{TI}에 시작한 회의는 {PS} 대표의 인사말로 문을 열었다.",
    "{OG:과} {OG2:은} {DT} 업무 협약을 맺었다.",
    "{LC}에서 {LC2}까지 가는 버스는 {TI}에 첫차가 출발한다.",
    "지난 경기에서 {PS} 선수가 {QT_goals:을} 넣었다.",
]


def _ner_entity(kind: str, rng: random.Random) -> tuple[str, str]:
    """(entity text, tag type) for a slot name such as PS, PS2, QT_money."""
    base = kind.rstrip("0123456789")
    tag = base.split("_")[0]
    value = _person(rng) if tag == "PS" else rng.choice(NER_POOLS[base])
    return value, tag


def _ner_sentence(template: str, rng: random.Random) -> tuple[str, list[tuple[str, str]]]:
    """(tagged header text, [(character, tag)]) for one filled template."""
    tagged, rows = "", []
    pos = 0
    for m in re.finditer(r"\{([A-Z]{2}\d?(?:_\w+?)?\d?)(?::([^}]+))?\}", template):
        lit = template[pos:m.start()]
        tagged += lit
        rows += [(ch, "O") for ch in lit]
        word, tag = _ner_entity(m.group(1), rng)
        tagged += f"<{word}:{tag}>"
        rows += [(ch, ("B-" if i == 0 else "I-") + tag) for i, ch in enumerate(word)]
        if m.group(2):
            p = particle(word, m.group(2))
            tagged += p
            rows += [(ch, "O") for ch in p]
        pos = m.end()
    lit = template[pos:]
    tagged += lit
    rows += [(ch, "O") for ch in lit]
    return tagged, rows


def ner(split: str, n: int) -> str:
    """The official TSV: comment lines, then `## GUID<TAB>tagged sentence` and one `CHAR<TAB>TAG` row a character."""
    rng = _rng("ner", split)
    seen: set[str] = set()
    blocks = []
    for i in range(n):
        tagged, rows = _unique(lambda: _ner_sentence(rng.choice(NER_TEMPLATES), rng), lambda x: x[0], seen)
        source = rng.choice(["news", "wikitree", "nsmc", "airbnb"])
        lines = [f"## klue-ner-v1_{split}_{i:05d}_{source}\t{tagged}"] + [f"{ch}\t{tag}" for ch, tag in rows]
        blocks.append("\n".join(lines))
    return "\n".join(NER_COMMENTS) + "\n" + "\n\n".join(blocks) + "\n\n"


def ner_plain(tsv: str) -> list[str]:
    """The plain sentences of a NER TSV (characters joined), for picking contamination sentences."""
    out = []
    for block in tsv.split("\n\n"):
        chars = [ln.split("\t", 1)[0] for ln in block.split("\n") if ln and not ln.startswith("##")]
        if chars:
            out.append("".join(chars))
    return out


# ================================================================================================ RE
RE_TYPES: dict[str, list[str]] = {
    "LOC": CITIES + COUNTRIES[:10],
    "ORG": COMPANIES,
    "SCHOOL": SCHOOLS,
    "ASSOC": ["한국무역협회", "세계반도체연합", "전국경제인모임", "아시아배터리협의회", "국제로봇연맹"],
    "DAT": [f"{y}년" for y in range(1952, 2021, 3)] + [f"{y}년 {m}월 {d}일" for y, m, d in
                                                     ((1971, 3, 2), (1985, 7, 14), (1990, 11, 30), (2003, 5, 8),
                                                      (1966, 1, 21), (1978, 9, 9), (2011, 4, 17))],
    "POH_title": ["교수", "감독", "대표", "배우", "작가", "연구원", "의원", "기자"],
    "POH_product": PRODUCTS,
    "NOH": ["1,200명", "350명", "4,800명", "87명", "2만 명", "600여 명"],
}
# (template, subject pool, object pool, label); {S} / {O} may carry a particle: {S:은}
RE_TEMPLATES: list[tuple[str, str, str, str]] = [
    ("{S:은} {O}에서 태어나 그곳에서 어린 시절을 보냈다.", "PER", "LOC", "per:place_of_birth"),
    ("{O}에서 태어난 {S:은} 대학 진학을 위해 서울로 올라왔다.", "PER", "LOC", "per:place_of_birth"),
    ("{S:은} {O}에 태어났다.", "PER", "DAT", "per:date_of_birth"),
    ("{O}에 태어난 {S:은} 어려서부터 음악에 재능을 보였다.", "PER", "DAT", "per:date_of_birth"),
    ("{S:은} {O}에 지병으로 세상을 떠났다.", "PER", "DAT", "per:date_of_death"),
    ("{S:은} 현재 {O}에서 연구원으로 일하고 있다.", "PER", "ORG", "per:employee_of"),
    ("{O} 소속 {S:은} 기자회견에서 입장을 밝혔다.", "PER", "ORG", "per:employee_of"),
    ("{S:은} {O:을} 졸업한 뒤 대학원에 진학했다.", "PER", "SCHOOL", "per:schools_attended"),
    ("{O}에서 경영학을 전공한 {S:은} 작은 회사를 차렸다.", "PER", "SCHOOL", "per:schools_attended"),
    ("{S} {O:은} 이번 회의에서 새 계획을 발표했다.", "PER", "POH_title", "per:title"),
    ("{S:은} {O:과} 지난해 결혼식을 올렸다.", "PER", "PER", "per:spouse"),
    ("{S}의 아내 {O:은} 유명한 화가이다.", "PER", "PER", "per:spouse"),
    ("{S}의 아버지 {O:은} 평생 교사로 일했다.", "PER", "PER", "per:parents"),
    ("{S}의 아들 {O:은} 아버지를 따라 배우의 길을 걷고 있다.", "PER", "PER", "per:children"),
    ("{S}의 형 {O:은} 같은 팀에서 뛰고 있다.", "PER", "PER", "per:siblings"),
    ("{S:은} 동료 연구원 {O:과} 함께 논문을 발표했다.", "PER", "PER", "per:colleagues"),
    ("{S}의 대표이사 {O:은} 올해 매출 목표를 발표했다.", "ORG", "PER", "org:top_members/employees"),
    ("{O} 대표가 이끄는 {S:은} 해외 시장 진출을 준비하고 있다.", "ORG", "PER", "org:top_members/employees"),
    ("{S:은} {O}에 본사를 두고 있다.", "ORG", "LOC", "org:place_of_headquarters"),
    ("{O}에 본사를 둔 {S:은} 올해 신입 사원을 뽑는다.", "ORG", "LOC", "org:place_of_headquarters"),
    ("{S:은} {O}에 설립되었다.", "ORG", "DAT", "org:founded"),
    ("{O}에 문을 연 {S:은} 지금까지 같은 자리를 지키고 있다.", "ORG", "DAT", "org:founded"),
    ("{S:은} {O:이} 세운 회사이다.", "ORG", "PER", "org:founded_by"),
    ("{O:이} 창업한 {S:은} 빠르게 성장했다.", "ORG", "PER", "org:founded_by"),
    ("{S:은} 지난해 {O}에 정식 회원으로 가입했다.", "ORG", "ASSOC", "org:member_of"),
    ("{S:이} 출시한 {O:은} 큰 인기를 끌었다.", "ORG", "POH_product", "org:product"),
    ("{S}의 직원 수는 {O}에 이른다.", "ORG", "NOH", "org:number_of_employees/members"),
    ("{S:과} {O:은} 같은 날 같은 행사에 참석했다.", "PER", "PER", "no_relation"),
    ("{S:은} {O}에서 열린 박람회를 관람했다.", "PER", "LOC", "no_relation"),
    ("{S:은} 이날 {O}의 신제품 발표회를 취재했다.", "PER", "ORG", "no_relation"),
    ("{S:과} {O:은} 이번 조사에서 서로 다른 결과를 내놓았다.", "ORG", "ORG", "no_relation"),
    ("{S:은} {O}에 대한 기사를 읽고 감상을 남겼다.", "PER", "ORG", "no_relation"),
    ("{S:은} {O}에서 열린 전시회에 작품을 냈다.", "ORG", "LOC", "no_relation"),
    ("{O}에서 온 관광객들이 {S}의 공장을 견학했다.", "ORG", "LOC", "no_relation"),
]
RE_ENTITY_TYPE = {"PER": "PER", "LOC": "LOC", "ORG": "ORG", "SCHOOL": "ORG", "ASSOC": "ORG", "DAT": "DAT",
                  "POH_title": "POH", "POH_product": "POH", "NOH": "NOH"}


# Sentences with three or four entities: the marked pair decides the relation (the same sentence is
# org:top_members/employees for one pair and per:place_of_birth for another), as in KLUE-RE, where one
# sentence gives several records.
RE_MULTI: list[tuple[str, dict[str, str], list[tuple[str, str, str]]]] = [
    ("{A}의 대표이사 {B:은} {C}에서 태어났다.", {"A": "ORG", "B": "PER", "C": "LOC"},
     [("A", "B", "org:top_members/employees"), ("B", "C", "per:place_of_birth"), ("B", "A", "per:employee_of"),
      ("A", "C", "no_relation")]),
    ("{B:은} {A:을} 졸업하고 {C}에 입사했다.", {"A": "SCHOOL", "B": "PER", "C": "ORG"},
     [("B", "A", "per:schools_attended"), ("B", "C", "per:employee_of"), ("C", "A", "no_relation")]),
    ("{A:은} {D}에 {B:이} {C}에서 창업한 회사이다.", {"A": "ORG", "B": "PER", "C": "LOC", "D": "DAT"},
     [("A", "D", "org:founded"), ("A", "B", "org:founded_by"), ("B", "D", "no_relation")]),
    ("{B}의 아내 {C:은} {A}에서 연구원으로 일한다.", {"A": "ORG", "B": "PER", "C": "PER"},
     [("B", "C", "per:spouse"), ("C", "A", "per:employee_of"), ("B", "A", "no_relation")]),
    ("{A}의 직원 수는 {N}이며, 본사는 {C}에 있다.", {"A": "ORG", "N": "NOH", "C": "LOC"},
     [("A", "N", "org:number_of_employees/members"), ("A", "C", "org:place_of_headquarters")]),
    ("{B}의 아버지 {C:은} {D}에 {E}에서 태어났다.", {"B": "PER", "C": "PER", "D": "DAT", "E": "LOC"},
     [("B", "C", "per:parents"), ("C", "D", "per:date_of_birth"), ("C", "E", "per:place_of_birth"),
      ("B", "D", "no_relation")]),
]


def _re_value(pool: str, rng: random.Random, avoid: set[str]) -> str:
    for _ in range(20):
        v = _person(rng) if pool == "PER" else rng.choice(RE_TYPES[pool])
        if v not in avoid:
            return v
    raise RuntimeError("no distinct entity")


def _re_record(rng: random.Random) -> tuple[str, dict[str, Any], dict[str, Any], str]:
    if rng.random() < 0.4:
        template, pools, pairs = rng.choice(RE_MULTI)
        subj_slot, obj_slot, label = rng.choice(pairs)
    else:
        template, s_pool, o_pool, label = rng.choice(RE_TEMPLATES)
        pools, subj_slot, obj_slot = {"S": s_pool, "O": o_pool}, "S", "O"
    words: dict[str, str] = {}
    for slot, pool in pools.items():
        words[slot] = _re_value(pool, rng, set(words.values()))
    text, spans = "", {}
    pos = 0
    for m in re.finditer(r"\{([A-Z])(?::([^}]+))?\}", template):
        text += template[pos:m.start()]
        word = words[m.group(1)]
        spans[m.group(1)] = (len(text), len(text) + len(word) - 1)
        text += word + (particle(word, m.group(2)) if m.group(2) else "")
        pos = m.end()
    text += template[pos:]

    def entity(slot: str) -> dict[str, Any]:
        return {"word": words[slot], "start_idx": spans[slot][0], "end_idx": spans[slot][1],
                "type": RE_ENTITY_TYPE[pools[slot]]}

    return text, entity(subj_slot), entity(obj_slot), label


def re_split(split: str, n: int) -> list[Record]:
    """{guid, sentence, subject_entity, object_entity (word, start_idx, end_idx inclusive, type), label, source}."""
    rng = _rng("re", split)
    seen: set[str] = set()
    out = []
    for i in range(n):
        text, subj, obj, label = _unique(lambda: _re_record(rng), lambda x: f"{x[0]}|{x[1]['word']}|{x[2]['word']}", seen)
        out.append({"guid": f"klue-re-v1_{split}_{i:05d}", "sentence": text, "subject_entity": subj,
                    "object_entity": obj, "label": label, "source": rng.choice(["wikipedia", "wikitree", "policy"])})
    return out


# ================================================================================================ DP
# Eojeols are built with their lemma (morphemes separated by spaces, as in KLUE-DP), POS (`+`-joined) and a head
# that is always to the right (Korean is head-final); the last eojeol is the root (head 0).
@dataclass
class Eojeol:
    word: str
    lemma: str
    pos: str
    label: str
    head: Eojeol | None = None


@dataclass(frozen=True)
class Verb:
    """A predicate's forms: (surface, lemma) for the past final (-았다), connective (-고) and adnominal (-ㄴ/-은)
    forms; `pos` is the stem's tag (VV, VA, or NNG+XSV for 하다 verbs)."""

    past: tuple[str, str]
    conn: tuple[str, str]
    adn: tuple[str, str]
    pos: str = "VV"
    objects: tuple[str, ...] = ()


def _v(past: str, past_l: str, conn: str, conn_l: str, adn: str, adn_l: str, pos: str = "VV",
       objects: str = "") -> Verb:
    return Verb((past, past_l), (conn, conn_l), (adn, adn_l), pos, tuple(objects.split()))


def _hada(noun: str, objects: str = "", pos: str = "NNG+XSV") -> Verb:
    return _v(f"{noun}했다", f"{noun} 하 였 다", f"{noun}하고", f"{noun} 하 고", f"{noun}한", f"{noun} 하 ㄴ", pos, objects)


TRANSITIVE = [
    _v("샀다", "사 았 다", "사고", "사 고", "산", "사 ㄴ", objects="책 사과 가방 우산 빵 꽃 선물 자전거 노트북"),
    _v("읽었다", "읽 었 다", "읽고", "읽 고", "읽은", "읽 은", objects="책 편지 신문 소설 잡지"),
    _v("먹었다", "먹 었 다", "먹고", "먹 고", "먹은", "먹 은", objects="사과 빵 밥 국수 과자"),
    _v("만들었다", "만들 었 다", "만들고", "만들 고", "만든", "만들 ㄴ", objects="빵 가방 선물 의자 케이크"),
    _v("고쳤다", "고치 었 다", "고치고", "고치 고", "고친", "고치 ㄴ", objects="자전거 의자 노트북 우산 시계"),
    _v("봤다", "보 았 다", "보고", "보 고", "본", "보 ㄴ", objects="영화 사진 신문 그림 경기"),
    _v("찾았다", "찾 았 다", "찾고", "찾 고", "찾은", "찾 은", objects="가방 우산 열쇠 지갑 사진"),
    _v("빌렸다", "빌리 었 다", "빌리고", "빌리 고", "빌린", "빌리 ㄴ", objects="책 우산 자전거 소설 노트북"),
    _v("팔았다", "팔 았 다", "팔고", "팔 고", "판", "팔 ㄴ", objects="자전거 가방 책 꽃 사과"),
    _v("닦았다", "닦 았 다", "닦고", "닦 고", "닦은", "닦 은", objects="창문 시계 의자 신발"),
    _hada("준비", "선물 밥 케이크 발표"),
    _hada("정리", "책 사진 서랍 가방"),
    _hada("주문", "빵 커피 국수 케이크 책"),
]
RECIPIENT = [
    _v("보냈다", "보내 었 다", "보내고", "보내 고", "보낸", "보내 ㄴ", objects="편지 선물 꽃 사진"),
    _v("주었다", "주 었 다", "주고", "주 고", "준", "주 ㄴ", objects="책 사과 선물 꽃 우산"),
    _hada("선물", "책 꽃 시계 가방"),
]
MOTION = [
    _v("갔다", "가 았 다", "가고", "가 고", "간", "가 ㄴ"),
    _v("왔다", "오 았 다", "오고", "오 고", "온", "오 ㄴ"),
    _v("돌아갔다", "돌아가 았 다", "돌아가고", "돌아가 고", "돌아간", "돌아가 ㄴ"),
    _hada("도착"),
    _hada("이사"),
]
ACTIVITY = [
    _v("놀았다", "놀 았 다", "놀고", "놀 고", "논", "놀 ㄴ"),
    _v("쉬었다", "쉬 었 다", "쉬고", "쉬 고", "쉰", "쉬 ㄴ"),
    _v("기다렸다", "기다리 었 다", "기다리고", "기다리 고", "기다린", "기다리 ㄴ"),
    _v("달렸다", "달리 었 다", "달리고", "달리 고", "달린", "달리 ㄴ"),
    _hada("공부"), _hada("일"), _hada("운동"), _hada("산책"),
]
ADJECTIVES = [
    _v("조용했다", "조용하 였 다", "조용하고", "조용하 고", "조용한", "조용하 ㄴ", "VA"),
    _v("깨끗했다", "깨끗하 였 다", "깨끗하고", "깨끗하 고", "깨끗한", "깨끗하 ㄴ", "VA"),
    _v("넓었다", "넓 었 다", "넓고", "넓 고", "넓은", "넓 은", "VA"),
    _v("컸다", "크 었 다", "크고", "크 고", "큰", "크 ㄴ", "VA"),
    _v("작았다", "작 았 다", "작고", "작 고", "작은", "작 은", "VA"),
    _v("따뜻했다", "따뜻하 였 다", "따뜻하고", "따뜻하 고", "따뜻한", "따뜻하 ㄴ", "VA"),
    _v("복잡했다", "복잡하 였 다", "복잡하고", "복잡하 고", "복잡한", "복잡하 ㄴ", "VA"),
    _v("예뻤다", "예쁘 었 다", "예쁘고", "예쁘 고", "예쁜", "예쁘 ㄴ", "VA"),
    _v("오래되었다", "오래되 었 다", "오래되고", "오래되 고", "오래된", "오래되 ㄴ", "VV"),
]
NAMES_NNP = ["민수", "영희", "지훈", "수진", "하늘", "도윤", "서연", "준호", "유나", "태민"]
HUMANS = ["학생", "선생님", "친구", "동생", "아이", "할머니", "의사", "기자", "손님", "아버지", "어머니", "언니", "이웃"]
PLACES_NNG = ["학교", "시장", "도서관", "공원", "병원", "회사", "식당", "바다", "집", "카페", "역", "가게", "교실"]
PLACES_NNP = ["서울", "부산", "대전", "제주", "광주", "인천"]
JOBS = ["학생", "의사", "선생님", "가수", "요리사", "기자", "화가", "간호사", "경찰관"]
TIMES_BARE = [("어제", "NNG"), ("오늘", "NNG"), ("방금", "MAG"), ("요즘", "NNG")]
TIMES_JKB = ["아침", "저녁", "주말", "오후", "밤", "새벽"]
DETERMINERS = [("그", "MMD"), ("이", "MMD"), ("새", "MMA"), ("헌", "MMA"), ("모든", "MMA")]
ADVERBS = ["빨리", "천천히", "일찍", "늦게", "다시", "함께", "자주", "조용히", "열심히", "오래"]
DEGREE = ["매우", "아주", "정말", "너무", "꽤"]
# particle key -> (the particle in its after-consonant form, POS tag)
PARTICLES = {"JX": ("은", "JX"), "JKS": ("이", "JKS"), "JKO": ("을", "JKO"), "JKG": ("의", "JKG"), "에": ("에", "JKB"),
             "에서": ("에서", "JKB"), "으로": ("으로", "JKB"), "에게": ("에게", "JKB"), "JC": ("과", "JC")}


def _noun(word: str, pos: str, p: str, label: str) -> Eojeol:
    form, tag = PARTICLES[p]
    form = particle(word, form)
    return Eojeol(word + form, f"{word} {form}", f"{pos}+{tag}", label)


def _final(v: Verb) -> Eojeol:
    tail = "EP+EF+SF"
    return Eojeol(v.past[0] + ".", v.past[1] + " .", f"{v.pos}+{tail}", "VP")


def _subject(rng: random.Random, human: bool = True) -> list[Eojeol]:
    """A subject (은/는 or 이/가), sometimes with a determiner, genitive or adnominal modifier before it."""
    p = rng.choice(["JX", "JKS"])
    if rng.random() < 0.45:
        return [_noun(rng.choice(NAMES_NNP), "NNP", p, "NP_SBJ")]
    head = _noun(rng.choice(HUMANS), "NNG", p, "NP_SBJ")
    return _modified(rng, head)


def _modified(rng: random.Random, head: Eojeol, p_mod: float = 0.5) -> list[Eojeol]:
    """`head` with, sometimes, one modifier in front: a determiner (DP), a genitive noun (NP_MOD) or an
    adjective in its adnominal form (VP_MOD)."""
    if rng.random() >= p_mod:
        return [head]
    kind = rng.random()
    if kind < 0.35:
        w, pos = rng.choice(DETERMINERS)
        mod = Eojeol(w, w, pos, "DP", head)
    elif kind < 0.65:
        owner = rng.choice(NAMES_NNP + HUMANS[:6])
        mod = _noun(owner, "NNP" if owner in NAMES_NNP else "NNG", "JKG", "NP_MOD")
        mod.head = head
    else:
        adj = rng.choice(ADJECTIVES)
        mod = Eojeol(adj.adn[0], adj.adn[1], f"{adj.pos}+ETM", "VP_MOD", head)
    return [mod, head]


def _object(rng: random.Random, verb: Verb) -> list[Eojeol]:
    return _modified(rng, _noun(rng.choice(verb.objects), "NNG", "JKO", "NP_OBJ"), 0.35)


def _time(rng: random.Random) -> Eojeol:
    if rng.random() < 0.5:
        w, pos = rng.choice(TIMES_BARE)
        return Eojeol(w, w, pos, "NP_AJT" if pos == "NNG" else "AP")
    return _noun(rng.choice(TIMES_JKB), "NNG", "에", "NP_AJT")


def _place(rng: random.Random, p: str) -> Eojeol:
    if rng.random() < 0.3:
        return _noun(rng.choice(PLACES_NNP), "NNP", p, "NP_AJT")
    return _noun(rng.choice(PLACES_NNG), "NNG", p, "NP_AJT")


def _adverb(rng: random.Random) -> Eojeol:
    w = rng.choice(ADVERBS)
    return Eojeol(w, w, "MAG", "AP")


def _attach(nodes: list[Eojeol], head: Eojeol) -> list[Eojeol]:
    """Nodes without a head (the phrase heads) now depend on `head`."""
    for n in nodes:
        if n.head is None and n is not head:
            n.head = head
    return nodes


def _dp_transitive(rng: random.Random) -> list[Eojeol]:
    verb = rng.choice(TRANSITIVE)
    parts = ([_time(rng)] if rng.random() < 0.4 else []) + _subject(rng)
    if rng.random() < 0.5:
        parts.append(_place(rng, "에서"))
    parts += _object(rng, verb)
    if rng.random() < 0.3:
        parts.append(_adverb(rng))
    root = _final(verb)
    return _attach(parts + [root], root)


def _dp_motion(rng: random.Random) -> list[Eojeol]:
    verb = rng.choice(MOTION)
    parts = ([_time(rng)] if rng.random() < 0.5 else []) + _subject(rng)
    if rng.random() < 0.4:
        parts.append(_adverb(rng))
    parts.append(_place(rng, rng.choice(["에", "으로"])))
    root = _final(verb)
    return _attach(parts + [root], root)


def _dp_activity(rng: random.Random) -> list[Eojeol]:
    verb = rng.choice(ACTIVITY)
    parts = ([_time(rng)] if rng.random() < 0.4 else []) + _subject(rng)
    parts.append(_place(rng, "에서"))
    if rng.random() < 0.6:
        parts.append(_adverb(rng))
    root = _final(verb)
    return _attach(parts + [root], root)


def _dp_coordinated(rng: random.Random) -> list[Eojeol]:
    """S O V-고 PLACE V.: the first clause (VP) depends on the final predicate, its object on the first verb."""
    verb, motion = rng.choice(TRANSITIVE), rng.choice(MOTION)
    subj = _subject(rng)
    obj = _object(rng, verb)
    first = Eojeol(verb.conn[0], verb.conn[1], f"{verb.pos}+EC", "VP")
    _attach(obj, first)
    place = _place(rng, rng.choice(["에", "으로"]))
    root = _final(motion)
    return _attach(subj + obj + [first, place, root], root)


def _dp_relative(rng: random.Random) -> list[Eojeol]:
    """O V-ㄴ N-이 PLACE V.: a relative clause (VP_MOD) on the subject noun."""
    verb, motion = rng.choice(TRANSITIVE), rng.choice(MOTION)
    subj = _noun(rng.choice(HUMANS), "NNG", rng.choice(["JX", "JKS"]), "NP_SBJ")
    obj = _object(rng, verb)
    rel = Eojeol(verb.adn[0], verb.adn[1], f"{verb.pos}+ETM", "VP_MOD", subj)
    _attach(obj, rel)
    parts = obj + [rel, subj] + ([_time(rng)] if rng.random() < 0.4 else []) + [_place(rng, "에")]
    root = _final(motion)
    return _attach(parts + [root], root)


def _dp_conjunct(rng: random.Random) -> list[Eojeol]:
    """A와 B가 ... V.: the first conjunct (NP_CNJ) depends on the second."""
    verb = rng.choice(TRANSITIVE)
    a, b = rng.sample(NAMES_NNP, 2)
    second = _noun(b, "NNP", rng.choice(["JX", "JKS"]), "NP_SBJ")
    first = _noun(a, "NNP", "JC", "NP_CNJ")
    first.head = second
    parts = [first, second] + ([_place(rng, "에서")] if rng.random() < 0.5 else []) + _object(rng, verb)
    root = _final(verb)
    return _attach(parts + [root], root)


def _dp_copula(rng: random.Random) -> list[Eojeol]:
    """S [ADJ-ㄴ] N이다.: the predicate noun with the copula is the root (VNP)."""
    job = rng.choice(JOBS)
    root = Eojeol(f"{job}이다.", f"{job} 이 다 .", "NNG+VCP+EF+SF", "VNP")
    parts = [_noun(rng.choice(NAMES_NNP), "NNP", "JX", "NP_SBJ")]
    if rng.random() < 0.6:
        adj = rng.choice(ADJECTIVES[:3] + ADJECTIVES[5:8])
        parts.append(Eojeol(adj.adn[0], adj.adn[1], f"{adj.pos}+ETM", "VP_MOD", root))
    return _attach(parts + [root], root)


def _dp_adjective(rng: random.Random) -> list[Eojeol]:
    """[DET] N은 [매우] ADJ.: the adjective predicate is the root (VP); a degree adverb (AP) depends on it."""
    adj = rng.choice(ADJECTIVES)
    subj = _noun(rng.choice(PLACES_NNG[:8]), "NNG", rng.choice(["JX", "JKS"]), "NP_SBJ")
    parts = _modified(rng, subj, 0.6)
    if rng.random() < 0.7:
        w = rng.choice(DEGREE)
        parts.append(Eojeol(w, w, "MAG", "AP"))
    root = _final(adj)
    return _attach(parts + [root], root)


def _dp_recipient(rng: random.Random) -> list[Eojeol]:
    verb = rng.choice(RECIPIENT)
    parts = _subject(rng) + [_noun(rng.choice(HUMANS), "NNG", "에게", "NP_AJT")] + _object(rng, verb)
    root = _final(verb)
    return _attach(parts + [root], root)


DP_PATTERNS: list[Callable[[random.Random], list[Eojeol]]] = [
    _dp_transitive, _dp_transitive, _dp_motion, _dp_activity, _dp_coordinated, _dp_relative, _dp_conjunct,
    _dp_copula, _dp_adjective, _dp_recipient,
]


def dp(split: str, n: int) -> str:
    """The official TSV: comment lines, then `## GUID<TAB>sentence` and one row per eojeol (INDEX, WORD_FORM,
    LEMMA, POS, HEAD, DEPREL)."""
    rng = _rng("dp", split)
    seen: set[str] = set()
    blocks = []
    for i in range(n):
        nodes = _unique(lambda: rng.choice(DP_PATTERNS)(rng), lambda ns: " ".join(e.word for e in ns), seen)
        index = {id(e): k for k, e in enumerate(nodes, 1)}
        source = rng.choice(["wikitree", "airbnb", "nsmc", "policy"])
        lines = [f"## klue-dp-v1_{split}_{i:05d}_{source}\t" + " ".join(e.word for e in nodes)]
        lines += [f"{k}\t{e.word}\t{e.lemma}\t{e.pos}\t{index[id(e.head)] if e.head else 0}\t{e.label}"
                  for k, e in enumerate(nodes, 1)]
        blocks.append("\n".join(lines))
    return "\n".join(DP_COMMENTS) + "\n" + "\n\n".join(blocks) + "\n\n"


def dp_plain(tsv: str) -> list[str]:
    """The sentences of a DP TSV (its header lines)."""
    return [ln.split("\t", 1)[1] for ln in tsv.split("\n") if ln.startswith("## klue-dp")]


# ================================================================================================ MRC
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
    p = Passage()
    p.say("{name:은} {year} {city}에서 태어난 {job}이다.", v)
    p.say("{school:을} 졸업한 뒤 {employer}에 들어가 {years} 동안 일했다.", v)
    p.say("대학 시절 그의 스승은 {mentor:이었다}.", v)
    p.say("{award_year}에는 {work} 연구로 {award:을} 받았다.", v)
    p.say("그의 책 『{book}』 역시 {copies} 넘게 팔린 베스트셀러이다.", v)
    p.say("현재 {name:은} {home}에 살며 후배를 가르치고 있다.", v)
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
    p = Passage()
    p.say("{company:은} {year} {founder:이} {city}에서 세운 {industry} 기업이다.", v)
    p.say("본사는 {hq}에 있으며, 직원 수는 {employees}이다.", v)
    p.say("{prod_year}에 내놓은 {product:은} 출시 첫해에만 {units} 넘게 팔렸다.", v)
    p.say("지금은 {ceo:이} 대표이사를 맡고 있다.", v)
    p.say("또한 {company:은} {partner:과} 함께 {project} 사업을 추진하고 있다.", v)
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
    p = Passage()
    p.say("{village:은} {province} {county}에 있는 마을로, {river} 상류에 자리 잡고 있다.", v)
    p.say("주민은 약 {pop}이며, 대부분 {crop:을} 재배한다.", v)
    p.say("해마다 {month}이면 {fest} 축제가 열려 {visitors}의 관광객이 찾는다.", v)
    p.say("마을 입구에는 수령 {age}년이 넘은 {tree:이} 서 있다.", v)
    p.say("{year}에는 {designation:으로} 지정되었다.", v)
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
    rng = _rng("mrc", split)
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


# ================================================================================================ RE labels
# The official KLUE-RE v1.1 `relation_list.json` (finetune.tasks.re.OFFICIAL_RELATIONS, which a test compares
# with this copy: importing that module would pull in scipy and scikit-learn, seconds per run).
RELATIONS = [
    "no_relation", "org:dissolved", "org:founded", "org:place_of_headquarters", "org:alternate_names",
    "org:member_of", "org:members", "org:political/religious_affiliation", "org:product", "org:founded_by",
    "org:top_members/employees", "org:number_of_employees/members", "per:date_of_birth", "per:date_of_death",
    "per:place_of_birth", "per:place_of_death", "per:place_of_residence", "per:origin", "per:employee_of",
    "per:schools_attended", "per:alternate_names", "per:parents", "per:children", "per:siblings", "per:spouse",
    "per:other_family", "per:colleagues", "per:product", "per:religion", "per:title",
]


def relation_list() -> dict[str, list[str]]:
    return {"relations": list(RELATIONS)}


# ================================================================================================ WoS
def wos(split: str, n: int, seed: int) -> list[Record]:
    """Dialogues of `finetune.wos_synth` (the project's WoS generator, official layout)."""
    from finetune.wos_synth import dialogues

    return dialogues(split, n, seed)


def wos_ontology() -> dict[str, list[str]]:
    from finetune.wos_synth import ontology

    return ontology()
