"""Synthetic WoS dialogues in the official layout, for developing and testing the DST task where the official
files are absent (the shared data has the ontology's slot names but no dialogues).

Writes `wos-v1.1_train.json`, `wos-v1.1_dev.json` and `ontology.json` (the official 45 "domain-slot" names of
관광, 숙소, 식당, 지하철 and 택시, each with `"none"`, `"dontcare"` and the values used here) to a folder:

    python -m datagen.wos OUT_DIR [--train 3000] [--dev 500] [--seed 0]

Every dialogue is built from templates written for this module (no WoS text is copied; venue names are made
up; subway stations are real Seoul station names). A dialogue visits one to three domains; the user states
constraints in their own words and the state takes the value **as the user wrote it** (a copy mechanism can
find every value in the user's turns), says "상관없어요" for `dontcare`, answers yes/no questions
(`주차 가능`, `흡연 가능`, ...), sometimes changes a value they gave earlier ("아, 지역은 서울 동쪽으로
바꿀게요"), accepts a venue the system offers by repeating its name, books it (day, people, nights or time),
and may ask for a taxi from one venue to another. The state on each user turn is cumulative, as in WoS.

Output is deterministic: the same arguments give the same bytes (each split has its own generator seeded from
`seed` and the split name, so the dev file does not depend on `--train`). Scores on these dialogues say that
the code learns; they are not comparable with published WoS numbers, which need the official files.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

REGIONS = ["서울 중앙", "서울 동쪽", "서울 서쪽", "서울 남쪽", "서울 북쪽"]
PRICES = ["저렴", "적당", "비싼"]
DAYS = ["월요일", "화요일", "수요일", "목요일", "금요일", "토요일", "일요일"]
TYPES = {
    "관광": ["공원", "박물관", "미술관", "궁궐", "공연장", "전통시장", "전망대", "쇼핑몰"],
    "숙소": ["호텔", "게스트 하우스", "호스텔", "모텔", "한옥 스테이"],
    "식당": ["한식당", "양식당", "일식당", "중식당", "분식집", "치킨집", "베이커리", "카페"],
}
NAMES = {
    "관광": ["푸른솔 공원", "한누리 민속 박물관", "별빛 미술관", "청운궁", "소리마당 공연장", "달맞이 전통시장",
           "구름다리 전망대", "새봄 쇼핑몰", "하늘정원", "한강 나루 공원", "옛길 역사관", "물빛 아트센터",
           "은행나무 고궁", "바람언덕 전망대", "도란도란 시장", "누리 과학관"],
    "숙소": ["한빛 호텔", "소나무 게스트 하우스", "달빛 호스텔", "리버사이드 호텔", "골목길 모텔", "청사초롱 한옥",
           "스카이 호텔 서울", "여행자의 집 호스텔", "별보라 게스트 하우스", "그랜드 남산 호텔", "아늑 모텔",
           "다온 한옥 스테이"],
    "식당": ["할매손 국밥", "라 피콜라", "스시 하루", "홍등 반점", "떡볶이 공방", "바삭 치킨", "밀가루 베이커리",
           "커피 한 잔", "정든 한정식", "파스타 공작소", "우동 명가", "만리 향", "김밥 천하", "오븐 앤 브레드"],
}
STATIONS = ["서울역", "시청역", "종각역", "광화문역", "경복궁역", "안국역", "을지로입구역", "동대문역", "왕십리역",
            "건대입구역", "잠실역", "강남역", "교대역", "사당역", "신림역", "여의도역", "당산역", "합정역",
            "홍대입구역", "신촌역", "이대역", "용산역", "삼각지역", "노원역", "수유역", "혜화역", "성수역",
            "고속터미널역"]
PLACES = ["인사동", "명동", "북촌", "이태원", "가로수길", "연남동", "서촌", "대학로"]
TAXI_TYPES = ["일반", "고급", "대형", "모범"]
YESNO = {  # slot -> (phrase asking, user phrase for yes, user phrase for no)
    "관광-경치 좋은": ("경치가 좋은 곳을 원하세요?", "경치 좋은 곳이면 좋겠어요", "경치는 별로 중요하지 않고 경치 좋은 곳은 빼 주세요"),
    "관광-교육적": ("아이들 교육에 도움이 되는 곳을 찾으세요?", "교육적인 곳이면 좋겠어요", "교육적인 곳은 말고요"),
    "관광-도보 가능": ("걸어서 갈 수 있는 곳이어야 하나요?", "걸어서 갈 수 있어야 해요", "도보로는 안 가도 돼요, 걸어서 가는 곳은 빼 주세요"),
    "관광-문화 예술": ("문화 예술 쪽으로 보실까요?", "문화 예술 관련된 곳이 좋아요", "문화 예술 쪽은 아니었으면 해요"),
    "관광-역사적": ("역사적인 장소를 원하세요?", "역사적인 곳이면 좋겠어요", "역사적인 곳은 빼 주세요"),
    "관광-주차 가능": ("주차가 되어야 하나요?", "차를 가져가서 주차가 돼야 해요", "주차 안 되는 곳이어야 해요, 차 없는 거리로요"),
    "숙소-도보 가능": ("역에서 걸어갈 수 있어야 하나요?", "역에서 걸어갈 수 있는 곳이요", "걸어가는 곳은 아니어도 되고 도보 가능한 곳은 빼 주세요"),
    "숙소-수영장 유무": ("수영장이 있어야 하나요?", "수영장이 있었으면 해요", "수영장은 없는 곳이 좋아요"),
    "숙소-스파 유무": ("스파 시설이 필요하세요?", "스파가 있으면 좋겠어요", "스파는 없어도 돼요, 없는 곳으로요"),
    "숙소-인터넷 가능": ("인터넷이 되어야 하나요?", "인터넷은 꼭 돼야 해요", "인터넷은 안 되는 곳으로 할게요"),
    "숙소-조식 가능": ("조식이 포함되어야 하나요?", "조식이 나오는 곳이면 좋겠어요", "조식은 안 나오는 곳으로 해 주세요"),
    "숙소-주차 가능": ("주차가 필요하세요?", "주차가 가능해야 해요", "주차는 안 되는 곳이어도 돼요, 주차 안 되는 곳으로요"),
    "숙소-헬스장 유무": ("헬스장이 있어야 하나요?", "헬스장이 있는 곳이요", "헬스장은 없는 곳으로요"),
    "숙소-흡연 가능": ("흡연이 가능해야 하나요?", "흡연이 가능한 곳이요", "흡연은 안 되는 곳으로 해 주세요"),
    "식당-도보 가능": ("걸어서 갈 수 있는 곳이 좋으세요?", "걸어서 갈 수 있는 곳이요", "걸어가는 곳은 빼 주세요"),
    "식당-야외석 유무": ("야외 자리가 있어야 하나요?", "야외석이 있으면 좋겠어요", "야외석은 없는 곳으로요"),
    "식당-인터넷 가능": ("와이파이가 되어야 하나요?", "인터넷이 되는 곳이어야 해요", "인터넷은 안 돼도 되고 안 되는 곳으로요"),
    "식당-주류 판매": ("술도 파는 곳을 원하세요?", "술도 파는 곳이면 좋겠어요", "술은 안 파는 곳으로 해 주세요"),
    "식당-주차 가능": ("주차가 되어야 하나요?", "주차 가능한 곳으로요", "주차 안 되는 곳도 괜찮고 주차 안 되는 데로요"),
    "식당-흡연 가능": ("흡연석이 필요하세요?", "흡연이 가능한 곳이요", "흡연은 안 되는 곳이 좋아요"),
}
DONTCARE = ["상관없어요", "아무 데나 괜찮아요", "크게 상관없습니다", "어디든 괜찮아요"]
SLOTS = [
    "관광-경치 좋은", "관광-교육적", "관광-도보 가능", "관광-문화 예술", "관광-역사적", "관광-이름", "관광-종류",
    "관광-주차 가능", "관광-지역", "숙소-가격대", "숙소-도보 가능", "숙소-수영장 유무", "숙소-스파 유무",
    "숙소-예약 기간", "숙소-예약 명수", "숙소-예약 요일", "숙소-이름", "숙소-인터넷 가능", "숙소-조식 가능",
    "숙소-종류", "숙소-주차 가능", "숙소-지역", "숙소-헬스장 유무", "숙소-흡연 가능", "식당-가격대", "식당-도보 가능",
    "식당-야외석 유무", "식당-예약 명수", "식당-예약 시간", "식당-예약 요일", "식당-이름", "식당-인터넷 가능",
    "식당-종류", "식당-주류 판매", "식당-주차 가능", "식당-지역", "식당-흡연 가능", "지하철-도착지",
    "지하철-출발 시간", "지하철-출발지", "택시-도착 시간", "택시-도착지", "택시-종류", "택시-출발 시간",
    "택시-출발지",
]  # the official 45 domain-slot pairs (klue/wos/ontology.json)


def _times(first: int, last: int, step: int) -> list[str]:
    return [f"{m // 60:02d}:{m % 60:02d}" for m in range(first * 60, last * 60 + 1, step)]


SUBWAY_TIMES = _times(6, 23, 10)
BOOKING_TIMES = _times(11, 22, 30)
TAXI_TIMES = _times(7, 23, 15)


def _final(word: str) -> bool:
    """Whether the last syllable has a final consonant (Hangul syllables; digits and Latin count as none)."""
    c = word[-1]
    return "가" <= c <= "힣" and (ord(c) - 0xAC00) % 28 != 0


def josa(word: str, with_final: str, without_final: str) -> str:
    """The word with the particle form that fits its last syllable (은/는, 이/가, 을/를, 으로/로, 과/와)."""
    if with_final == "으로" and word[-1:] and "가" <= word[-1] <= "힣" and (ord(word[-1]) - 0xAC00) % 28 == 8:
        return word + "로"  # ㄹ-final: 로
    return word + (with_final if _final(word) else without_final)


def ontology() -> dict[str, list[str]]:
    """Every slot with "none", "dontcare" and the values this generator uses (official layout)."""
    venues = NAMES["관광"] + NAMES["숙소"] + NAMES["식당"]
    values: dict[str, list[str]] = {}
    for slot in SLOTS:
        domain, name = slot.split("-")
        if slot in YESNO:
            vals = ["yes", "no"]
        elif name == "지역":
            vals = REGIONS
        elif name == "가격대":
            vals = PRICES
        elif name == "종류":
            vals = TAXI_TYPES if domain == "택시" else TYPES[domain]
        elif name == "이름":
            vals = NAMES[domain]
        elif name == "예약 요일":
            vals = DAYS
        elif name == "예약 명수":
            vals = [str(n) for n in range(1, 11)]
        elif name == "예약 기간":
            vals = [str(n) for n in range(1, 8)]
        elif name == "예약 시간":
            vals = BOOKING_TIMES
        elif domain == "지하철":
            vals = SUBWAY_TIMES if name == "출발 시간" else STATIONS
        else:  # 택시
            vals = TAXI_TIMES if name.endswith("시간") else venues + STATIONS + PLACES
        values[slot] = ["none", "dontcare", *vals]
    return values


class _Dialogue:
    """A dialogue under construction: alternating user and system turns, the state carried on user turns."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.turns: list[dict[str, Any]] = []
        self.state: dict[str, str] = {}
        self.venues: list[str] = []  # venue names agreed so far (taxi endpoints)

    def user(self, text: str, **updates: str) -> None:
        self.state.update(updates)
        state = [f"{slot}-{value}" for slot, value in self.state.items()]
        self.turns.append({"role": "user", "text": text, "state": state})

    def sys(self, text: str) -> None:
        self.turns.append({"role": "sys", "text": text})

    def dontcare(self, topic: str, slot: str) -> None:
        """The user says any value will do (`지역은 상관없어요.`): the slot takes WoS's "dontcare"."""
        self.user(f"{topic} {self.rng.choice(DONTCARE)}.", **{slot: "dontcare"})

    def answer(self, p_dontcare: float, topic: str, slot: str, values: list[str], template: str) -> None:
        """The user's answer to the system's question about `slot`: "dontcare" with probability `p_dontcare`, else
        one of `values` in `template` (`{}` stands for the value)."""
        if self.rng.random() < p_dontcare:
            self.dontcare(topic, slot)
        else:
            value = self.rng.choice(values)
            self.user(template.format(value), **{slot: value})


