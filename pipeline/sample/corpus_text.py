"""The raw corpus of the sample: six registers written from templates, with PII, junk, duplicates and planted
benchmark sentences. Each function returns `CorpusDoc`s (text with gold PII spans, the fields its file format
needs, and what was planted); make_sample.py writes them. See make_sample.py for what each file holds.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pipeline.sample.textkit import (
    CITIES,
    COMPANIES,
    FOODS,
    TEAMS,
    Doc,
    Filler,
    Value,
    chance,
    fake,
    filler,
    industry,
    join,
    memo,
    number,
    pick,
    render,
    team_city,
)

KINDS = ("clean", "junk", "duplicate", "near_duplicate", "contaminated", "malformed")


@dataclass
class CorpusDoc:
    """One document: its text (a `Doc` with gold PII spans), the fields of its record (title, label, ...) and
    what it is: clean text, junk for the filters, an exact or near duplicate of an earlier document, a
    document holding a benchmark sentence, or a malformed record for the quarantine."""

    doc: Doc
    fields: dict[str, Any] = field(default_factory=dict)
    kind: str = "clean"
    note: str = ""
    of: CorpusDoc | None = None  # duplicates: the earlier document this one copies

    @property
    def text(self) -> str:
        return self.doc.text


def _r(rng: random.Random, extra: dict[str, Filler] | None = None) -> Callable[[str], Value]:
    return memo(filler(rng, extra))


def _sentences(fill: Callable[[str], Value], templates: list[str]) -> list[Doc]:
    return [render(t, fill) for t in templates]


def _plain(text: str) -> Doc:
    return Doc().add(text)


def _edit(text: str, rng: random.Random) -> str:
    """A near duplicate: one digit changed, or one word ("정말", "다시", "또") put in. Never only punctuation or
    spacing, which the exact-duplicate key ignores."""
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    if digits and chance(rng, 0.6):
        i = rng.choice(digits)
        return text[:i] + str((int(text[i]) + rng.randint(1, 8)) % 10) + text[i + 1:]
    spaces = [i for i, c in enumerate(text) if c == " "]
    i = rng.choice(spaces) if spaces else len(text)
    return text[:i] + " " + rng.choice(["정말", "다시", "또", "무척"]) + text[i:]


def _near(d: CorpusDoc, rng: random.Random, note: str) -> CorpusDoc:
    """A near duplicate of `d` (its spans dropped where the edit moved them: kept only when unchanged)."""
    new = _edit(d.text, rng)
    doc = Doc().add(new)
    doc.spans = [s for s in d.doc.spans if new[s.start:s.end] == s.text]
    return CorpusDoc(doc, dict(d.fields), "near_duplicate", note, d)


def _copy(d: CorpusDoc, note: str, fields: dict[str, Any] | None = None) -> CorpusDoc:
    return CorpusDoc(d.doc, dict(fields if fields is not None else d.fields), "duplicate", note, d)


# ============================================================================================== news.jsonl
NEWS_EXTRA: dict[str, Filler] = {
    "bill": pick(["예산안", "추경안", "선거법 개정안", "민생 법안", "특별법", "정부조직법 개정안", "연금 개혁안"]),
    "policy_area": pick(["연금", "교육", "노동", "규제", "지방 분권"]),
    "issue_local": pick(["교통 체증", "일자리", "집값", "인구 감소", "의료 공백"]),
    "committee": pick(["법제사법위원회", "기획재정위원회", "행정안전위원회", "교육위원회", "보건복지위원회"]),
    "quarter": pick(["1분기", "2분기", "3분기", "4분기", "상반기", "하반기"]),
    "export_item": pick(["반도체", "자동차", "선박", "석유화학 제품", "이차전지", "화장품"]),
    "rate": pick(["3.50%", "3.25%", "3.00%", "2.75%"]), "kospi": number(2400, 2900, "{:,}"),
    "trillion": lambda rng: f"{rng.randint(1, 9)}조 {rng.randint(1, 9)}천억 원", "small": number(2, 9, "{}"),
    "few": number(3, 12, "{}"), "age_group": pick(["20대", "30대", "40대", "50대", "60대"]),
    "era": pick(["조선 시대", "고려 시대", "삼국 시대", "근대"]),
    "movie": pick(["바람의 기억", "푸른 밤", "마지막 여름", "별을 쫓는 아이", "시간의 문", "겨울 항구"]),
    "region_w": pick(["북부", "남부", "동부", "서부", "중부"]), "mag": pick(["5.8", "6.2", "6.9", "7.1"]),
    "chip": pick(["메모리 반도체", "인공지능 칩", "고대역폭 메모리", "이미지 센서", "전력 반도체"]),
    "disease": pick(["치매", "당뇨", "폐암", "파킨슨병", "희귀 질환"]),
    "score": pick(["3-1", "2-0", "4-2", "1-0", "5-3"]), "draw": pick(["1-1", "2-2", "0-0"]),
    "setscore": pick(["3-0", "3-1", "3-2"]), "dept": pick(["홍보팀", "대외협력실", "고객지원센터", "기획조정실"]),
}
NEWS: dict[str, list[str]] = {
    "정치": [
        "{party:은} {day} 국회에서 의원총회를 열고 {bill} 처리 방향을 논의했다.",
        "{party} 원내대표인 {person} 의원은 \"국민의 삶을 먼저 생각하겠다\"고 말했다.",
        "여야는 {bill:을} 두고 {small}일째 팽팽하게 맞서고 있다.",
        "정부는 {month} 중으로 관련 법안을 국회에 제출할 계획이다.",
        "{ministry} {gov_title}인 {person2:은} 상임위원회에 출석해 정책 방향을 설명했다.",
        "야당은 정부의 설명이 충분하지 않다며 추가 자료 제출을 요구했다.",
        "대통령은 이날 국무회의에서 \"{policy_area} 분야의 개혁을 늦출 수 없다\"고 강조했다.",
        "{city} 지역 유권자들은 {issue_local} 문제를 가장 시급한 과제로 꼽았다.",
        "{party:은} 다음 달 전당대회를 열어 새 지도부를 뽑을 예정이다.",
        "여론조사 결과 응답자의 {pct}가 이번 개편안에 찬성한다고 답했다.",
        "국회 {committee:은} {day} 전체회의를 열고 법안 심사를 이어 갔다.",
        "이번 합의안은 본회의 표결을 거쳐 최종 확정된다.",
        "정치권 안팎에서는 이번 결정이 총선 판세에 영향을 줄 것이라는 분석이 나온다.",
        "{party} 관계자는 \"충분한 논의 없이 처리하는 것에 반대한다\"고 밝혔다.",
        "대통령실은 {country} 순방 일정을 마치고 {day} 귀국한다고 밝혔다.",
        "국회는 {day} 본회의를 열어 법안 {num}건을 처리했다.",
    ],
    "경제": [
        "{company:은} {quarter} 매출이 {won}으로 집계됐다고 {day} 공시했다.",
        "영업이익은 지난해 같은 기간보다 {pct} 늘어난 {won}을 기록했다.",
        "{export_item} 수출이 늘면서 실적이 크게 개선됐다는 분석이 나온다.",
        "한국은행은 {day} 기준금리를 연 {rate}로 유지하기로 결정했다.",
        "{month} 소비자물가는 1년 전보다 {pct} 올라 상승 폭이 커졌다.",
        "외식비와 농산물 가격이 오르면서 서민들의 장바구니 부담도 커지고 있다.",
        "{company} 관계자는 \"{product} 판매가 예상보다 좋았다\"며 \"하반기에도 투자를 늘릴 것\"이라고 말했다.",
        "증권가에서는 {company}의 목표 주가를 잇따라 올려 잡았다.",
        "코스피는 전 거래일보다 {num}포인트 오른 {kospi:으로} 장을 마쳤다.",
        "외국인 투자자들이 {small}일 연속 순매수에 나서며 지수 상승을 이끌었다.",
        "{ministry:은} 중소기업의 자금난을 덜기 위해 {won} 규모의 특별 대출을 시행한다.",
        "전문가들은 글로벌 경기 둔화가 수출에 부담이 될 수 있다고 경고했다.",
        "{city} 지역 아파트값은 {small}주 연속 하락세를 이어 갔다.",
        "은행권 가계대출 잔액은 한 달 새 {trillion} 늘었다.",
        "{company:과} {company2:은} 배터리 소재 분야에서 협력하기로 하고 업무 협약을 맺었다.",
        "원·달러 환율은 전날보다 {num}원 오른 1,3{num2}원에 거래를 마쳤다.",
    ],
    "사회": [
        "{day} 오후 {city}의 한 아파트에서 불이 나 주민 {num}명이 대피했다.",
        "불은 {num2}분 만에 꺼졌지만 연기를 마신 주민 몇 명이 병원으로 옮겨졌다.",
        "소방당국은 정확한 화재 원인과 피해 규모를 조사하고 있다.",
        "{city} 경찰서는 노인들을 상대로 돈을 가로챈 혐의로 {age_group} 남성을 구속했다.",
        "경찰에 따르면 이들은 수사 기관을 사칭해 피해자들에게서 모두 {won}을 받아 낸 것으로 조사됐다.",
        "법원은 피고인에게 징역 {small}년을 선고했다.",
        "재판부는 \"피해자들이 큰 고통을 겪었고 피해 회복도 이뤄지지 않았다\"고 판시했다.",
        "{city}시는 다음 달부터 출퇴근 시간대 시내버스 {num}대를 늘려 운행한다.",
        "시민들은 배차 간격이 줄어 출근길이 한결 편해질 것이라며 반겼다.",
        "교육청은 내년부터 {city} 지역 고등학교 배정 방식을 바꾸기로 했다.",
        "학부모 단체는 충분한 의견 수렴 없이 결정됐다며 반발했다.",
        "폭염 특보가 이어지면서 {city}에서도 온열 질환자가 잇따라 발생하고 있다.",
        "보건 당국은 한낮 야외 활동을 자제하고 물을 자주 마시라고 당부했다.",
        "사고는 {hour}쯤 {city} 방향 고속도로에서 차량 {small}대가 잇따라 부딪히면서 일어났다.",
        "이 사고로 운전자 {num}명이 다쳐 인근 병원으로 옮겨졌다.",
        "경찰은 블랙박스 영상을 토대로 정확한 사고 경위를 조사하고 있다.",
        "{city} 지하철 노조는 인력 충원을 요구하며 다음 주 파업을 예고했다.",
    ],
    "생활문화": [
        "{city}의 봄꽃 축제가 {day} 개막해 주말 동안 {people}의 나들이객이 몰렸다.",
        "행사장에는 먹거리 장터와 공연 무대가 마련돼 가족 단위 방문객의 발길이 이어졌다.",
        "국립박물관은 {era} 유물 {count}점을 한자리에 모은 특별전을 연다.",
        "이번 전시에서는 그동안 공개되지 않았던 자료도 처음으로 선보인다.",
        "전시는 {month} 말까지 이어지며 관람료는 무료이다.",
        "여름 휴가철을 앞두고 {city:을} 찾는 관광객이 지난해보다 {pct} 늘었다.",
        "지역 상인들은 모처럼 손님이 늘어 활기를 되찾았다고 입을 모았다.",
        "영화 '{movie}'는 개봉 첫 주말에만 관객 {num}만 명을 모았다.",
        "관객들은 배우들의 연기와 영상미가 돋보였다는 평가를 내놓았다.",
        "환절기에는 일교차가 커서 감기에 걸리기 쉬우므로 건강 관리에 신경 써야 한다.",
        "전문가들은 충분한 수면과 규칙적인 운동이 면역력을 높이는 데 도움이 된다고 조언했다.",
        "{city} 전통시장은 이번 달부터 매주 금요일과 토요일 밤에 야시장을 운영한다.",
        "야시장에서는 {food:과} 같은 지역 음식을 저렴한 가격에 맛볼 수 있다.",
        "출판계에 따르면 올해 상반기 에세이 판매량이 지난해보다 {pct} 늘었다.",
        "이번 공연은 {city} 문화예술회관에서 {day}부터 사흘 동안 열린다.",
        "주최 측은 관람객 편의를 위해 셔틀버스를 운행한다고 밝혔다.",
    ],
    "세계": [
        "{country}에서 치러진 대통령 선거에서 야당 후보가 승리했다.",
        "현지 언론은 높은 물가와 실업률에 대한 불만이 표심을 움직였다고 분석했다.",
        "{country:과} {country2} 정상은 {day} 회담을 열고 무역 갈등을 해소하기로 합의했다.",
        "양국은 공급망 협력을 강화하고 관세를 단계적으로 낮추기로 했다.",
        "{country} 중앙은행은 치솟는 물가를 잡기 위해 기준금리를 0.25%포인트 인상했다.",
        "{country} {region_w} 지역에서 규모 {mag}의 지진이 발생해 건물 수백 채가 무너졌다.",
        "구조 당국은 잔해 속에 갇힌 주민들을 찾기 위해 밤새 수색 작업을 벌였다.",
        "유엔은 긴급 구호 자금을 지원하고 의료진을 현지에 보내기로 했다.",
        "{country} 총리는 연립 정부가 무너지자 {day} 사임을 발표했다.",
        "{country} 수도에서는 정부의 연금 개혁에 반대하는 대규모 시위가 열렸다.",
        "시위대 수만 명이 거리로 나와 정책 철회를 요구했다.",
        "주요 20개국 정상들은 {country}에서 만나 기후 위기 대응 방안을 논의했다.",
        "{country} 정부는 {country2}산 철강 제품에 대한 관세를 {pct} 올리기로 했다.",
        "전문가들은 이번 조치가 세계 교역 위축으로 이어질 수 있다고 우려했다.",
        "{country} 외교장관은 {city:을} 방문해 한국 정부 인사들과 만났다.",
        "폭우가 이어진 {country}에서는 이재민이 {count}명을 넘어섰다.",
    ],
    "IT과학": [
        "{company:은} 차세대 {chip:을} 세계 최초로 양산하기 시작했다고 {day} 밝혔다.",
        "새 제품은 기존 제품보다 처리 속도가 {pct} 빠르고 전력 소모는 크게 줄었다.",
        "{company} 관계자는 \"{year}까지 관련 분야에 {won}을 투자할 계획\"이라고 말했다.",
        "과학기술정보통신부는 6G 이동통신 원천 기술 개발에 {won}을 지원한다.",
        "국내 연구진이 {disease} 치료에 쓸 수 있는 새로운 물질을 개발했다.",
        "연구 결과는 국제 학술지에 실렸으며, 동물 실험에서 효과가 확인됐다.",
        "인공지능 챗봇 서비스 이용자가 {num}00만 명을 넘어섰다.",
        "전문가들은 생성형 인공지능이 일하는 방식을 크게 바꿀 것이라고 내다봤다.",
        "최근 개인정보 유출 사고가 잇따르면서 기업들의 보안 투자 확대가 시급하다는 지적이 나온다.",
        "{company}의 클라우드 서비스가 {small}시간 넘게 멈춰 이용자들이 불편을 겪었다.",
        "회사 측은 서버 장애가 원인이라며 피해 보상 방안을 마련하겠다고 밝혔다.",
        "자율주행 셔틀버스가 {city} 도심에서 시범 운행을 시작했다.",
        "시범 운행 기간에는 안전 요원이 함께 탑승해 돌발 상황에 대비한다.",
        "한국형 발사체는 {day} 오후 발사돼 위성 {small}기를 목표 궤도에 올려놓았다.",
        "{company:은} 새 {product:을} 공개하며 배터리 사용 시간을 크게 늘렸다고 강조했다.",
        "양자컴퓨터 분야의 국제 경쟁도 갈수록 치열해지고 있다.",
    ],
    "스포츠": [
        "{team:은} {day} 홈 경기에서 {team2:을} {score:으로} 꺾고 {small}연승을 달렸다.",
        "선발 투수는 {small}이닝 동안 삼진 {few}개를 잡아내며 무실점으로 호투했다.",
        "공격에서는 중심 타자들이 고르게 안타를 때리며 승리를 도왔다.",
        "{sport} 국가대표팀은 아시안게임 결승에서 {country:을} 꺾고 금메달을 차지했다.",
        "감독은 경기 뒤 \"선수들이 끝까지 포기하지 않은 덕분\"이라고 소감을 밝혔다.",
        "{team:은} 새 사령탑으로 {person} 감독을 선임했다고 {day} 발표했다.",
        "{person} 감독은 \"팬들이 자랑스러워할 팀을 만들겠다\"고 각오를 밝혔다.",
        "{city} 국제마라톤 대회에는 국내외 선수와 시민 {people}이 참가했다.",
        "대회 당일 도심 주요 도로는 오전 내내 통제됐다.",
        "{team} 공격수는 전반에만 두 골을 몰아넣으며 팀의 대승을 이끌었다.",
        "이날 승리로 {team:은} 플레이오프 진출을 확정했다.",
        "주전 수비수가 부상으로 {small}주 동안 경기에 나서지 못하게 됐다.",
        "{sport} 대표팀은 {country}와의 평가전에서 {draw:으로} 비겼다.",
        "골프 투어 최종 라운드에서 {small}타 차 역전 우승이 나왔다.",
        "관중 {people}이 경기장을 가득 메워 열기를 더했다.",
        "배구 {team:은} 시즌 개막전에서 세트 스코어 {setscore:으로} 이겼다.",
    ],
}
NEWS_COMMON = [
    "{outlet}의 취재를 종합하면 관련 논의는 다음 주에도 이어질 전망이다.",
    "업계에서는 이번 결정이 장기적으로 긍정적인 효과를 낼 것으로 보고 있다.",
    "한편 관계 당국은 다음 달 구체적인 후속 대책을 내놓을 예정이다.",
    "{person3} {expert_title:은} \"당분간 상황을 지켜봐야 한다\"고 말했다.",
    "이에 대해 시민들의 반응은 엇갈렸다.",
]
NEWS_PII = [  # one sentence of the article may carry a contact detail
    "자세한 내용은 {ministry} 누리집({url})에서 확인할 수 있다.",
    "문의는 {company} {dept}({phone})로 하면 된다.",
    "행사는 {address}에 있는 시민문화센터에서 열린다.",
    "경찰은 달아난 {vehicle} 차량의 운전자를 쫓고 있다.",
    "제보와 문의는 이메일({email})로 받는다.",
    "신청서는 팩스({fax}) 또는 우편으로 제출하면 된다.",
]
NEWS_TITLES: dict[str, list[str]] = {
    "정치": ["{party}, {bill} 처리 방향 논의", "여야 {bill} 공방 계속", "국회 {committee} 법안 심사"],
    "경제": ["{company} {quarter} 실적 발표", "기준금리 연 {rate} 유지", "{export_item} 수출 호조"],
    "사회": ["{city} 아파트 화재로 주민 대피", "{city} 시내버스 증차", "고속도로 연쇄 추돌 사고"],
    "생활문화": ["{city} 봄꽃 축제 개막", "{era} 유물 특별전", "영화 '{movie}' 흥행"],
    "세계": ["{country} 정권 교체", "{country}·{country2} 정상회담", "{country} 대규모 시위"],
    "IT과학": ["{company} 차세대 {chip} 양산", "{disease} 치료 신물질 개발", "자율주행 셔틀 시범 운행"],
    "스포츠": ["{team} {small}연승", "{sport} 대표팀 금메달", "{team} 새 감독 선임"],
}
NEWS_BOILERPLATE = ["무단 전재 및 재배포 금지", "ⓒ {outlet}", "▶ 관련 기사 더 보기", "기사 제보는 카카오톡으로 보내 주세요",
                    "많이 본 뉴스", "구독과 좋아요 부탁드립니다"]


def _news_article(rng: random.Random, topic: str, i: int) -> CorpusDoc:
    fill = _r(rng, NEWS_EXTRA)
    pool = NEWS[topic]
    lead = pool[0] if chance(rng, 0.3) else rng.choice(pool)
    # sentences in the order of their pool, which groups those of one story (fire, put out, investigated)
    body = [lead] + sorted(rng.sample([t for t in pool if t != lead], rng.randint(4, 6)), key=pool.index)
    if chance(rng, 0.5):
        body.insert(rng.randint(2, len(body)), rng.choice(NEWS_COMMON))
    if chance(rng, 0.35):
        body.insert(rng.randint(1, len(body)), rng.choice(NEWS_PII))
    sents = _sentences(fill, body)
    paras, k = [], 0
    while k < len(sents):
        step = rng.choice([1, 2, 2, 3])
        paras.append(join(sents[k:k + step], " "))
        k += step
    if chance(rng, 0.5):
        paras.append(render("{person4} 기자 {email}", fill))
    if chance(rng, 0.25):
        paras.append(render(rng.choice(NEWS_BOILERPLATE), fill))
    title = render(rng.choice(NEWS_TITLES[topic]), fill).text
    return CorpusDoc(join(paras, "\n"), {"title": title, "category": topic,
                                         "date": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                                         "id": f"news-{i:05d}"})


def news(rng: random.Random, planted: list[tuple[str, str]], n: int) -> list[CorpusDoc]:
    """Articles (jsonl: text, title, category, date, id) of the seven YNAT topics; some end in a reporter line
    or boilerplate, a few are boilerplate only; exact and near duplicates; planted benchmark sentences."""
    topics = list(NEWS)
    docs = [_news_article(rng, topics[i % len(topics)], i) for i in range(n)]
    out: list[CorpusDoc] = []
    for i, d in enumerate(docs):
        out.append(d)
        if i % 37 == 5:
            out.append(_copy(d, f"exact copy of news {d.fields['id']}", {**d.fields, "title": d.fields["title"] + " (종합)"}))
        elif i % 41 == 9:
            out.append(_near(d, rng, f"near duplicate of news {d.fields['id']}"))
        elif i % 97 == 50:
            fill = _r(rng, NEWS_EXTRA)
            lines = [render("{company} 신제품 출시", fill)] + [render(b, fill) for b in NEWS_BOILERPLATE[:5]]
            out.append(CorpusDoc(join(lines, "\n"), {"title": "알림", "category": "기타", "date": "2024-01-01",
                                                     "id": f"news-junk-{i:05d}"}, "junk", "mostly boilerplate"))
    for j, (bench, sentence) in enumerate(planted):
        d = _news_article(rng, rng.choice(topics), 90000 + j)
        text = d.doc
        doc = Doc().extend(text).add("\n이 밖에도 관계자는 이렇게 설명했다. ").add(sentence)
        out.insert(len(out) * (j + 1) // (len(planted) + 1),
                   CorpusDoc(doc, {**d.fields, "id": f"news-bench-{j}"}, "contaminated", bench))
    return out


# ============================================================================================== forum.txt
FORUM_EXTRA: dict[str, Filler] = {
    "pet": pick(["강아지", "고양이", "햄스터", "앵무새", "거북이", "토끼"]),
    "pet_name": pick(["초코", "보리", "콩이", "두부", "망고", "별이", "호두", "까미", "구름이", "몽실이"]),
    "game": pick(["던전 원정대", "별빛 농장", "바다 탐험가", "전설의 검사", "우주 정거장", "왕국 건설기", "마법 학교"]),
    "car": pick(["소형 SUV", "경차", "중형 세단", "전기차", "승합차", "준중형 세단", "하이브리드 차"]),
    "km": number(2, 18, "{}만 km"), "n_km": number(9, 19, "{}"), "n_year": number(1, 9, "{}"),
    "price": lambda rng: f"{rng.randint(3, 95) * 10:,}만 원", "price_small": lambda rng: f"{rng.randint(1, 30) * 5000:,}원",
    "dish": pick(FOODS), "age": pick(["돌 지난", "세 살", "네 살", "다섯 살", "여섯 살", "초등학교 1학년", "초등학교 3학년"]),
    "kid": pick(["아들", "딸", "첫째", "둘째", "막내"]), "parent": pick(["엄마", "아빠"]), "toy": pick(["블록", "공룡 인형", "자동차 장난감", "소꿉놀이 세트", "그림책"]),
    "snack": pick(["과자", "젤리", "고구마", "바나나", "요구르트"]), "veg": pick(["애호박", "당근", "브로콜리", "감자", "단호박", "양파"]),
    "n_month": pick(["한 달", "두 달", "석 달", "넉 달", "반년"]), "n_hour": pick(["한 시간", "두 시간", "세 시간", "네 시간"]),
    "n_day": pick(["이틀", "사흘", "일주일", "열흘", "보름"]), "n_min": pick(["20분", "30분", "40분", "한 시간"]),
    "n_kg": pick(["1킬로그램", "2킬로그램", "3킬로그램", "500그램"]),
    "age_pet": pick(["한 살", "두 살", "세 살", "다섯 살", "일곱 살"]), "n_co": number(10, 80, "{}"),
    "toeic": number(70, 95, "{}0"), "n_lv": number(50, 99, "{}"), "n_pt": number(5, 40, "{}"),
    "job_field": pick(["마케팅", "회계", "개발", "디자인", "영업", "간호", "물류", "교육"]), "spot": pick(CITIES),
    "subject": pick(["영어", "일본어", "코딩", "한국사", "통계", "중국어", "회계"]),
    "app": pick(["가계부 앱", "운동 기록 앱", "중고거래 앱", "메모 앱", "지도 앱", "만보기 앱"]),
    "item": pick(["유모차", "자전거", "모니터", "책상", "캠핑 의자", "전기밥솥", "노트북", "게임기", "가습기", "안마 의자",
                  "전동 킥보드", "카메라"]),
    "ingredient": pick(["대파", "양배추", "계란", "돼지고기", "두부", "오이"]),
    "weather_adj": pick(["너무 덥네요", "많이 쌀쌀해졌어요", "비가 계속 오네요", "오랜만에 맑네요"]),
    "laugh": pick(["ㅋㅋ", "ㅋㅋㅋ", "ㅎㅎ", "ㅠㅠ", "", "", "!"]),
}
FORUM_OPEN = ["안녕하세요.", "오랜만에 글 남겨요.", "처음 글 써 봐요.", "질문 하나만 드릴게요.", "다들 잘 지내시죠?",
              "눈팅만 하다가 글 올려요.", "퇴근길에 폰으로 써요.", "급해서 여쭤봐요.", "{weekday}인데 벌써 피곤하네요.",
              "요즘 날씨가 {weather_adj}.", "고민이 있어서 글 올립니다.", "심심해서 써 보는 글이에요."]
FORUM_CLOSE = ["조언 부탁드려요.", "감사합니다!", "답변 주시면 복 받으실 거예요{laugh}", "다들 좋은 하루 보내세요.",
               "혹시 아시는 분 댓글 부탁드립니다.", "긴 글 읽어 주셔서 감사해요.", "경험담 공유해 주시면 좋겠어요.",
               "다음에 후기 올릴게요.", "그럼 이만 줄입니다{laugh}", "많은 의견 부탁드려요."]
FORUM: dict[str, list[str]] = {
    "육아": ["{age} {kid} 키우는 {parent}예요.", "요즘 {kid:이} 밤에 자꾸 깨서 너무 힘드네요{laugh}",
           "낮잠을 줄이면 밤에 잘 잔다는 얘기를 들었는데 정말 그런가요?", "어린이집 보내기 시작하고 {n_month}째 감기를 달고 살아요.",
           "다들 아이 반찬은 어떻게 준비하시나요?", "주말에 아이랑 갈 만한 곳 추천 부탁드려요.",
           "{spot}에 새로 생긴 키즈카페 다녀왔는데 깨끗하고 좋았어요.", "이유식에 {veg:을} 처음 넣어 봤는데 잘 먹더라고요.",
           "{kid:이} {toy}만 가지고 놀아서 다른 장난감은 다 방치 중이에요.", "간식으로 {snack:을} 주는데 너무 많이 먹는 것 같아 걱정돼요.",
           "요즘 말이 부쩍 늘어서 하루하루가 신기해요.", "소아과 대기가 {n_hour}이라 진이 다 빠졌어요.",
           "예방 접종 맞고 와서 열이 조금 나는데 지켜봐도 될까요?", "육아 휴직 끝나고 복직하려니 마음이 복잡하네요.",
           "{kid} 생일 선물로 {toy} 어떨까요?", "아이가 {spot} 할머니 댁에 가는 걸 제일 좋아해요."],
    "자취": ["자취 {n_year}년 차인데 요즘 식비가 너무 많이 나와요.", "혼자 살면 {dish} 해 먹기가 애매하더라고요{laugh}",
           "원룸 벽에 곰팡이가 생겨서 고민이에요.", "제습기 사면 확실히 나아질까요?", "관리비에 인터넷 요금이 포함된 건지 헷갈려요.",
           "이사 날짜가 {n_day} 남았는데 짐 정리를 하나도 못 했네요.", "혼자 사시는 분들 저녁은 주로 뭐 드세요?",
           "전기 요금 아끼는 방법 아시는 분 계신가요?", "이번 달 가스비가 {price_small}이나 나왔어요.",
           "집주인이 보증금을 {price} 올려 달라고 하네요.", "{spot} 쪽으로 이사 가려는데 살기 어떤가요?",
           "택배가 자꾸 옆집으로 가서 난감해요.", "냉장고에 {ingredient}만 잔뜩 있는데 뭘 해 먹을지 모르겠어요.",
           "주말에 대청소했더니 집이 훨씬 넓어 보여요.", "윗집 발소리 때문에 새벽마다 깨요{laugh}",
           "전세 계약할 때 꼭 확인해야 할 게 뭐가 있을까요?"],
    "중고거래": ["{item} 팝니다.", "{item} 판매해요, 거의 새것이에요.", "산 지 {n_month} 정도 됐고 상태 좋아요.",
             "가격은 {price_small}이고 직거래만 합니다.", "택배 거래도 가능하고 택배비는 따로예요.", "관심 있으신 분은 연락 주세요.",
             "사진 더 필요하시면 말씀해 주세요.", "{spot} 역 근처에서 거래 가능합니다.", "네고는 어렵습니다{laugh}",
             "박스랑 설명서까지 다 있어요.", "이사 때문에 급하게 정리합니다.", "생활 기스 조금 있는데 사용에는 전혀 문제없어요.",
             "{weekday} 저녁이나 주말에 시간 됩니다.", "교환은 받지 않아요.", "같이 사시면 {item2}도 싸게 드릴게요.",
             "구매 영수증도 있어서 보증 수리 받으실 수 있어요."],
    "자동차": ["{car} 타고 다닌 지 {n_year}년 됐어요.", "주행거리는 {km} 정도입니다.", "엔진 소리가 전보다 커진 것 같아서 걱정이에요.",
            "정비소에서 타이어를 바꾸라고 하는데 아직 괜찮지 않나요?", "겨울철 배터리 관리는 어떻게 하세요?",
            "이번에 {car2:으로} 바꿀까 고민 중입니다.", "연비가 리터당 {n_km}킬로미터 정도 나와서 만족하고 있어요.",
            "보험료가 작년보다 {price_small} 올랐네요{laugh}", "엔진 오일은 몇 km마다 가시나요?",
            "{spot}까지 고속도로로 다녀왔는데 {n_hour} 걸렸어요.", "주차하다가 옆 차를 살짝 긁었는데 어떻게 처리하는 게 좋을까요?",
            "블랙박스 추천 좀 해 주세요.", "세차는 주로 손세차 하시나요, 자동 세차 하시나요?",
            "에어컨에서 냄새가 나서 필터를 갈아야 할 것 같아요.", "차 안에서 딸깍거리는 소리가 나는데 원인을 모르겠어요.",
            "중고로 팔면 {price} 정도 받을 수 있을까요?"],
    "반려동물": ["저희 집 {pet} {pet_name} 자랑 좀 할게요{laugh}", "{pet_name:이} 요즘 밥을 잘 안 먹어서 걱정이에요.",
             "동물병원에 데려가 봐야 할까요?", "산책할 때 다른 강아지를 보면 너무 짖어요.", "사료를 바꾼 뒤로 털에 윤기가 나요.",
             "처음 {pet:을} 키우시는 분들께 조언 드리자면 인내심이 제일 중요해요.", "예방 접종은 언제 맞히셨어요?",
             "집을 비울 때 돌봐 줄 곳 찾고 있어요.", "{pet_name:이} {age_pet} 됐는데 아직도 아기 같아요.",
             "간식을 너무 좋아해서 살이 {n_kg} 쪘어요.", "발톱 깎을 때마다 전쟁이에요{laugh}", "새벽마다 깨워서 잠이 부족해요.",
             "목욕은 한 달에 몇 번 시키세요?", "{spot}에 반려동물 동반 가능한 카페가 있을까요?",
             "입양한 지 {n_month} 지났는데 이제 좀 마음을 연 것 같아요.", "장난감을 사 줘도 상자만 가지고 놀아요."],
    "요리": ["오늘 저녁은 {dish:으로} 정했어요.", "레시피 보고 처음 {dish:을} 만들어 봤는데 생각보다 맛있게 됐어요{laugh}",
           "간장은 조금만 넣는 게 좋더라고요.", "재료 손질하는 데 시간이 제일 오래 걸렸어요.", "{dish} 맛있게 끓이는 비법 있으신가요?",
           "냉장고 정리하다가 남은 채소로 볶음밥 했어요.", "에어프라이어 사고 나서 요리가 훨씬 편해졌어요.",
           "다음에는 양을 좀 줄여서 만들어 보려고요.", "{veg} 한 봉지에 {price_small}이라니 채솟값이 너무 올랐어요.",
           "마늘을 넉넉히 넣었더니 풍미가 확 살아요.", "주말에 친구들 초대해서 {dish2:과} {dish3:을} 차렸어요.",
           "불 조절을 잘못해서 바닥이 좀 탔어요{laugh}", "아이들 입맛에 맞게 덜 맵게 만들었어요.",
           "밀키트로 해 먹으니 설거지가 줄어서 좋아요.", "양념은 하루 전에 미리 재워 두면 맛이 더 배요.",
           "요즘 {ingredient} 가격이 많이 내렸더라고요."],
    "여행": ["이번 주말에 {spot} 다녀왔어요.", "날씨가 좋아서 걷기 딱 좋았어요.", "시장에서 먹은 {dish} 정말 맛있었어요.",
           "숙소는 역에서 가까워서 편했어요.", "다음 달에 {spot2} 가는데 꼭 가 볼 곳 있을까요?",
           "혼자 여행은 처음인데 생각보다 재미있었어요{laugh}", "사람이 너무 많아서 사진 찍기가 힘들었어요.",
           "기차표는 미리 예매하시는 걸 추천해요.", "{spot}에서 {spot2}까지 버스로 {n_hour} 정도 걸렸어요.",
           "바다가 보이는 카페에서 한참 앉아 있었어요.", "숙박비가 1박에 {price_small}이었는데 가격 대비 괜찮았어요.",
           "아침 일찍 일어나서 해돋이를 봤어요.", "{country}로 여행 가 보신 분 계신가요?", "여행자 보험은 꼭 드시는 편인가요?",
           "렌터카 빌려서 해안 도로를 달렸는데 경치가 끝내줬어요.", "다녀와서 사진 정리하는 것도 일이네요."],
    "운동": ["헬스 시작한 지 {n_month} 됐어요.", "아침마다 {n_min}씩 걷고 있는데 확실히 몸이 가벼워요.",
           "무릎이 안 좋은데 할 만한 운동 있을까요?", "수영 배우는데 호흡이 제일 어렵네요{laugh}",
           "{app:으로} 기록하니까 꾸준히 하게 되더라고요.", "주말마다 동네 친구들이랑 {sport:을} 해요.",
           "스트레칭을 안 했더니 근육통이 심하네요.", "다들 운동하고 나서 뭐 드세요?", "두 달 만에 체중이 {n_kg} 빠졌어요!",
           "{spot} 마라톤 대회에 처음 나가 보려고요.", "요가를 시작했는데 몸이 이렇게 뻣뻣한 줄 몰랐어요.",
           "개인 교습을 받을지 혼자 할지 고민이에요.", "퇴근하고 운동 가기가 제일 힘들어요.", "등산화 하나 사려는데 추천해 주세요.",
           "자전거 출퇴근 한 달째인데 허벅지가 단단해졌어요.", "식단 조절이 운동보다 더 어려운 것 같아요."],
    "취업": ["{job_field} 쪽으로 취업 준비하고 있어요.", "서류에서 계속 떨어지니까 자신감이 떨어지네요{laugh}",
           "면접 때 자기소개는 얼마나 길게 하셨어요?", "자격증이 실제로 도움이 되는지 궁금합니다.", "어제 드디어 최종 합격 연락 받았어요!",
           "인턴 경험이 없어도 괜찮을까요?", "포트폴리오 정리하는 데 시간이 꽤 걸리네요.", "다들 힘내세요, 좋은 결과 있을 거예요.",
           "지금까지 지원한 회사만 {n_co}곳이 넘어요.", "{company} 면접 보신 분 분위기 어땠나요?", "연봉 협상은 어떻게 하셨는지 궁금해요.",
           "{spot}에 있는 회사에 붙었는데 이사를 가야 할지 고민이에요.", "토익 점수가 {toeic}점인데 더 올려야 할까요?",
           "경력 {n_year}년 차인데 이직을 준비하고 있습니다.", "면접에서 예상하지 못한 질문이 나와서 당황했어요.",
           "첫 출근 날 뭘 준비해야 할까요?"],
    "게임": ["{game} 새 시즌 해 보신 분?", "이번 업데이트 이후로 난이도가 확 올라갔어요{laugh}", "친구랑 같이 하니까 훨씬 재미있네요.",
           "주말 내내 했더니 눈이 너무 아파요.", "초보인데 어떤 직업이 좋을까요?", "이벤트 보상이 생각보다 괜찮더라고요.",
           "서버 점검 언제 끝나는지 아시는 분?", "레벨 올리는 팁 좀 알려 주세요.", "어제 드디어 {n_lv}레벨 찍었어요!",
           "{game}에서 같이 할 길드원 구합니다.", "과금 안 하고도 충분히 즐길 수 있어요.", "보스 공략 영상 보고 세 번 만에 깼어요.",
           "렉이 너무 심해서 접속을 못 하겠어요.", "캐릭터 꾸미는 재미로 하고 있어요{laugh}", "이번 협업 이벤트 아이템 예쁘네요.",
           "밤새 하다가 출근해서 너무 졸려요."],
    "공부": ["{subject} 공부 시작한 지 {n_month} 됐어요.", "하루에 {n_hour}씩 꾸준히 하는 게 목표예요.", "인강이랑 학원 중에 뭐가 나을까요?",
           "단어 외우는 좋은 방법 있으면 알려 주세요.", "{spot}에서 {subject} 스터디 같이 하실 분 구해요.",
           "시험이 {n_day} 남았는데 진도를 반도 못 나갔어요{laugh}", "도서관 자리가 아침부터 꽉 차더라고요.",
           "요즘 집중이 너무 안 돼서 타이머를 켜 놓고 해요.", "{subject} 자격증 시험 보신 분 계신가요?",
           "문제집은 한 권을 여러 번 푸는 게 좋다고 하더라고요.", "필기는 손으로 하는 게 기억에 더 잘 남는 것 같아요.",
           "카페에서 공부하는 게 집보다 잘 되네요.", "오답 노트를 만들기 시작했어요.", "주말에는 모의고사를 풀어 보고 있어요.",
           "목표 점수까지 {n_pt}점 남았어요.", "같이 공부하는 친구가 있으니 덜 지치네요."],
}
FORUM_PII = [  # sentences with contact or identity details, as people really paste them
    "연락은 {phone:으로} 문자 주세요.", "자세한 건 {email}로 메일 주세요.",
    "입금은 {branch} {account:으로} 해 주시면 됩니다.", "차량번호 {vehicle:이고} 사고 이력은 없습니다.",
    "어제 {ip}에서 로그인했다는 알림이 와서 깜짝 놀랐어요.", "사진은 제 블로그 {url}에 더 올려 뒀어요.",
    "직거래는 {address} 앞에서 가능해요.", "주문할 때 카드번호 {card:으로} 결제했는데 두 번 빠져나갔어요.",
    "보험 청구할 때 건강보험증 번호 {insurance:을} 적으라고 하던데 이게 맞나요?",
    "{person} 선생님께 상담받고 많이 좋아졌어요.", "관심 있으시면 {phone}, {person}에게 연락 주세요.",
]
FORUM_JUNK = ["ㅋㅋㅋㅋㅋ", "ㅇㅇ", "감사요", "굿굿", "ㅠㅠ", "?", "추천", "1등", "ㄱㄱ", "퍼가요~",
              "로그인 | 회원가입 | 검색", "이전 글 다음 글 목록", "▶ 인기 게시물 바로 가기", "맨 위로",
              "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!", "★★★★★★★★★★★★★★★★★★", "=================================",
              "$$$ 100% !!! ### ~~~ ^^^ *** +++ ||| 1234 5678 9999 0000", "@@@@@ ##### %%%%% &&&&& ***** 2024 2025",
              "Click here to win a free phone now!!! Limited offer for today only, do not miss it.",
              "This post has been removed by the moderator because of repeated spam reports.",
              "Best price guaranteed, visit our online store for more details and discount coupons.",
              "Thanks for sharing, I will try this recipe at home this weekend with my family."]


def _forum_post(rng: random.Random) -> CorpusDoc:
    board = rng.choice(list(FORUM))
    fill = _r(rng, FORUM_EXTRA)
    sents = rng.sample(FORUM[board], rng.randint(3, 5))
    if chance(rng, 0.45):
        sents.insert(0, rng.choice(FORUM_OPEN))
    if chance(rng, 0.15 if board != "중고거래" else 0.7):
        sents.insert(rng.randint(1, len(sents)), rng.choice(FORUM_PII))
    if chance(rng, 0.5):
        sents.append(rng.choice(FORUM_CLOSE))
    return CorpusDoc(join(_sentences(fill, sents), " "), {"board": board})


def forum(rng: random.Random, planted: list[tuple[str, str]], n: int) -> list[CorpusDoc]:
    """One post a line: ten boards of informal Korean; junk lines (too short, UI boilerplate, symbols, English
    only), reposts (exact) and edited reposts (near), planted benchmark sentences."""
    out: list[CorpusDoc] = []
    posts = [_forum_post(rng) for _ in range(n)]
    for i, d in enumerate(posts):
        out.append(d)
        if i % 60 == 7:
            out.append(_copy(d, "exact repost of an earlier post"))
        elif i % 83 == 11 and len(d.text) > 60:
            out.append(_near(d, rng, "edited repost of an earlier post"))
        if i % 40 == 3:
            out.append(CorpusDoc(_plain(FORUM_JUNK[(i // 40) % len(FORUM_JUNK)]), {}, "junk", "filter bait"))
    for j, (bench, sentence) in enumerate(planted):
        doc = Doc().add(rng.choice(["어디서 본 문장인데 기억나서 적어 봐요. ", "오늘 들은 얘기예요. "])).add(sentence)
        out.insert(len(out) * (j + 1) // (len(planted) + 1), CorpusDoc(doc, {}, "contaminated", bench))
    return out


# ============================================================================================== wiki.txt
WIKI_EXTRA: dict[str, Filler] = {
    "job": pick(["소설가", "화가", "작곡가", "건축가", "물리학자", "식물학자", "영화감독", "사진작가", "언어학자", "조각가", "시인"]),
    "work": pick(["푸른 들판", "새벽 기차", "잊힌 골목", "물의 시간", "세 번째 계절", "달빛 정원", "겨울 바다", "먼 곳의 노래",
                  "오래된 지도", "두 개의 창"]),
    "award": pick(["한별문학상", "누리예술상", "가온과학상", "새길문화상", "은하건축상", "해오름음악상"]),
    "km": number(12, 180, "{}"), "area": number(80, 2400, "{:,}"), "height": number(420, 1650, "{:,}"),
    "season": pick(["봄", "여름", "가을", "겨울"]), "crop": pick(["감자", "사과", "고추", "녹차", "배추", "포도", "옥수수", "인삼"]),
    "animal": pick(["수달", "원앙", "반딧불이", "두루미", "산양", "황조롱이", "하늘다람쥐", "남생이"]),
    "tree": pick(["느티나무", "은행나무", "소나무", "팽나무", "회화나무", "왕버들"]), "students": number(300, 24000, "{:,}"),
    "dept_count": number(8, 60, "{}"), "old_year2": number(1880, 1960, "{}년"), "hours": pick(["두 시간", "세 시간", "네 시간"]),
    "ingredient": pick(["쌀", "밀가루", "메밀", "콩", "배추", "돼지고기", "닭고기", "두부", "감자", "멸치"]),
    "spice": pick(["간장", "된장", "고추장", "참기름", "들깨", "마늘"]), "pop": number(40, 980, "{}"),
    "n": number(2, 9, "{}"), "dam_year": number(1965, 2005, "{}년"), "trail": pick(["네", "다섯", "여섯", "세"]),
    "fest": pick(["반딧불이", "단풍", "산나물", "별빛", "얼음", "연꽃", "억새", "매화"]),
    "stadium": pick(["시민운동장", "종합경기장", "돔구장", "실내체육관"]), "wins": pick(["두", "세", "네", "다섯", "여섯"]),
    "island_size": number(3, 90, "{}"), "flower": pick(["유채", "동백", "수선화", "해국", "원추리"]), "ferry": pick(["40분", "한 시간", "한 시간 반", "두 시간"]),
}
# category -> (title template, groups): the first group opens the entry; each group is one fact in a few
# phrasings, so that two entries of one category share few sentences word for word.
WIKI: dict[str, tuple[str, list[list[str]]]] = {
    "인물": ("{person}", [
        ["{person:은} {old_year} {city}에서 태어난 대한민국의 {job}이다.", "{person:은} {city} 출신의 {job}으로, {old_year}에 태어났다.",
         "{person:은} {city}에서 나고 자란 {job}이다. {old_year}에 태어났다."],
        ["어린 시절을 {city2}에서 보냈으며, {school:을} 졸업하였다.", "{school}에서 공부하며 처음 {job}의 꿈을 키웠다."],
        ["{old_year2} 무렵부터 본격적으로 활동을 시작하였다.", "첫 작품을 발표한 것은 {old_year2}의 일이다."],
        ["대표작으로는 「{work}」 등이 있으며, 이 작품으로 {award:을} 받았다.", "「{work}」로 {award:을} 받으며 널리 알려졌다."],
        ["그의 작품은 일상의 풍경을 담담하게 그려 냈다는 평가를 받는다.", "비평가들은 그의 작품이 {season}의 빛을 닮았다고 평하였다."],
        ["{n}권의 작품집을 펴냈다.", "평생 {n}번의 개인전을 열었다."],
        ["만년에는 {city3}에 머물며 후학 양성에 힘썼다.", "말년을 {city3}의 작은 작업실에서 보냈다."],
        ["그의 이름을 딴 기념관이 고향에 세워졌다.", "고향 {city}에는 그의 이름을 딴 거리가 있다."]]),
    "하천": ("{river}", [
        ["{river:은} {region}의 {mountain}에서 발원하여 남쪽으로 흐르는 하천이다.",
         "{river:은} {region}을 지나는 강으로, {mountain}에서 시작된다."],
        ["길이는 약 {km}킬로미터이고, 유역 면적은 {area}제곱킬로미터이다.", "총길이 {km}킬로미터, 유역 면적 {area}제곱킬로미터의 하천이다."],
        ["상류는 물이 맑고 계곡이 깊어 {season}철 피서지로 알려져 있다.", "상류의 깊은 계곡에는 {season}마다 찾는 사람이 많다."],
        ["하류의 넓은 들에서는 예로부터 벼농사가 활발하였다.", "하류에는 {crop} 밭과 논이 넓게 펼쳐져 있다."],
        ["유역에는 {animal} 같은 보호종이 서식한다.", "{animal:이} 사는 곳으로도 알려져 있다."],
        ["홍수 피해를 줄이기 위해 {dam_year}에 중류에 작은 댐이 건설되었다.", "{dam_year}에 세운 보가 농업용수를 대 준다."],
        ["강을 따라 자전거 길이 {km}킬로미터가량 이어진다.", "강변 산책로는 주민들의 휴식처이다."]]),
    "산": ("{mountain}", [
        ["{mountain:은} {region}에 있는 산으로, 높이는 {height}미터이다.", "{mountain:은} 해발 {height}미터의 산으로 {region}에 솟아 있다."],
        ["산세가 부드러워 초보 등산객도 쉽게 오를 수 있다.", "바위가 많고 경사가 가팔라 숙련된 등산객이 즐겨 찾는다."],
        ["정상에 서면 주변의 들판과 마을이 한눈에 내려다보인다.", "맑은 날에는 정상에서 먼 바다까지 보인다."],
        ["{season}에는 산 전체가 꽃과 단풍으로 물들어 많은 사람이 찾는다.", "{season}철 풍경이 특히 아름답다."],
        ["산기슭에는 오래된 절터와 돌탑이 남아 있다.", "중턱에는 조선 시대에 쌓은 것으로 전하는 산성이 있다."],
        ["등산로는 모두 {trail} 갈래이며, 가장 짧은 길은 {hours} 정도 걸린다.", "가장 많이 쓰이는 등산로로는 정상까지 {hours}이 걸린다."],
        ["{animal:과} 같은 야생 동물이 산다.", "산 일대는 {dam_year}에 자연 보호 구역으로 지정되었다."]]),
    "마을": ("{village}", [
        ["{village:은} {region}에 있는 산골 마을이다.", "{village:은} {region}의 작은 마을로, {pop}여 명이 산다."],
        ["마을 사람들은 대대로 {crop} 농사를 지으며 살아왔다.", "주민 대부분이 {crop:을} 기르며, 그 맛이 좋기로 이름나 있다."],
        ["마을 한가운데에는 수백 년 된 {tree:이} 있어 마을의 상징이 되었다.", "마을 어귀의 {tree} 아래에서 해마다 제사를 지낸다."],
        ["해마다 {season}이 되면 마을 잔치가 열려 이웃 마을 사람들도 함께 어울린다.", "{season}마다 {fest} 축제가 열린다."],
        ["최근에는 옛 돌담길을 보러 오는 방문객이 늘어났다.", "옛 한옥 {n}채가 잘 남아 있어 답사객이 찾는다."],
        ["마을 회관은 주민들의 모임 장소로 쓰인다.", "폐교된 초등학교 건물은 마을 도서관이 되었다."],
        ["마을 앞으로 {river:이} 흐른다.", "{mountain}의 남쪽 자락에 자리 잡고 있다."]]),
    "기업": ("{company}", [
        ["{company:은} {year}에 설립된 대한민국의 {industry} 기업이다.", "{company:은} {city}에 본사를 둔 {industry} 회사로, {year}에 세워졌다."],
        ["본사는 {city}에 있으며, 여러 나라에 지사를 두고 있다.", "국내에 공장 {n}곳을 운영한다."],
        ["창업 초기에는 작은 작업장에서 출발하였으나 빠르게 성장하였다.", "{person:이} 창업하였으며, 처음에는 직원이 {n}명뿐이었다."],
        ["주력 제품은 해외 여러 나라에 수출되고 있다.", "매출의 절반가량이 수출에서 나온다."],
        ["직원 교육과 연구 개발에 매출의 상당 부분을 쓰는 것으로 알려져 있다.", "{city2}에 연구소를 두고 있다."],
        ["환경 보호와 지역 사회 공헌 활동에도 힘을 쏟고 있다.", "해마다 장학금을 지역 학생들에게 주고 있다."],
        ["{company}의 공식 누리집 주소는 {url:이다}.", "대표 전화는 {phone:이다}."]]),
    "학교": ("{school}", [
        ["{school:은} {city}에 있는 사립 대학교이다.", "{school:은} {city}에 자리한 종합 대학이다."],
        ["{old_year2}에 작은 학당으로 시작하여 오늘날의 대학교로 발전하였다.", "{old_year2}에 세워진 야학이 그 뿌리이다."],
        ["학과는 모두 {dept_count}개이며, 재학생은 약 {students}명이다.", "{dept_count}개 학과에 {students}명가량이 다닌다."],
        ["특히 인문학과 기초 과학 분야의 연구가 활발하다.", "공학 계열의 취업률이 높은 편이다."],
        ["해마다 {season}에는 지역 주민과 함께하는 축제가 열린다.", "{season} 축제에는 주민들도 많이 찾는다."],
        ["도서관에는 고문헌과 지역 향토 자료가 많이 소장되어 있다.", "박물관에는 {n}천여 점의 유물이 있다."],
        ["졸업생 가운데에는 지역 사회에서 활동하는 교사와 공무원이 많다.", "초대 총장은 {person}이다."],
        ["캠퍼스는 {address}에 있다.", "본관 주소는 {address:이다}."]]),
    "음식": ("{food}", [
        ["{food:은} 한국의 대표적인 가정 음식 가운데 하나이다.", "{food:은} 오래전부터 즐겨 먹어 온 한국 음식이다."],
        ["주재료는 {ingredient:이며} 지역과 집안에 따라 조리법이 조금씩 다르다.", "{ingredient:을} 주재료로 하고 {spice:으로} 맛을 낸다."],
        ["예로부터 손님을 대접하거나 명절에 즐겨 먹었다.", "{season}철에 특히 많이 먹는다."],
        ["요즘은 간편식으로도 만들어져 쉽게 사 먹을 수 있다.", "{city}의 {food} 골목이 유명하다."],
        ["재료를 손질하고 양념을 만드는 데 손이 많이 가지만 그만큼 맛이 깊다.", "{spice:을} 조금 넣으면 향이 살아난다."],
        ["조리할 때에는 불 조절이 맛을 좌우한다고 알려져 있다.", "오래 끓일수록 국물 맛이 진해진다."],
        ["외국인 관광객에게도 인기가 많아 관광지 식당의 단골 메뉴가 되었다.", "해외 한식당에서도 흔히 볼 수 있다."],
        ["영양이 풍부하여 건강식으로도 알려져 있다.", "열량이 비교적 낮은 편이다."]]),
    "구단": ("{team}", [
        ["{team:은} {city:을} 연고지로 하는 프로 {sport} 구단이다.", "{team:은} {city}에 자리한 프로 {sport} 팀이다."],
        ["{year}에 창단되었으며, 홈 경기장은 {stadium:이다}.", "{year} 창단 이후 {stadium:을} 홈으로 쓴다."],
        ["창단 첫해에는 하위권에 머물렀으나 곧 강팀으로 자리 잡았다.", "창단 초기에는 꼴찌를 면치 못하였다."],
        ["지금까지 정규 시즌에서 {wins} 차례 우승을 차지하였다.", "리그 우승 {wins} 번을 기록하였다."],
        ["유소년 선수를 키우는 데 많은 투자를 하는 구단으로 알려져 있다.", "유소년 팀 출신 선수가 주전의 절반을 차지한다."],
        ["응원가와 마스코트는 지역 어린이들 사이에서도 인기가 높다.", "마스코트는 {animal:을} 본떠 만들었다."],
        ["홈 경기가 열리는 날이면 경기장 주변 상점가도 응원 인파로 붐빈다.", "초대 감독은 {person}이다."]]),
    "섬": ("{island}", [
        ["{island:은} {region} 앞바다에 있는 섬으로, 면적은 {island_size}제곱킬로미터이다.",
         "{island:은} {region}에 딸린 작은 섬이다."],
        ["육지에서 배로 {ferry} 걸린다.", "하루 {n}번 여객선이 오간다."],
        ["주민들은 주로 고기잡이와 김 양식으로 생계를 꾸린다.", "섬 주민 {pop}여 명의 대부분이 어업에 종사한다."],
        ["해안을 따라 기암괴석이 늘어서 있다.", "섬 둘레를 도는 산책로가 있다."],
        ["{season}에는 낚시꾼들이 많이 찾는다.", "{season}철이면 섬 전체에 {flower} 꽃이 핀다."],
        ["섬의 등대는 {old_year2}에 처음 불을 밝혔다.", "섬 꼭대기에 옛 봉수대 터가 남아 있다."]]),
}
WIKI_JUNK = ["이 문서는 토막글입니다.", "분류: 미분류 문서\n최근 바뀜\n임의 문서로",
             "This article is a stub. You can help the wiki by expanding it with reliable sources.",
             "See also: list of rivers, list of mountains, list of villages and related categories."]


def _wiki_entry(rng: random.Random) -> CorpusDoc:
    from pipeline.sample.textkit import MOUNTAINS, RIVERS, VILLAGES

    category = rng.choice(list(WIKI))
    extra = dict(WIKI_EXTRA)
    # titles differ more than the pools of the KLUE tasks: place names with a direction, so entries do not collide
    extra["river"] = lambda r: _prefixed(r, RIVERS)
    extra["mountain"] = lambda r: _prefixed(r, MOUNTAINS)
    extra["village"] = lambda r: _prefixed(r, VILLAGES)
    extra["island"] = lambda r: _prefixed(r, ISLANDS)
    # what a company does and where a team plays follow from their names
    company, team = rng.choice(COMPANIES), rng.choice(TEAMS)
    extra.update({"company": lambda r: company, "team": lambda r: team, "industry": lambda r: industry(company)})
    if category == "구단":
        extra["city"] = lambda r: team_city(team)
    fill = _r(rng, extra)
    title_slot, groups = WIKI[category]
    rest = [g for g in groups[1:] if chance(rng, 0.8)]
    if len(rest) < 4:  # at least five sentences: an entry, not a stub
        rest = sorted(rng.sample(groups[1:], min(4, len(groups) - 1)), key=groups.index)
    chosen = [rng.choice(g) for g in [groups[0], *rest]]
    title = render(title_slot, fill)
    body = join(_sentences(fill, chosen), " ")
    if len(chosen) > 4 and chance(rng, 0.5):  # a second paragraph
        cut = 1 + rng.randint(1, len(chosen) - 2)
        body = join([join(_sentences(fill, chosen[:cut]), " "), join(_sentences(fill, chosen[cut:]), " ")], "\n")
    return CorpusDoc(join([title, body], "\n"), {"category": category})


ISLANDS = ["솔섬", "달바위섬", "까치섬", "모래섬", "갈매기섬", "안개섬", "별섬", "소라섬"]


def _prefixed(rng: random.Random, names: list[str]) -> str:
    """A place name from `names`, sometimes with a direction in front (북솔강, 남청봉산): more distinct entries."""
    return rng.choice(["", "", "북", "남", "동", "서", "윗", "아랫", "큰", "작은"]) + rng.choice(names)


def wiki(rng: random.Random, planted: list[tuple[str, str]], n: int) -> list[CorpusDoc]:
    """Encyclopedia entries, one block each (a title line, then one or two paragraph lines); blocks are
    separated by a blank line. Junk stubs, revised entries (near duplicates), a few exact copies."""
    out: list[CorpusDoc] = []
    for i in range(n):
        d = _wiki_entry(rng)
        out.append(d)
        if i % 53 == 10:
            out.append(_near(d, rng, "revised copy of an earlier entry"))
        elif i % 71 == 20:
            out.append(_copy(d, "exact copy of an earlier entry"))
        if i % 90 == 45:
            out.append(CorpusDoc(_plain(WIKI_JUNK[(i // 90) % len(WIKI_JUNK)]), {}, "junk", "stub"))
    for j, (bench, passage) in enumerate(planted):
        doc = Doc().add("인용 자료\n").add(passage)
        out.insert(len(out) * (j + 1) // (len(planted) + 1), CorpusDoc(doc, {}, "contaminated", bench))
    return out


# ============================================================================================== reviews.tsv
REVIEW_EXTRA: dict[str, Filler] = {
    "actor": pick(["주연 배우", "아역 배우", "조연 배우들", "악역 배우", "두 주인공"]), "n": number(2, 9, "{}"),
    "delivery": pick(["이틀", "하루", "사흘", "일주일", "열흘"]), "dish": pick(FOODS), "price_small": number(1, 9, "{}만 원"),
    "minutes": pick(["10분", "20분", "30분", "40분", "한 시간"]), "movie": pick(["바람의 기억", "푸른 밤", "마지막 여름",
                                                                              "별을 쫓는 아이", "시간의 문", "겨울 항구"]),
    "thing": pick(["이어폰", "텀블러", "운동화", "가방", "선풍기", "전기포트", "우산", "이불", "마우스", "책상 조명"]),
    "color": pick(["검은색", "흰색", "회색", "하늘색", "분홍색"]), "room": pick(["방", "욕실", "주방", "침구", "거실"]),
    "view": pick(["바다", "산", "야경", "강", "정원"]), "spot": pick(CITIES),
}
REVIEW_POS = {
    "영화": ["{actor} 연기가 정말 훌륭했어요", "마지막 장면에서 눈물이 났습니다", "음악이 너무 좋아서 계속 생각나요",
           "두 시간이 금방 지나갔어요", "올해 본 영화 중에 최고예요", "가족이랑 같이 보기 좋은 영화입니다",
           "영상미가 아름다워서 극장에서 보길 잘했어요", "{n}번 봐도 질리지 않을 것 같아요", "'{movie}' 보고 왔는데 여운이 길게 남아요",
           "{actor} 때문에 웃다가 울다가 했네요", "원작보다 훨씬 좋았어요", "반전이 있어서 끝까지 긴장하면서 봤어요",
           "대사 하나하나가 마음에 와닿았어요", "{spot}에서 찍은 장면이 특히 예뻤어요", "속편이 나오면 꼭 볼 거예요"],
    "상품": ["배송이 {delivery} 만에 와서 좋았어요", "가격 대비 품질이 훌륭합니다", "포장도 꼼꼼하게 되어 있었어요",
           "디자인이 예뻐서 선물용으로 딱이에요", "생각보다 튼튼하고 가벼워요", "재구매 의사 있습니다",
           "사용법이 간단해서 부모님도 잘 쓰세요", "{color}으로 샀는데 사진이랑 똑같아요", "{thing} 찾다가 샀는데 대만족이에요",
           "{price_small} 안 되는 가격에 이 정도면 훌륭하죠", "두 개 사서 하나는 동생 줬어요", "소음이 거의 없어서 좋아요",
           "한 달째 쓰고 있는데 고장 없이 잘 돼요", "{thing} 여러 개 써 봤는데 이게 제일 나아요", "마감이 깔끔해요"],
    "식당": ["{dish} 맛이 깊고 진해요", "사장님이 친절하셔서 기분 좋게 먹었어요", "양이 많아서 배부르게 먹었습니다",
           "재료가 신선한 게 느껴져요", "웨이팅이 {minutes} 있었지만 기다릴 만했어요", "다음에 또 오고 싶은 집이에요",
           "반찬도 하나하나 정성스러워요", "가게가 깨끗해서 좋았어요", "{dish} 먹으러 {spot}까지 간 보람이 있었어요",
           "부모님 모시고 갔는데 다들 좋아하셨어요", "국물이 진하고 간이 딱 맞아요", "가격도 착하고 맛도 좋아요",
           "{dish:이} 이 동네에서 제일 맛있어요", "점심시간에 가도 금방 나와요", "분위기가 아늑해서 데이트하기 좋아요"],
    "숙소": ["{room:이} 넓고 깨끗했어요", "창밖 {view} 풍경이 정말 멋졌습니다", "침구가 포근해서 푹 잤어요", "역에서 가까워서 편했어요",
           "직원분들이 친절하게 안내해 주셨어요", "조식이 맛있었어요", "조용해서 쉬기 좋았습니다", "가격 대비 만족스러웠어요",
           "{spot} 여행 때 묵었는데 위치가 최고예요", "체크인이 빨라서 좋았어요", "욕실 수압이 세서 좋았어요",
           "{view:이} 보이는 방으로 바꿔 주셔서 감사했어요", "주차가 편해요", "다음에도 여기로 예약할 거예요", "아이들이 수영장을 좋아했어요"],
}
REVIEW_NEG = {
    "영화": ["기대를 많이 했는데 너무 지루했어요", "이야기가 뻔해서 중간에 졸았습니다", "결말이 허무해요",
           "러닝타임이 너무 길게 느껴졌어요", "배우들 연기가 어색했어요", "광고에 속았네요", "음향이 너무 커서 머리가 아팠어요",
           "돈이 아까운 영화입니다", "'{movie}' 평이 좋아서 봤는데 실망했어요", "{actor} 연기가 너무 과했어요",
           "개연성이 하나도 없어요", "{n}분 만에 나오고 싶었어요", "전개가 너무 느려요", "원작을 망쳐 놨네요", "웃기려고 한 장면이 하나도 안 웃겨요"],
    "상품": ["배송이 {delivery:이나} 걸렸어요", "사진이랑 색깔이 너무 달라요", "한 번 쓰고 고장 났어요", "마감이 엉성합니다",
           "냄새가 심해서 환불했어요", "설명서가 불친절해요", "이 가격에 이 품질은 아니죠", "포장이 찢어져서 왔어요",
           "{color}을 시켰는데 다른 색이 왔어요", "{thing} 버튼이 잘 안 눌려요", "소리가 너무 시끄러워요", "교환 요청했는데 답이 없어요",
           "{delivery} 쓰고 망가졌어요", "크기가 생각보다 너무 작아요", "배터리가 금방 닳아요"],
    "식당": ["{dish:이} 너무 짜서 다 못 먹었어요", "직원이 불친절했어요", "기다린 것에 비해 맛이 평범해요", "가격이 너무 비싸요",
           "위생 상태가 별로였어요", "양이 너무 적어요", "주문이 잘못 나왔는데 사과도 없었어요", "다시는 안 갈 것 같아요",
           "{minutes}이나 기다렸는데 음식이 식어서 나왔어요", "{dish}에서 머리카락이 나왔어요", "예약했는데 자리가 없다고 하네요",
           "너무 시끄러워서 대화를 못 했어요", "반찬이 재탕 같아요", "{dish} 맛이 예전 같지 않아요", "카드 결제가 안 된대요"],
    "숙소": ["방음이 안 돼서 잠을 못 잤어요", "사진과 실제가 너무 달랐어요", "욕실에 곰팡이가 있었어요",
           "체크인이 {minutes}이나 늦어졌어요", "에어컨이 고장 나서 더웠어요", "주차 공간이 부족해요", "침대가 너무 딱딱했어요",
           "위치 설명이 부정확해서 헤맸어요", "{room}에서 냄새가 났어요", "{view:이} 보인다더니 벽만 보여요", "수건이 덜 말라 있었어요",
           "와이파이가 계속 끊겨요", "{spot}까지 간 게 아까울 정도예요", "직원 응대가 너무 성의 없었어요", "벌레가 나왔어요"],
}
REVIEW_OPEN = ["솔직히", "진짜", "와", "음", "처음 가 봤는데", "친구 추천으로 갔는데", "오랜만에", "큰맘 먹고", "기대 반 걱정 반이었는데"]
REVIEW_CLOSE = {1: ["추천합니다", "강추", "또 갈게요", "별 다섯 개 드려요", "만족해요", "최고"],
                0: ["비추", "별 하나도 아까워요", "다시는 안 가요", "실망이에요", "환불하고 싶어요", "돈 아까워요"]}
REVIEW_PII = ["판매자분께 {email}로 문의했더니 바로 답장 주셨어요", "사장님 번호 {phone} 받아서 예약했어요",
              "주소를 {address:으로} 적었는데 다른 곳으로 갔어요", "{person} 매니저님이 친절하게 설명해 주셨어요"]
REVIEW_ENDS = [".", "!", "~", " ㅎㅎ", "", "요", " ㅠㅠ", "!!"]
REVIEW_JUNK = ["굿", "별로", "ㅋㅋ", "10점", "★★★★★", "ㅡㅡ", "최악", "good", "...", "0점"]
REVIEW_COMMON = ["최고의 영화입니다 강력 추천해요", "배송 빠르고 좋아요", "맛있어요 또 올게요", "깨끗하고 정말 좋았어요"]


def _review(rng: random.Random) -> CorpusDoc:
    domain = rng.choice(list(REVIEW_POS))
    label = int(chance(rng, 0.55))
    pool = (REVIEW_POS if label else REVIEW_NEG)[domain]
    fill = _r(rng, REVIEW_EXTRA)
    parts = [render(t, fill) for t in rng.sample(pool, rng.randint(1, 3))]
    if chance(rng, 0.05):
        parts.insert(rng.randint(0, len(parts)), render(rng.choice(REVIEW_PII), fill))
    if chance(rng, 0.3):
        parts[0] = Doc().add(rng.choice(REVIEW_OPEN) + " ").extend(parts[0])
    if chance(rng, 0.4):
        parts.append(_plain(rng.choice(REVIEW_CLOSE[label])))
    doc = join(parts, rng.choice([" ", ". ", ", ", "! ", "~ "])).add(rng.choice(REVIEW_ENDS))
    return CorpusDoc(doc, {"label": str(label), "domain": domain})


def reviews(rng: random.Random, planted: list[tuple[str, str]], n: int) -> list[CorpusDoc]:
    """Short reviews of films, products, restaurants and stays (tsv: id, document, label 1/0); very short and
    symbol-only reviews, the common one-liners that every review site repeats, planted benchmark sentences."""
    out: list[CorpusDoc] = []
    common: dict[str, CorpusDoc] = {}
    for i in range(n):
        d = _review(rng)
        out.append(d)
        if i % 50 == 13:
            out.append(CorpusDoc(_plain(REVIEW_JUNK[(i // 50) % len(REVIEW_JUNK)]), {"label": "0"}, "junk", "too short"))
        if i % 120 == 30:
            text = REVIEW_COMMON[(i // 120) % len(REVIEW_COMMON)]
            first = common.get(text)
            out.append(CorpusDoc(_plain(text), {"label": "1"}, "duplicate" if first else "clean",
                                 "a one-liner repeated across the file", first))
            common.setdefault(text, out[-1])
        elif i % 77 == 40:
            out.append(_copy(d, "exact copy of an earlier review"))
    for j, (bench, sentence) in enumerate(planted):
        doc = Doc().add(sentence).add(" 다음에도 여기로 올 거예요")
        out.insert(len(out) * (j + 1) // (len(planted) + 1), CorpusDoc(doc, {"label": "1"}, "contaminated", bench))
    return out


# ============================================================================================== qa.csv
QA_EXTRA: dict[str, Filler] = {
    "doc_kind": pick(["주민등록등본", "가족관계증명서", "건강보험 자격득실확인서", "소득금액증명원", "졸업증명서", "납세증명서",
                      "인감증명서", "토지대장"]),
    "office": pick(["주민센터", "구청", "시청 민원실", "세무서", "행정복지센터"]), "center": fake("PHONE"),
    "symptom": pick(["두통", "기침", "소화불량", "허리 통증", "불면증", "어깨 결림", "눈 충혈", "목 통증", "콧물", "무릎 통증"]),
    "days": pick(["사흘", "일주일", "열흘", "이 주일", "한 달"]),
    "device": pick(["노트북", "스마트폰", "프린터", "공유기", "태블릿", "스마트워치", "무선 이어폰", "모니터"]),
    "problem": pick(["갑자기 꺼져요", "인터넷이 자꾸 끊겨요", "화면이 깜빡거려요", "배터리가 빨리 닳아요", "소리가 안 나요",
                     "충전이 안 돼요", "너무 뜨거워져요", "전원이 안 켜져요"]),
    "feeling": pick(["요즘 잠이 잘 안 와요", "친구랑 싸웠어요", "시험을 망친 것 같아요", "회사 가기가 너무 싫어요",
                     "이사 와서 외로워요", "다이어트가 너무 힘들어요", "발표가 너무 떨려요", "요즘 아무것도 하기 싫어요",
                     "부모님이랑 자꾸 말다툼을 해요", "새 학기가 걱정돼요"]),
    "transport": pick(["고속버스", "기차", "비행기", "배", "자가용"]), "hours": pick(["두 시간", "세 시간", "네 시간", "다섯 시간"]),
    "dish": pick(FOODS), "ingredient": pick(["두부", "애호박", "감자", "양파", "버섯", "대파", "돼지고기", "멸치"]),
    "money": pick(["10만 원", "20만 원", "30만 원", "50만 원"]), "years": pick(["1년", "2년", "3년", "5년"]),
    "subject": pick(["영어", "수학", "코딩", "한국사", "일본어", "과학"]),
    "spot": pick(CITIES), "spot2": pick(CITIES), "weekday": pick(["월요일", "수요일", "금요일", "토요일"]),
}
# (label, questions, answers): the label is the category; answers may repeat the question's slots
QA_PAIRS: list[tuple[str, list[str], list[str]]] = [
    ("0", ["{feeling}.", "{feeling}. 어떻게 하죠?", "{feeling}. 조언 좀 해 주세요.", "저 {feeling}. 이상한 걸까요?"],
     ["마음이 많이 힘드셨겠어요. 잠깐 산책하면서 기분을 바꿔 보세요.", "천천히 숨을 고르고 오늘 하루 잘 버틴 자신을 칭찬해 주세요.",
      "혼자 끙끙 앓지 말고 믿을 만한 사람에게 털어놓아 보세요.", "따뜻한 차를 한 잔 마시고 휴대전화는 잠시 내려놓아 보세요.",
      "그런 날도 있어요. 너무 자책하지 마세요.", "좋아하는 음악을 들으면서 마음을 달래 보세요.",
      "작은 일부터 하나씩 해 보면 조금씩 나아질 거예요.", "충분히 잘하고 계세요. 조금 쉬어 가도 괜찮아요."]),
    ("1", ["{doc_kind:은} 어디서 뗄 수 있나요?", "{doc_kind} 발급하려면 뭐가 필요해요?", "{doc_kind:을} 온라인으로 받을 수 있나요?",
           "{doc_kind} 떼러 {office}에 가야 하나요?", "{weekday}에도 {doc_kind} 발급이 되나요?"],
     ["가까운 {office}에서 신분증을 가지고 가시면 바로 {doc_kind:을} 발급받을 수 있습니다.",
      "정부 누리집에 로그인하시면 {doc_kind:은} 온라인으로도 발급이 가능합니다. 자세한 내용은 {url:을} 참고하세요.",
      "무인 민원 발급기를 이용하시면 수수료가 조금 더 저렴합니다.", "대리 발급은 위임장과 대리인 신분증이 필요합니다.",
      "{office} 운영 시간은 평일 오전 9시부터 오후 6시까지입니다.", "{doc_kind} 발급 수수료는 한 통에 수백 원 정도입니다."]),
    ("2", ["{symptom} 때문에 너무 불편해요.", "{symptom:이} {days}째 계속되는데 병원에 가야 할까요?", "{symptom}에 좋은 음식이 있나요?",
           "아침마다 {symptom:이} 심해요.", "{symptom:이} 있을 때 먹으면 안 되는 게 있나요?"],
     ["{symptom:이} {days} 넘게 계속되면 가까운 병원에서 진료를 받아 보시는 게 좋습니다.",
      "충분히 쉬고 물을 자주 마시는 것이 도움이 됩니다.", "규칙적인 생활과 가벼운 스트레칭을 꾸준히 해 보세요.",
      "증상이 심해지면 참지 마시고 전문의와 상담하세요.", "{symptom}에는 카페인과 술을 줄이는 것이 좋습니다.",
      "따뜻한 찜질이 {symptom:을} 덜어 주기도 합니다."]),
    ("3", ["{device:이} {problem}.", "{device:이} {problem}. 고칠 방법이 있을까요?", "새로 산 {device:이} {problem}.",
           "산 지 {years} 된 {device:이} {problem}."],
     ["먼저 {device} 전원을 완전히 껐다가 다시 켜 보세요.", "{device}에 최신 업데이트가 설치되어 있는지 확인해 보세요.",
      "증상이 계속되면 고객센터({center})로 문의하시면 점검을 받을 수 있습니다.",
      "보증 기간 안이라면 {device:을} 무상으로 수리받을 수 있습니다.", "설정에서 초기화를 해 보시는 것도 방법입니다.",
      "{years} 넘게 쓰셨다면 배터리를 바꿀 때가 된 것 같습니다."]),
    ("4", ["계좌 {account:으로} 보냈는데 입금이 안 됐대요.", "카드번호 {card:으로} 결제했는데 두 번 청구됐어요.",
           "차량번호 {vehicle:인데} 과태료 조회가 안 돼요.", "여권번호 {passport:으로} 항공권을 예약했는데 영문 이름이 틀렸어요.",
           "운전면허번호 {license:으로} 적성검사 예약이 안 돼요.", "외국인등록번호 {frn:으로} 본인 인증이 안 됩니다.",
           "주민등록번호 {rrn} 넣었는데 본인 확인이 안 된다고 나와요.",
           "사업자등록번호 {business_reg:으로} 세금계산서 발행이 안 돼요."],
     ["번거로우시겠지만 해당 기관 고객센터({center})로 직접 문의해 보세요.",
      "개인정보가 담긴 번호는 게시판에 올리지 않는 것이 안전합니다. 담당 부서에 직접 확인하세요.",
      "처리까지 영업일 기준 사흘 정도 걸릴 수 있으니 조금 기다려 보세요.",
      "담당자 이메일({email})로 관련 서류를 보내 주시면 확인해 드립니다.",
      "입력하신 번호에 띄어쓰기나 하이픈이 들어가 있지 않은지 확인해 보세요."]),
    ("5", ["{spot}에서 {spot2}까지 {transport:으로} 얼마나 걸려요?", "{spot2} 가는 {transport} 예매는 어떻게 하나요?",
           "{weekday}에 {spot2} 가려는데 {transport:이} 나을까요?"],
     ["{transport:으로} 가시면 보통 {hours} 정도 걸립니다.", "명절이나 주말에는 한 달 전에 예매하시는 게 좋습니다.",
      "{spot2}에 도착해서는 시내버스를 타시면 편합니다.", "요금은 시간대와 좌석 등급에 따라 달라집니다.",
      "{weekday}에는 비교적 한산한 편입니다."]),
    ("6", ["{dish} 맛있게 만드는 법 알려 주세요.", "{dish}에 {ingredient:을} 넣어도 되나요?", "{dish} 만들 때 간은 뭘로 하세요?"],
     ["{ingredient:은} 마지막에 넣어야 식감이 살아요.", "{dish:은} 재료를 먼저 볶은 뒤 물을 붓고 끓이면 맛이 깊어집니다.",
      "간장과 소금을 반씩 쓰면 간이 잘 맞아요.", "센 불에서 한 번 끓어오르면 약한 불로 줄여 주세요.",
      "{ingredient:을} 넣으면 단맛이 더해져서 잘 어울립니다."]),
    ("7", ["매달 {money}씩 {years} 모으려면 적금이 나을까요?", "예금이랑 적금 중에 뭐가 좋아요?",
           "{years} 뒤에 쓸 돈 {money} 정도를 어디에 넣어 두면 좋을까요?"],
     ["목돈이 이미 있다면 예금, 매달 모으신다면 적금이 알맞습니다.", "금리는 은행마다 다르니 비교해 보고 고르세요.",
      "{years} 안에 쓰실 돈이라면 원금이 보장되는 상품이 안전합니다.", "중도에 해지하면 이자가 크게 줄어드니 주의하세요."]),
    ("8", ["{subject} 공부는 어떻게 시작하면 좋을까요?", "{subject} 점수가 안 올라요.", "{subject} 인강 추천해 주세요."],
     ["{subject:은} 기초 개념부터 차근차근 다지는 것이 중요합니다.", "하루에 조금씩이라도 꾸준히 하는 습관이 제일 중요해요.",
      "틀린 문제를 다시 풀어 보는 오답 노트를 만들어 보세요.", "무료 강의부터 들어 보고 맞는 선생님을 찾아보세요."]),
]
QA_OPEN = ["안녕하세요.", "좋은 질문이에요.", "답변드립니다.", "저도 같은 경험이 있어요.", "많이 답답하셨겠어요.", "제 경험을 말씀드릴게요.",
           "간단히 정리해 드릴게요."]
QA_CLOSE = ["도움이 되셨으면 좋겠어요.", "힘내세요!", "참고하세요.", "잘 해결되길 바랍니다.", "궁금한 점 있으면 또 물어보세요.",
            "좋은 하루 보내세요."]


def _qa(rng: random.Random) -> CorpusDoc:
    label, questions, answers = rng.choice(QA_PAIRS)
    fill = _r(rng, QA_EXTRA)
    q = render(rng.choice(questions), fill)
    parts = [render(t, fill) for t in rng.sample(answers, rng.randint(1, 3))]
    if chance(rng, 0.4):
        parts.insert(0, _plain(rng.choice(QA_OPEN)))
    if chance(rng, 0.4):
        parts.append(_plain(rng.choice(QA_CLOSE)))
    a = join(parts, " ")
    return CorpusDoc(join([q, a], "\n"), {"Q": q.text, "A": a.text, "label": label})


def qa(rng: random.Random, planted: list[tuple[str, str]], n: int) -> list[CorpusDoc]:
    """Question and answer pairs (csv: Q, A, label; the document is Q and A joined by a newline): everyday
    worries, civil-service and health questions, device trouble, questions that paste an account, card or
    plate number; repeated pairs; planted benchmark sentences in answers."""
    out: list[CorpusDoc] = []
    seen: dict[str, CorpusDoc] = {}
    for i in range(n):
        d = _qa(rng)
        if d.text in seen:
            d.kind, d.note, d.of = "duplicate", "the same pair asked again", seen[d.text]
        seen.setdefault(d.text, d)
        out.append(d)
        if i % 45 == 12:
            out.append(CorpusDoc(_plain("ㅇㅇ\n네"), {"Q": "ㅇㅇ", "A": "네", "label": "0"}, "junk", "too short"))
    for j, (bench, sentence) in enumerate(planted):
        q = "이 문장 맞춤법 맞나요?"
        doc = Doc().add(q + "\n").add(sentence).add(" 맞춤법에 맞게 잘 쓰셨습니다.")
        a = doc.text.split("\n", 1)[1]
        out.insert(len(out) * (j + 1) // (len(planted) + 1),
                   CorpusDoc(doc, {"Q": q, "A": a, "label": "0"}, "contaminated", bench))
    return out


# ============================================================================================== official/*.txt
OFFICIAL_EXTRA: dict[str, Filler] = {
    "agency": pick(["한빛시청", "누리구청", "가온군청", "새솔시 교육지원청", "바다시 보건소"]),
    "division": pick(["민원봉사과", "교통행정과", "복지정책과", "세무과", "환경위생과", "정보통신과"]),
    "receiver": pick(["각 읍면동장", "관내 초중고등학교장", "관내 사회복지시설장", "관련 업체 대표", "각 부서장"]),
    "ref_no": lambda rng: f"{rng.choice(['민원', '복지', '교통', '세무'])}-{rng.randint(1000, 9999)}",
    "deadline": lambda rng: f"2024. {rng.randint(1, 12)}. {rng.randint(1, 28)}.", "subsidy": number(50, 900, "{:,}만 원"),
    "receipt": lambda rng: f"2024-{rng.randint(100000, 999999)}",
}
GONGMUN = {
    "보조금 교부 안내": ["2024년도 지역 공동체 활성화 사업 보조금을 아래와 같이 교부합니다.",
                   "가. 교부 금액: {subsidy}", "나. 입금 계좌: {branch} {account} (예금주 {company})",
                   "다. 사업자등록번호: {business_reg}, 법인등록번호: {corp_reg}",
                   "보조금은 교부 목적 외의 용도로 사용할 수 없으며, 사업이 끝나면 정산 보고서를 제출하여야 합니다."],
    "개인정보 보호 교육 실시": ["개인정보 보호 의식을 높이기 위하여 전 직원을 대상으로 온라인 교육을 실시합니다.",
                       "가. 교육 기간: {deadline}까지", "나. 교육 방법: 누리집({url}) 접속 후 수강",
                       "다. 접속 오류가 있으면 접속 IP {ip:과} 함께 정보통신과로 알려 주시기 바랍니다.",
                       "교육을 이수하지 않은 직원은 다음 달에 집합 교육을 받아야 합니다."],
    "공용 차량 점검 결과 통보": ["상반기 공용 차량 안전 점검 결과를 아래와 같이 알려 드립니다.",
                        "가. 점검 차량: {vehicle} 외 {num}대", "나. 주요 지적 사항: 타이어 마모, 브레이크 패드 교체 필요",
                        "다. 조치 기한: {deadline}", "지적 사항을 조치한 뒤 결과를 사진과 함께 제출하여 주시기 바랍니다."],
    "물품 구매 계약 체결 알림": ["아래와 같이 물품 구매 계약을 체결하였음을 알려 드립니다.",
                      "가. 계약 상대자: {company} (대표 {person2})", "나. 사업자등록번호: {business_reg}",
                      "다. 법인등록번호: {corp_reg}", "라. 대금 지급 계좌: {branch} {account}",
                      "계약 이행 과정에서 문제가 생기면 계약 부서로 즉시 알려 주시기 바랍니다."],
    "행사 협조 요청": ["시민의 날 기념행사를 아래와 같이 개최하오니 협조하여 주시기 바랍니다.",
                 "가. 일시: {deadline} 오후 2시", "나. 장소: {address} 시민광장",
                 "다. 협조 사항: 행사 당일 교통 안내 인력 지원", "행사 당일 우천 시에는 실내 체육관으로 장소가 변경됩니다."],
}
MINWON = {
    "불법 주정차 단속 문의": ("귀하의 차량({vehicle})이 단속된 장소가 주정차 금지 구역이 맞는지 문의하셨습니다.",
                      ["현장 확인 결과 해당 장소는 소화전 주변 5미터 이내로 주정차가 금지된 구역입니다.",
                       "단속 당시 사진을 첨부하오니 참고하여 주시기 바랍니다.",
                       "과태료에 이의가 있으시면 고지서를 받은 날부터 60일 안에 의견을 제출하실 수 있습니다."]),
    "여권 재발급 신청": ("분실한 여권(여권번호 {passport})의 재발급 절차를 문의하셨습니다.",
                   ["분실 신고가 접수된 여권은 다시 사용할 수 없으며, 새 여권을 신청하셔야 합니다.",
                    "신청 시 신분증과 여권용 사진 한 장을 지참하여 주시기 바랍니다.",
                    "발급까지는 보통 일주일 정도 걸립니다."]),
    "운전면허 적성검사 기간 문의": ("운전면허(면허번호 {license})의 적성검사 기간을 문의하셨습니다.",
                         ["귀하의 적성검사 기간은 올해 12월 31일까지입니다.",
                          "기간 안에 검사를 받지 않으면 과태료가 부과될 수 있습니다.",
                          "가까운 운전면허시험장이나 경찰서에서 검사를 받으실 수 있습니다."]),
    "건강보험료 조정 신청": ("건강보험증 번호 {insurance}, 주민등록번호 {rrn:으로} 보험료 조정을 신청하셨습니다.",
                     ["제출하신 소득 자료를 검토한 결과 다음 달부터 보험료가 조정됩니다.",
                      "이미 납부하신 금액 가운데 초과분은 환급해 드립니다.",
                      "환급금은 신청하신 계좌({branch} {account})로 입금됩니다."]),
    "외국인 체류 기간 연장": ("외국인등록번호 {frn:으로} 체류 기간 연장 방법을 문의하셨습니다.",
                      ["체류 기간이 끝나기 전에 출입국 관리 사무소를 방문하여 연장 신청을 하셔야 합니다.",
                       "신청 시 여권과 외국인등록증, 재직 증명서를 지참하여 주시기 바랍니다.",
                       "온라인 사전 예약을 하시면 대기 시간을 줄일 수 있습니다."]),
    "카드 이중 결제 환불 요청": ("수수료를 납부하면서 카드({card})가 두 번 결제되었다고 알려 주셨습니다.",
                        ["확인 결과 같은 금액이 두 번 승인된 사실이 확인되었습니다.",
                         "한 건은 승인을 취소하였으며, 카드사 사정에 따라 사흘에서 닷새 뒤에 반영됩니다.",
                         "불편을 드려 죄송합니다."]),
    "홈페이지 개인정보 노출 신고": ("누리집 게시판에 개인정보가 노출되었다고 신고하셨습니다(접속 IP {ip}).",
                          ["해당 게시물은 즉시 비공개 처리하였습니다.",
                           "게시판에 글을 올릴 때 개인정보가 자동으로 가려지도록 기능을 개선하겠습니다.",
                           "신고해 주셔서 감사합니다."]),
}


def _gongmun(rng: random.Random, subject: str) -> CorpusDoc:
    fill = _r(rng, OFFICIAL_EXTRA)
    lines = ["{agency}", "수신: {receiver}", "(경유)", f"제목: {subject}", "",
             "1. 귀 기관의 무궁한 발전을 기원합니다.", "2. 관련: {agency} {division}-{num}호",
             "3. " + GONGMUN[subject][0], *["  " + x for x in GONGMUN[subject][1:-1]], "4. " + GONGMUN[subject][-1],
             "", "붙임: 관련 자료 1부.  끝.", "", "{agency}장",
             "담당자 {person} 주무관  전화 {phone}  팩스 {fax}", "이메일 {email}", "주소 {address}", "누리집 {url}"]
    return CorpusDoc(join(_sentences(fill, lines), "\n").add("\n"), {"kind": "공문", "subject": subject})


def _minwon(rng: random.Random, subject: str) -> CorpusDoc:
    fill = _r(rng, OFFICIAL_EXTRA)
    gist, results = MINWON[subject]
    lines = ["민원 답변서", "", "접수번호: {receipt}", f"민원 제목: {subject}", "민원인: {person2} 님",
             "연락처: {phone2}", "주소: {address}", "",
             "1. 안녕하십니까? {agency} {division}입니다. 귀하께서 신청하신 민원에 대한 검토 결과를 다음과 같이 알려 드립니다.",
             "2. 민원 요지: " + gist, "3. 검토 결과", *["  " + r for r in results],
             "4. 기타 궁금하신 사항은 담당자({person} 주무관, 전화 {phone})에게 연락 주시면 친절히 안내해 드리겠습니다. 감사합니다.",
             "", "{agency}장"]
    return CorpusDoc(join(_sentences(fill, lines), "\n").add("\n"), {"kind": "민원 답변", "subject": subject})


def official(rng: random.Random, n_gongmun: int, n_minwon: int) -> list[tuple[str, CorpusDoc]]:
    """(file name, document): official letters (공문) and answers to civil complaints (민원 답변), one a file, full of
    contact and identity details; one letter sent twice (exact) and one to a second receiver (near)."""
    out: list[tuple[str, CorpusDoc]] = []
    subjects = list(GONGMUN)
    for i in range(n_gongmun):
        out.append((f"gongmun_{i + 1:03d}.txt", _gongmun(rng, subjects[i % len(subjects)])))
    m_subjects = list(MINWON)
    for i in range(n_minwon):
        out.append((f"minwon_{i + 1:03d}.txt", _minwon(rng, m_subjects[i % len(m_subjects)])))
    first, second = out[2][1], out[5][1]
    out.append((f"gongmun_{n_gongmun + 1:03d}.txt", _copy(first, "the same letter filed twice")))
    receiver = next(ln for ln in second.text.split("\n") if ln.startswith("수신: "))
    doc = Doc().add(second.text.replace(receiver, "수신: 관내 공공기관장", 1))
    shift = len("수신: 관내 공공기관장") - len(receiver)
    at = second.text.index(receiver)
    doc.spans = [s if s.start < at else type(s)(s.label, s.start + shift, s.end + shift, s.text)
                 for s in second.doc.spans]
    out.append((f"gongmun_{n_gongmun + 2:03d}.txt",
                CorpusDoc(doc, dict(second.fields), "near_duplicate", "the same letter to another receiver", second)))
    return out