def _opening(d: _Dialogue, domain: str, first: bool) -> tuple[str, str]:
    """The user's first request in a domain: area and kind (one may be 'anywhere'); returns (region, kind)."""
    rng = d.rng
    region, kind = rng.choice(REGIONS), rng.choice(TYPES[domain])
    lead = "" if first else rng.choice(["그리고 ", "아 그리고 ", "다른 것도 부탁드릴게요. ", "이제 "])
    what = {"관광": "구경할 만한 ", "숙소": "묵을 ", "식당": "밥 먹을 "}[domain]
    form = rng.random()
    if form < 0.45:
        d.user(f"{lead}{region}에 있는 {josa(kind, '을', '를')} 찾고 있어요.",
               **{f"{domain}-지역": region, f"{domain}-종류": kind})
    elif form < 0.7:
        d.user(f"{lead}{region}에 {what}곳 좀 알려 주세요.", **{f"{domain}-지역": region})
        d.sys(f"어떤 종류를 원하세요? {', '.join(TYPES[domain][:3])} 등이 있습니다.")
        if rng.random() < 0.2:
            d.dontcare("종류는", f"{domain}-종류")
            kind = ""
        else:
            d.user(f"{kind} 쪽으로 보고 싶어요.", **{f"{domain}-종류": kind})
    else:
        d.user(f"{lead}{what}{kind} 추천해 주실 수 있나요?", **{f"{domain}-종류": kind})
        d.sys("원하시는 지역이 있으신가요?")
        if rng.random() < 0.25:
            d.dontcare("지역은", f"{domain}-지역")
            region = ""
        else:
            d.user(f"{josa(region, '이', '가')} 좋겠어요.", **{f"{domain}-지역": region})
    return region, kind


def _venue(d: _Dialogue, domain: str) -> None:
    """관광 / 숙소 / 식당: constraints, an optional change of mind, an offer the user accepts, a booking."""
    rng = d.rng
    region, kind = _opening(d, domain, first=not d.turns)
    if domain in ("숙소", "식당") and rng.random() < 0.7:
        d.sys("가격대는 어느 정도로 생각하고 계세요?")
        r = rng.random()
        if r < 0.2:
            d.dontcare("가격은", f"{domain}-가격대")
        else:
            price = rng.choice(PRICES)
            text = {"저렴": "저렴한 곳이면 좋겠어요.", "적당": "적당한 가격이면 돼요.", "비싼": "비싼 곳도 괜찮아요."}[price]
            d.user(text, **{f"{domain}-가격대": price})
    yesno = [s for s in YESNO if s.startswith(domain)]
    for slot in rng.sample(yesno, rng.randint(0, 2)):
        ask, yes, no = YESNO[slot]
        d.sys(ask)
        r = rng.random()
        if r < 0.55:
            d.user(f"네, {yes}.", **{slot: "yes"})
        elif r < 0.8:
            d.user(f"아니요, {no}.", **{slot: "no"})
        else:
            d.dontcare("그건", slot)
    if region and rng.random() < 0.3:  # a change of mind
        new = rng.choice([r for r in REGIONS if r != region])
        d.sys(f"{region}에서 몇 곳 찾았습니다. 더 원하시는 조건이 있을까요?")
        d.user(rng.choice([f"아, 지역은 {josa(new, '으로', '로')} 바꿀게요.",
                           f"생각해 보니 {josa(new, '이', '가')} 더 편하겠네요. {josa(new, '으로', '로')} 찾아 주세요.",
                           f"죄송한데 {region} 말고 {new}에서 찾아 주세요."]),
               **{f"{domain}-지역": new})
        region = new
    name = rng.choice(NAMES[domain])
    where = f"{region}에서 " if region else ""
    d.sys(f"{josa(name, '은', '는')} 어떠세요? {where}평이 좋은 곳입니다.")
    d.user(rng.choice([f"좋아요, {josa(name, '으로', '로')} 할게요.", f"{name} 괜찮네요. 거기로 정할게요.",
                       f"그럼 {josa(name, '으로', '로')} 부탁드려요."]), **{f"{domain}-이름": name})
    d.venues.append(name)
    if domain == "관광" or rng.random() < 0.35:
        d.sys(rng.choice(["더 필요하신 건 없으세요?", "다른 도움이 필요하신가요?"]))
        return
    d.sys("예약을 도와드릴까요?")
    day, people = rng.choice(DAYS), str(rng.randint(1, 10))
    if domain == "숙소":
        nights = str(rng.randint(1, 7))
        d.user(f"네, {day}부터 {people}명이서 {nights}일 묵을게요.",
               **{"숙소-예약 요일": day, "숙소-예약 명수": people, "숙소-예약 기간": nights})
    else:
        time = rng.choice(BOOKING_TIMES)
        d.user(f"네, {day} {time}에 {people}명 예약해 주세요.",
               **{"식당-예약 요일": day, "식당-예약 시간": time, "식당-예약 명수": people})
        if rng.random() < 0.25:  # a correction of the number of people
            more = str(min(10, int(people) + rng.randint(1, 3)))
            if more != people:
                d.sys(f"{day} {time}, {people}명으로 예약할까요?")
                d.user(f"아, 인원이 늘어서 {more}명으로 바꿔 주세요.", **{"식당-예약 명수": more})
    d.sys(f"예약이 완료되었습니다. 예약 번호는 {rng.randint(10000, 99999)}입니다.")


def _subway(d: _Dialogue) -> None:
    rng = d.rng
    start, end = rng.sample(STATIONS, 2)
    lead = "" if not d.turns else "그리고 "
    d.user(f"{lead}{start}에서 {end}까지 지하철로 가려고 하는데요.", **{"지하철-출발지": start, "지하철-도착지": end})
    d.sys("몇 시쯤 출발하실 예정인가요?")
    d.answer(0.15, "시간은", "지하철-출발 시간", SUBWAY_TIMES, "{}에 출발하려고 해요.")
    d.sys(f"{start}에서 {end}까지 약 {rng.randint(10, 50)}분 걸립니다.")


def _taxi(d: _Dialogue) -> None:
    rng = d.rng
    spots = d.venues + STATIONS[:6] + PLACES
    start = d.venues[-1] if d.venues and rng.random() < 0.6 else rng.choice(spots)
    end = rng.choice([s for s in spots if s != start])
    lead = "" if not d.turns else rng.choice(["그리고 ", "마지막으로 "])
    d.user(f"{lead}{start}에서 {end}까지 가는 택시를 예약하고 싶어요.", **{"택시-출발지": start, "택시-도착지": end})
    d.sys("출발 시간이나 도착 시간을 정해 주시겠어요?")
    time = rng.choice(TAXI_TIMES)
    if rng.random() < 0.5:
        d.user(f"{time}에 출발할게요.", **{"택시-출발 시간": time})
    else:
        d.user(f"{time}까지는 도착해야 해요.", **{"택시-도착 시간": time})
    d.sys("택시 종류는 어떤 걸로 하시겠어요?")
    d.answer(0.3, "종류는", "택시-종류", TAXI_TYPES, "{} 택시로 부탁드려요.")
    d.sys(f"택시 예약되었습니다. 차량 번호는 {rng.randint(1000, 9999)}입니다.")


def dialogue(rng: random.Random, guid: str) -> dict[str, Any]:
    """One dialogue in the official layout: `{"guid", "domains", "dialogue": [{"role", "text", "state"?}]}`."""
    d = _Dialogue(rng)
    venue_domains = rng.sample(["관광", "숙소", "식당"], rng.choice([1, 1, 2, 2, 3]))
    plan = list(venue_domains)
    if rng.random() < 0.3:
        plan.insert(rng.randint(0, len(plan)), "지하철")
    if rng.random() < 0.4:
        plan.append("택시")
    for domain in plan:
        if domain == "지하철":
            _subway(d)
        elif domain == "택시":
            _taxi(d)
        else:
            _venue(d, domain)
    d.user(rng.choice(["감사합니다. 그럼 이만.", "네 그거면 충분해요. 고맙습니다.", "도와주셔서 감사해요."]))
    d.sys(rng.choice(["이용해 주셔서 감사합니다. 좋은 하루 보내세요.", "감사합니다. 즐거운 여행 되세요."]))
    return {"guid": guid, "domains": plan, "dialogue": d.turns}


def dialogues(split: str, n: int, seed: int = 0) -> list[dict[str, Any]]:
    """`n` dialogues of a split, named `wos-v1_{split}_{i:05d}` as the official guids are."""
    rng = random.Random(f"wos-synth:{seed}:{split}")
    return [dialogue(rng, f"wos-v1_{split}_{i:05d}") for i in range(n)]


def validate(dials: list[dict[str, Any]], onto: dict[str, list[str]]) -> list[str]:
    """Problems (empty when none): a state item outside the ontology, a value missing from the ontology's list,
    a copied value absent from every user turn so far, a state that forgets a slot, turns that do not
    alternate."""
    problems = []
    for dial in dials:
        said = ""
        previous: set[str] = set()
        for i, turn in enumerate(dial["dialogue"]):
            role = "user" if i % 2 == 0 else "sys"
            if turn["role"] != role:
                problems.append(f"{dial['guid']}[{i}]: role {turn['role']}, expected {role}")
            if turn["role"] != "user":
                continue
            said += " " + turn["text"]
            slots = set()
            for item in turn["state"]:
                domain, slot, value = item.split("-", 2)
                name = f"{domain}-{slot}"
                slots.add(name)
                if value not in onto.get(name, []):
                    problems.append(f"{dial['guid']}[{i}]: {item!r} not in the ontology")
                if value not in ("dontcare", "yes", "no") and value not in said:
                    problems.append(f"{dial['guid']}[{i}]: value of {item!r} never said by the user")
            if not previous <= slots:
                problems.append(f"{dial['guid']}[{i}]: state drops {sorted(previous - slots)}")
            previous = slots
    return problems


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2) + "\n"


def write(out_dir: Path, n_train: int, n_dev: int, seed: int = 0) -> dict[str, Path]:
    """Writes the three files (train omitted when `n_train` is 0) and returns their paths."""
    from pipeline import io

    out_dir = Path(out_dir)
    onto = ontology()
    paths = {"ontology": out_dir / "ontology.json", "dev": out_dir / "wos-v1.1_dev.json"}
    io.write_text(paths["ontology"], dumps(onto))
    io.write_text(paths["dev"], dumps(dialogues("dev", n_dev, seed)))
    if n_train:
        paths["train"] = out_dir / "wos-v1.1_train.json"
        io.write_text(paths["train"], dumps(dialogues("train", n_train, seed)))
    return paths


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m datagen.wos", description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--train", type=int, default=3000, help="training dialogues (0: no train file)")
    parser.add_argument("--dev", type=int, default=500, help="dev dialogues")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    paths = write(args.out_dir, args.train, args.dev, args.seed)
    print("\n".join(f"{k}: {p}" for k, p in paths.items()))


if __name__ == "__main__":
    main()
