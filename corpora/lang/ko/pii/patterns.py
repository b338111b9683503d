"""Korean pattern recognizers (presidio `PatternRecognizer`s) for structured identifiers and addresses.

Boundaries are `(?<![0-9])`/`(?![0-9])` rather than `\\b`: Hangul is a word character, so `\\b` fails inside
`010-1234-5678로`. Scores encode how distinctive a shape is on its own; `rescore` applies checksums and
plausibility checks; context words (see context.py) lift shape-only matches over the threshold. Every
quantifier is bounded, so no pattern can backtrack catastrophically.

Each recognizer also names a cheap `trigger` (a digit, '@', '://', ':'), used by the fast detector to scan only
the parts of a document where a match can start (engine.py); presidio's own engine scans everything, which is
what the benchmark compares against.

The language-neutral recognizers (e-mail, URL, IP, card numbers) and the recognizer class live in `common.py`,
shared with the Japanese pack; this module gives them their Korean context words and their place in the order.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import regex

from corpora.pii import validators as v
from corpora.pii.common import (  # noqa: F401  (D, LB, LA, FLAGS, SURE, LIKELY, WEAK: re-exported)
    FLAGS,
    LA,
    LB,
    LIKELY,
    SURE,
    WEAK,
    D,
    PiiPatternRecognizer,
    card_recognizer,
    email_recognizer,
    ip_recognizers,
    pattern,
    url_recognizer,
)

LANG = "ko"

SEP = r"[-. ]"  # one separator between digit groups
# The separator of a resident-number-like pair (6 + 7 digits): a hyphen or dash, spaces allowed around it
# (`900101 - 1234567`, typed or justified forms), or one space.
HY = r"(?:[ ]{0,2}[-‐‑‒–−][ ]{0,2}|[ ])"

MOBILE = rf"(?:01[016789]{SEP}?{D}{{3,4}}{SEP}?{D}{{4}})"
AREA = r"(?:02|0[3-6][1-5]|070|050[0-9]?|080)"
LANDLINE = rf"(?:(?:\({AREA}\)|{AREA}\)?){SEP}?\s?{D}{{3,4}}{SEP}{D}{{4}})"  # (055)813-…, 055)813-…
INTL = rf"(?:\+82{SEP}?\s?(?:\(0\))?(?:1[016789]|2|[3-6][1-5]|70){SEP}?{D}{{3,4}}{SEP}?{D}{{4}})"
# 전국대표번호 (representative numbers; libphonenumber's "universal access numbers"): eight digits, a
# 15YY/16YY/18YY block then four, dialled without an area code.
REP = rf"(?:1[568]{D}{{2}}-{D}{{4}})"
# The blocks assigned: libphonenumber's KR `uan` pattern (python `phonenumbers` 9.0.43, data/region_KR.py:
# 1(?:5(?:22|33|44|66|77|88|99)|6(?:[07]0|44|6[0168]|88)|8(?:00|33|55|77|99))\d{4}), plus 1811 (KCT) and 1555, which
# carriers' listings also name (namu.wiki 전국대표번호, 2025-01-02; telmoa.com/telmoa/1577.php). Only a number whose
# digits also read as a year range (`1588-1673`) is held to them (`_rep_year`).
REP_BLOCKS = ("1522", "1533", "1544", "1555", "1566", "1577", "1588", "1599", "1600", "1644", "1660", "1661", "1666",
              "1668", "1670", "1688", "1800", "1811", "1833", "1855", "1877", "1899")
REP_ASSIGNED = rf"(?:(?:{'|'.join(REP_BLOCKS)})-{D}{{4}})"
# What follows a number that is one to call: an e-mail address's local part and `@`, in the same bracket or list
# (`(1588-1673, minjun@korea.kr)`: the pair a contact line prints), or a call to call (`1588-1673으로 문의`,
# `(1588-1673) 전화`). Bounded to stay within the fast scanner's window after a digit run (engine.MAX_MATCH).
EMAIL_NEXT = r"(?=[ ]{0,2}[,/][ ]{0,2}[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9])"
CALL_NEXT = r"(?=[ ]{0,2}\)?[ ]{0,2}(?:번|번으로|으로|로)?[ ]{0,2}(?:문의|전화|연락))"
PHONE_ANY = rf"(?:{INTL}|{MOBILE}|{LANDLINE})"

# A fax number's key right before it: 팩스, FAX, 전송 (the word official letters print), `Fax.`, `F.`, or a table
# header cell (`<th>팩스</th><td>`).
FAX_KEY = (r"(?:(?:팩스|FAX|Fax|fax|전송)(?:\s?번호)?\.?|F[.:])\s{0,2}[:：)]?\s{0,2}"
           r"(?:</t[hd]>\s{0,2}<t[hd][^<>]{0,20}>\s{0,2})?")

# Where every address pattern starts: each opens with `(?<![가-힣])` and a syllable.
HANGUL_WORD_START = re.compile("(?<![가-힣])[가-힣]")
SIDO_NAMES = ("서울", "부산", "대구", "인천", "광주", "대전", "울산", "세종", "경기", "강원", "충청북", "충청남", "충북", "충남",
              "전라북", "전라남", "전북", "전남", "경상북", "경상남", "경북", "경남", "제주")
SIDO_SUFFIX = "(?:특별시|광역시|특별자치시|특별자치도|도|시)?"
SIDO = f"(?:{'|'.join(SIDO_NAMES)}){SIDO_SUFFIX}"
# Between the parts of an address: one or two spaces, or a line break (an address wrapped in a form or letter).
SP = r"(?:[ \t\u3000]{1,2}|[ \t]?\r?\n[ \t]{0,3})"
# Cities and counties have two or more syllables before 시/군 (당시, 역시, 아군 are words); single-syllable 구
# names are the five directions. 가 only follows a number (종로3가): alone it is the subject particle.
SIGUNGU = r"(?:[가-힣]{2,4}(?:시|군|구)|[중동서남북]구)"
EMD = r"(?:[가-힣]{1,4}[0-9]{0,2}(?:읍|면|동|리)|[가-힣]{1,3}[0-9]{1,2}가)"
# 도로명: a name ending in 대로/로/길, optionally a numbered side road (테헤란로10길, 중앙로12번길, 동일로173가길).
ROAD = rf"[가-힣]{{1,8}}[0-9]{{0,3}}(?:대로|로|길)(?:{SP}?[0-9]{{1,3}}[가-힣]?(?:번)?길)?"
# 건물번호 (road) or 지번 (lot): `지하` before an underground building's number, `산` before a mountain lot.
NUM = r"(?:(?:산|지하)[ ]?)?[0-9]{1,5}(?:-[0-9]{1,4})?(?:번지)?(?![0-9])"
# 상세주소 (도로명주소법 시행령 제3조: 동·층·호) and a building name before it (`, 한빛타워 B동 1203호`).
UNIT = r"(?:[A-Za-z]?[0-9]{1,4}[A-Za-z]?동|[A-Za-z가나다라마바사]동|(?:지하|B)?[0-9]{1,3}층|제?[0-9]{1,5}호)"
BLDG = (r"[가-힣A-Za-z0-9]{1,12}(?:아파트|빌딩|타워|빌라|오피스텔|맨션|센터|상가|프라자|플라자|하이츠|팰리스|캐슬|"
        r"타운|주택|연립|레지던스|스퀘어|시티|오피스|빌)")
UNITS = rf"{UNIT}(?:{SP}?{UNIT}){{0,2}}"
DETAIL = (rf"(?:(?:,{SP}?|{SP})(?:[가-힣A-Za-z0-9]{{2,14}}{SP})?{UNITS}"
          rf"|,{SP}?{BLDG}(?:{SP}{UNITS})?)?")
# 참고항목 in brackets: the legal 동 (and a 공동주택's name after a comma), or the 공동주택's name alone.
REF = (rf"(?:{SP}?\((?:[가-힣]{{1,5}}[0-9]{{0,2}}(?:동|가|리)(?:,{SP}?[^()\n]{{1,30}})?|{BLDG})\))?")
# 세종특별자치시 has no 시·군·구 level: its roads and 읍·면·동 follow the city directly.
ADMIN = rf"(?:(?:{SIDO}{SP})?(?:{SIGUNGU}{SP}){{1,2}}|세종(?:특별자치시|시)?{SP})"
NOT_PERSONAL = ("법인",)  # a 13-digit number labelled as a corporation's is not a person's
NOT_CORPORATE = ("주민", "외국인")  # ... and one labelled as a resident's is not a corporation's
# 운전면허번호: 2-digit region code (11 서울 … 26 울산, 28 경기 북부; 도로교통법 시행규칙 별지 서식), 2-digit year,
# 6-digit serial, 2 check digits; licences issued before the code replaced the name print the region instead.
LICENCE_REGION = ("(?:서울|부산|경기|강원|충북|충남|전북|전남|경북|경남|제주|대구|인천|광주|대전|울산|세종|"
                  "경기남부|경기북부)")
PLATE_REGION = "(?:서울|부산|대구|인천|광주|대전|울산|세종|경기|강원|충북|충남|전북|전남|경북|경남|제주)"
PLATE_HANGUL = "가나다라마거너더러머버서어저고노도로모보소오조구누두루무부수우주아바사자배하허호"


# Optional types (types.OPTIONAL_TYPES). 우편번호 since 2015: five digits, the first two the 시·도 (01–63).
POSTAL = r"(?<![0-9A-Za-z\-.])(?:0[1-9]|[1-5][0-9]|6[0-3])[0-9]{3}(?![0-9가-힣,.\-])"
_DATE = (r"(?:(?:19|20)[0-9]{2}|[0-9]{2})(?:년[ ]?[0-9]{1,2}월[ ]?[0-9]{1,2}일"
         r"|[.\-/][ ]?[0-9]{1,2}[.\-/][ ]?[0-9]{1,2}(?![0-9])\.?)")
BIRTH_KEY = r"(?:생년월일|출생일|생일|출생|DOB)[ ]{0,2}[:：]?[ ]{0,3}"
AGE_RX = (r"(?<![0-9.])(?:만[ ]?)?[0-9]{1,3}[ ]?(?:세|살)(?!기|대|금|트|계|상|부|무|율|입|출|관|수|제|법)"
          r"(?:[ ]?(?:이상|이하|미만|초과))?|(?<![0-9])[1-9]0대(?:[ ]?(?:초반|중반|후반))?(?![가-힣])")

_DATE_VALUE = regex.compile(r"(?:19|20)[0-9]{2}[ ]?[-./]?[ ]?(?:0?[1-9]|1[0-2])[ ]?[-./]?[ ]?(?:0?[1-9]|[12][0-9]|3[01])")
_YEAR_RANGE = regex.compile(r"(1[0-9]{3})-([12][0-9]{3})")
_PHONE_ANY = regex.compile(PHONE_ANY)


def _date_ok(t: str) -> bool:
    ds = v.digits(t)
    return v.birth_date_ok(ds[:6], ds[6])


def _sep_score(t: str) -> float:
    """A 6 + 7 digit number printed with a hyphen or dash is a resident-number layout (SURE); with only a space
    it may be two numbers (LIKELY); 13 bare digits need a context word (WEAK)."""
    if any(c in t for c in "-‐‑‒–−"):
        return SURE
    return LIKELY if " " in t else WEAK


def _rrn(t: str) -> float:
    ds = v.digits(t)
    if ds[6] not in "1234" or not _date_ok(t):
        return 0.0
    if v.rrn_checksum_ok(ds):
        return 1.0
    return _sep_score(t)  # post-2020 numbers have no checksum


def _frn(t: str) -> float:
    ds = v.digits(t)
    if ds[6] not in "5678" or not _date_ok(t):
        return 0.0
    if v.frn_checksum_ok(ds):
        return 1.0
    return _sep_score(t)


def _corp(t: str) -> float:
    """법인등록번호: 4-digit registry office, 2-digit kind, 6-digit serial, check digit. Its first six digits
    often read as a date (1101 11: office 1101, kind 11 = 주식회사), and resident numbers issued since 2020 have
    no checksum, so a resident-number shape stays a resident number unless a 법인 context word says otherwise
    (which also demotes the RRN reading: `NOT_PERSONAL`). Measured on the shared file: preferring the corporate
    checksum instead turned 7 of 76 resident numbers (name, then number in brackets) into corporate ones."""
    ds = v.digits(t)
    if v.placeholder_digits(t):
        return 0.0
    if ds[6] in "12345678" and _date_ok(t):
        return 0.15
    return 0.95 if v.corp_reg_ok(ds) else WEAK


def _brn(t: str) -> float:
    """사업자등록번호: the 3-2-5 layout with a valid check digit is near-certain with hyphens, likely with spaces;
    ten bare digits with one are still common (10 % of any numbers), so they need a 사업자 context word."""
    if v.placeholder_digits(t):
        return 0.0
    ok = v.business_reg_ok(t)
    if "-" in t:
        return 1.0 if ok else WEAK
    if " " in t:
        return LIKELY if ok else 0.05
    return 0.1 if ok else 0.0


def _checksum(ok: Callable[[str], bool], good: float = 1.0, bad: float = WEAK) -> Callable[[str], float]:
    return lambda t: 0.0 if v.placeholder_digits(t) else (good if ok(t) else bad)


def _year_range(t: str) -> bool:
    """`1592-1598`, `1588-1673`: two years, the second at most a century after the first (an era, a reign, a
    life). About 1 % of the representative numbers of a block read so too."""
    m = _YEAR_RANGE.fullmatch(t)
    return m is not None and 0 <= int(m.group(2)) - int(m.group(1)) <= 100


def _phone(t: str) -> float:
    if v.placeholder_digits(t) or _year_range(t):
        return 0.0  # a year range (1592-1598) is not a 15xx/16xx/18xx number here: see `_rep_year`
    return -1.0  # -1: keep the pattern's score


def _rep_year(t: str) -> float:
    """ko_phone_representative reads only what `_phone` drops as a year range: a representative number of an
    assigned block (its patterns) with a phone word before it (its context words), an e-mail address beside it
    (`EMAIL_NEXT`) or a call to call after it (`CALL_NEXT`). Every other number of that shape is ko_phone's."""
    if v.placeholder_digits(t) or not _year_range(t):
        return 0.0
    return -1.0


def _account(t: str) -> float:
    ds = v.digits(t)
    if v.placeholder_digits(t) or not 10 <= len(ds) <= 14:
        return 0.0
    if _PHONE_ANY.fullmatch(t):
        return 0.0  # phone-shaped: the phone recognizer owns it
    return -1.0


# --- Label-anchored identifiers -------------------------------------------------------------------------------
# A label that names one identifier type is evidence enough: the run of digits right after it is that identifier
# even when the run fails the type's shape or checksum. Real documents carry typing and OCR errors that no
# canonical pattern admits: an extra group (`운전면허번호 12-34-56-78-901-23`), a short group
# (`운전면허증(13-05-7788-40)`), a trailing digit (`주민등록번호 900101-1234567-1`). Such a match scores
# LABELLED, below every validated match (checksums: 1.0; printed layouts: SURE) and above a shape that only a
# context word lifts (0.45-0.5: a region's name before a garbled licence is also a bank's, 부산, 광주). A value in
# the type's own canonical shape is left to the type's recognizer (`_labelled_rescore`), so clean text keeps its
# spans and their reasons; the recognizer's name (`ko_labelled_<type>`) is the reason of the rest.
# The label is read where the other recognizers read labels (context.py): right before the value on its line
# (after `:`, `(`, a particle or a table cell boundary), on the line above when the value opens its line (a form
# field), or in the header of the HTML table column holding the value (`ko_labelled_<type>_column`, lifted from
# 0.25 to LABELLED by the label as a context word).
LABELLED = 0.6
BANK = r"(?:[가-힣A-Z]{1,6}(?:은행|뱅크)|새마을금고|우체국|신협|수협|농협)"
# The labels, each specific to one type (a generic 등록번호 or 번호 is no evidence): the pattern before a value,
# and the words that mark a table column's header.
STRONG_LABELS: dict[str, tuple[str, tuple[str, ...]]] = {
    "DRIVER_LICENSE": (r"(?:운전[ ]?면허(?:증|[ ]?번호|증[ ]?번호)|면허[ ]?번호)", ("운전면허", "면허번호", "면허 번호")),
    "RRN": (r"주민(?:등록)?[ ]?번호", ("주민등록번호", "주민번호", "주민등록 번호")),
    "FRN": (r"외국인[ ]?등록[ ]?번호", ("외국인등록번호", "외국인 등록번호", "외국인등록 번호")),
    "PASSPORT": (r"여권[ ]?번호", ("여권번호", "여권 번호")),
    # an account's label may name the bank, or be the bank's name alone (`하나은행 063-058334-28195`)
    "ACCOUNT": (rf"(?:계좌[ ]?번호|계좌|{BANK})(?:[ \t]{{0,2}}[:：][ \t]{{0,2}}{BANK})?",
                ("계좌번호", "계좌 번호", "입금계좌", "환불계좌", "환급계좌")),
    "BUSINESS_REG": (r"사업자[ ]?(?:등록[ ]?)?번호", ("사업자등록번호", "사업자 등록번호", "사업자번호")),
    "CORP_REG": (r"(?:법인[ ]?(?:등록[ ]?)?번호|등록번호[ ]?\(법인\))", ("법인등록번호", "법인 등록번호", "법인번호",
                                                                   "등록번호(법인)")),
    "MEDICAL_INSURANCE": (r"(?:건강[ ]?보험증?|보험증|의료[ ]?보험증?)[ ]?번호",
                          ("건강보험증번호", "건강보험증 번호", "건강보험번호", "보험증번호", "보험증 번호")),
    "CARD": (r"카드(?:[ ]?번호)?", ("카드번호", "카드 번호")),
    "PHONE": (r"(?:전화(?:[ ]?번호)?|휴대[ ]?(?:전화|폰)(?:[ ]?번호)?|핸드폰(?:[ ]?번호)?|연락처|☎|(?i:tel|h\.?p|mobile)\.?"
              r"|(?<![A-Za-z])[TM]\.)",
              ("전화번호", "전화 번호", "휴대폰", "휴대전화", "핸드폰", "연락처")),
    "FAX": (r"(?:팩스(?:[ ]?번호)?|(?i:fax)|전송|(?<![A-Za-z])F[.:])", ("팩스", "FAX", "Fax")),
}
# How many digits a garbled value may hold: the canonical count with room for an extra group (2-3 digits) or a
# lost one. A value that reads as a date (`사업자등록번호 2019.03.01 발급`) is none. Canonical counts: licence 12,
# RRN/FRN/corporate 13, business 10, health insurance 11, passport 8 (after its letter), accounts 10-14, cards 16,
# phones and faxes 9-11.
LABELLED_DIGITS: dict[str, tuple[int, int]] = {
    "DRIVER_LICENSE": (8, 15), "RRN": (11, 16), "FRN": (11, 16), "CORP_REG": (11, 16), "BUSINESS_REG": (8, 13),
    "MEDICAL_INSURANCE": (9, 14), "PASSPORT": (5, 11), "ACCOUNT": (9, 17), "CARD": (13, 19), "PHONE": (8, 14),
    "FAX": (8, 14),
}
# Between a label and its value: a full stop (`Fax.`), spaces, a colon, an opening bracket, a topic particle,
# `#`/`No.`, or the cell
# boundary of a key-value table (`<th>운전면허번호</th><td>`).
LABEL_GAP = (r"\.?[ \t]{0,3}(?:[:：#(（]|은|는|이|가|No\.?)?[ \t]{0,3}"
             r"(?:</t[hd]>[ \t]{0,2}<t[hd][^<>]{0,20}>[ \t]{0,2})?")
# The value: groups of digits joined by one or two dashes, dots or a closing bracket (`052)862-7559`; spaces
# around them allowed) or by one space; a group after a space must not run into a word (`2020년`). Licences may
# open with their region's name (`충북 07-3477-92`). It ends where the digits end. A passport number is letters
# and digits: one or two letters, then digits with at most two more letters among them (`M123A4567`).
_GROUP = r"[0-9]{1,16}"
LABELLED_RUN = (rf"{_GROUP}(?:[ ]?[-.)‐‑‒–−]{{1,2}}[ ]?{_GROUP}|[ ](?={_GROUP}(?![0-9가-힣])){_GROUP}){{0,7}}"
                r"(?![0-9])(?![-.][0-9])")
PASSPORT_RUN = r"[A-Z]{1,2}[0-9]{1,9}(?:[-. ]?[0-9A-Z][0-9]{1,9}){0,2}(?![0-9A-Za-z])(?![-.][0-9])"


def _labelled_rescore(entity: str, canonical: list[PiiPatternRecognizer]) -> Callable[[str], float]:
    """Keep a labelled value of plausible length that is no date and no dummy, and that the type's own
    recognizers do not read: a value in the type's canonical shape (and passing its checks) is theirs, found with
    the label as their context word, so clean text keeps its spans and their reasons."""
    lo, hi = LABELLED_DIGITS[entity]
    own = [(r, p) for r in canonical if r.supported_entities[0] == entity for p in r.patterns]

    def rescore(t: str) -> float:
        n = len(v.digits(t))
        # a dummy value (one repeated digit, 000000-0000000) is none; a garbled one may end in a lone 0
        dummy = v.repeated_digits(t) or set(v.digits(t)[6:]) == {"0"}
        if not lo <= n <= hi or dummy or _DATE_VALUE.fullmatch(t):
            return 0.0
        if any(p.compiled_regex.fullmatch(t) and r.rescore(t, p.score) > 0 for r, p in own):
            return 0.0
        return -1.0
    return rescore


def labelled_recognizers(canonical: list[PiiPatternRecognizer]) -> list[PiiPatternRecognizer]:
    """Two recognizers per type of `STRONG_LABELS`: the label before the value (same line, or the line above a
    value that opens its line), and the label as the header of the value's table column. `canonical`: the
    recognizers of the types' own shapes, which keep the values they read."""
    out: list[PiiPatternRecognizer] = []
    for entity, (label, words) in STRONG_LABELS.items():
        lead = rf"(?:{LICENCE_REGION}[ .\-]?)?" if entity == "DRIVER_LICENSE" else ""
        if entity in ("PHONE", "FAX"):
            lead = r"(?:\+|\((?=[0-9]{2,4}\)))?"  # +82-…, (054) 479-…
        run = PASSPORT_RUN if entity == "PASSPORT" else lead + LABELLED_RUN
        low = entity.lower()
        trigger = re.compile(label)  # stdlib `re`: the fast scanner's trigger scans run 4-5x faster there
        rescore = _labelled_rescore(entity, canonical)
        # a passport's digits may be split by its letters (`M4F9063`): its first run may hold one digit
        lo = 1 if entity == "PASSPORT" else LABELLED_DIGITS[entity][0]
        out.append(KoPatternRecognizer(entity, f"ko_labelled_{low}", [
            _p("label_before", rf"(?<={label}{LABEL_GAP})(?<![0-9A-Za-z]){run}", LABELLED),
            _p("label_above", rf"(?<={label}[ \t:：]{{0,3}}\r?\n[ \t]{{0,8}}){run}", LABELLED),
        ], [], trigger="label", trigger_pattern=trigger, rescore=rescore, min_run_digits=lo,
            lead_chars=6 if lead else 3))
        out.append(KoPatternRecognizer(entity, f"ko_labelled_{low}_column", [
            _p("label_column", rf"(?<=<td[^<>]{{0,40}}>[ \t]{{0,3}}){run}(?=[ \t]{{0,3}}</td>)", 0.25),
        ], list(words), trigger="label_table", trigger_pattern=trigger, rescore=rescore, min_run_digits=lo,
            lead_chars=6 if lead else 3))
    return out


class KoPatternRecognizer(PiiPatternRecognizer):
    """`PiiPatternRecognizer` for Korean (its language preset)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("language", LANG)
        super().__init__(*args, **kwargs)


_p = pattern


def build_pattern_recognizers() -> list[PiiPatternRecognizer]:
    """All Korean pattern recognizers, in a fixed order (the order only matters for ties; see resolve.py)."""
    R = KoPatternRecognizer
    canonical = [
        R("PHONE", "ko_phone", [
            _p("mobile", LB + MOBILE + LA, SURE),
            _p("landline", LB + LANDLINE + LA, 0.7),
            _p("intl", r"(?<![0-9+])" + INTL + LA, SURE),
            _p("representative", LB + REP + LA, 0.45),
        ], ["전화", "연락처", "휴대폰", "핸드폰", "휴대전화", "문의", "tel", "콜센터", "상담"],
          rescore=_phone, min_run_digits=8),
        # A representative number that also reads as a year range (`1588-1673`; `임진왜란(1592-1598)`,
        # `홉스(1588-1679)` are none): an assigned block, and a phone word before it (`고객센터 1588-1673`,
        # `담당자 김민수 과장 (1588-1673`), an e-mail beside it (`(1588-1673, minjun@korea.kr)`) or a call to call
        # after it (`1588-1673으로 문의`). Before issue 49, `_phone` dropped every such number before a context word
        # could count: the scale test's 3 missed phones of 26,365 planted values, `담당자 NAME TITLE (1588-16xx,
        # e-mail)`.
        R("PHONE", "ko_phone_representative", [
            _p("representative_year", LB + REP_ASSIGNED + LA, 0.05),
            _p("representative_year_email", LB + REP_ASSIGNED + LA + EMAIL_NEXT, 0.45),
            _p("representative_year_call", LB + REP_ASSIGNED + LA + CALL_NEXT, 0.45),
        ], ["전화", "연락처", "문의", "콜센터", "고객센터", "상담", "대표번호", "담당자", "tel", "☎"],
          rescore=_rep_year, min_run_digits=8),
        R("PHONE", "ko_phone_short", [
            _p("special", r"(?<![0-9A-Za-z.,\-])(?:1[0-9]{2,3}|02-120)(?=\s|$|[)(,/])", 0.05)],
          ["콜센터", "고객센터", "상담전화", "상담 전화", "대표번호", "신고전화", "긴급전화", "전화:", "전화 ", "상담센터",
           "문의:"],
          context_after=True, context_window=14, min_run_digits=3),
        # 1.0: the key is definitive, and a tie with a phone reading goes to FAX by type priority
        R("FAX", "ko_fax", [_p("fax", rf"(?<={FAX_KEY})(?:{PHONE_ANY})" + LA, 1.0)], ["팩스", "FAX", "Fax"],
          min_run_digits=9),
        R("RRN", "ko_rrn", [_p("rrn", LB + rf"{D}{{6}}{HY}?[1-4]{D}{{6}}" + LA, SURE)],
          ["주민등록", "주민번호", "주민"], rescore=_rrn, negative_context=NOT_PERSONAL, min_run_digits=13),
        R("FRN", "ko_frn", [_p("frn", LB + rf"{D}{{6}}{HY}?[5-8]{D}{{6}}" + LA, SURE)],
          ["외국인등록", "외국인", "등록번호"], rescore=_frn, negative_context=NOT_PERSONAL, min_run_digits=13),
        R("CORP_REG", "ko_corp_reg", [_p("corp", LB + rf"{D}{{6}}{HY}?{D}{{7}}" + LA, WEAK)],
          ["법인등록", "법인번호", "법인", "등록번호(법인)"], rescore=_corp, negative_context=NOT_CORPORATE,
          min_run_digits=13),
        R("BUSINESS_REG", "ko_business_reg", [
            _p("brn", LB + rf"{D}{{3}}(?:[ ]?-[ ]?|[ ]){D}{{2}}(?:[ ]?-[ ]?|[ ]){D}{{5}}" + LA, WEAK),
            _p("brn_bare", LB + rf"{D}{{10}}" + LA, 0.05)],
          ["사업자", "사업자등록", "등록번호", "(주)", "㈜", "주식회사", "상호"], rescore=_brn, min_run_digits=10),
        R("DRIVER_LICENSE", "ko_driver_license", [
            _p("licence", LB + rf"(?:1[1-9]|2[0-8]){SEP}{D}{{2}}{SEP}{D}{{6}}{SEP}{D}{{2}}" + LA, 0.7),
            _p("licence_bare", LB + rf"(?:1[1-9]|2[0-8]){D}{{10}}" + LA, 0.1),
            _p("licence_region", rf"(?<![가-힣]){LICENCE_REGION}[ ]?{D}{{2}}{SEP}?{D}{{6}}{SEP}?{D}{{2}}" + LA, 0.7),
        ], ["운전면허", "면허번호", "면허"], min_run_digits=10, lead_chars=6),
        R("PASSPORT", "ko_passport", [
            _p("passport_old", r"(?<![0-9A-Za-z])[MSRODG][0-9]{8}(?![0-9A-Za-z])", 0.45),
            _p("passport_new", r"(?<![0-9A-Za-z])[MSRODG][0-9]{3}[A-Z][0-9]{4}(?![0-9A-Za-z])", 0.45),
            _p("passport_other", r"(?<![0-9A-Za-z])[A-Z]{1,2}[0-9]{7,8}(?![0-9A-Za-z])", 0.1),
            _p("passport_digits", LB + rf"{D}{{9}}" + LA, 0.1),
        ], ["여권"], min_run_digits=3),
        card_recognizer(LANG, ["카드", "신용카드", "체크카드", "결제"]),
        R("ACCOUNT", "ko_account", [
            _p("account", LB + rf"{D}{{2,6}}-{D}{{2,6}}-{D}{{2,7}}(?:-{D}{{1,3}})?" + LA, 0.15),
            # internet banks print 12-14 bare digits; some write the groups with spaces: a bank word must be near
            _p("account_bare", LB + rf"{D}{{10,14}}" + LA, 0.05),
            _p("account_spaced", LB + rf"{D}{{3,6}} {D}{{2,6}} {D}{{4,7}}" + LA, 0.05)],
          ["계좌", "은행", "예금주", "입금", "농협", "신한", "국민", "우리", "하나", "기업", "새마을", "우체국",
           "카카오뱅크", "토스", "수협", "SC제일", "씨티", "부산", "대구", "경남", "광주", "전북", "제주",
           "케이뱅크", "케뱅", "카뱅", "KB", "IBK", "NH", "신협", "저축은행", "송금", "이체"],
          rescore=_account, min_run_digits=10),
        # 건강보험증 번호: 11 digits (a 1-digit category then 10), printed `1-2345678901` or run together; the
        # shape is common, so only its context words make it one.
        R("MEDICAL_INSURANCE", "ko_health_insurance", [
            _p("nhis", LB + rf"[1-9](?:[ ]?-[ ]?|[ ])?{D}{{10,11}}" + LA, 0.1),
            _p("nhis10", LB + rf"{D}{{10}}" + LA, 0.05)],
          ["건강보험", "보험증", "건보", "의료보험", "피보험자", "증번호", "가입자번호", "요양"], min_run_digits=10),
        R("VEHICLE", "ko_vehicle", [
            _p("plate", rf"(?<![0-9가-힣])(?:{PLATE_REGION}\s?)?{D}{{2,3}}[{PLATE_HANGUL}]\s?{D}{{4}}" + LA
                        + r"(?!\s?(?:억|만|천|원|명|개|건|년|대|회|주(?!차)|일|톤|km|kg))", 0.6)],
          ["차량", "번호판", "자동차", "차번호", "운반차량"], min_run_digits=2),
        email_recognizer(LANG, ["이메일", "메일", "email", "E-mail"]),
        url_recognizer(LANG, ["홈페이지", "사이트", "주소", "링크", "URL"]),
        *ip_recognizers(LANG, ["IP", "아이피", "접속"], ["IP", "아이피", "IPv6"]),
        R("ADDRESS", "ko_address", [
            _p("road", rf"(?<![가-힣]){ADMIN}(?:{EMD}{SP})?{ROAD}{SP}?{NUM}{DETAIL}{REF}", SURE),
            _p("lot", rf"(?<![가-힣]){ADMIN}(?:{EMD}{SP}){{1,2}}{NUM}{DETAIL}{REF}", SURE),
            _p("sido_lot", rf"(?<![가-힣]){SIDO}{SP}{EMD}{SP}{NUM}{DETAIL}{REF}", 0.7),
            _p("area_sido", rf"(?<![가-힣]){SIDO}\s{SIGUNGU}(?:\s{SIGUNGU})?(?:\s{EMD})?(?![가-힣])", 0.45),
            _p("area", rf"(?<![가-힣]){SIGUNGU}\s(?:{SIGUNGU}|{EMD})(?![가-힣])", WEAK),
        ], ["주소", "거주", "소재지", "주거", "자택", "사는", "살고", "거소", "배송지", "현주소", "소재"],
          trigger="address", context_after=True, starts=HANGUL_WORD_START),
        # --- optional types, off unless asked for (engine.build_recognizers) ---
        R("POSTAL_CODE", "ko_postal_code", [_p("postal", POSTAL, 0.05)],
          ["우편번호", "우편", "우)", "(우", "〒", "주소", "특별시", "광역시", "자치시", "자치도", "도 ", "로 ", "길 "],
          context_after=True, min_run_digits=5),
        R("DT_BIRTH", "ko_birth_date", [
            _p("birth_labelled", rf"(?<={BIRTH_KEY}){_DATE}", 0.85),
            _p("birth_saeng", rf"(?<![0-9]){_DATE}(?=생(?!산|활|각|겨|명|성|존))", 0.85),
            _p("birth_year", r"(?<![0-9])(?:19|20)[0-9]{2}년생", 0.85),
            # any date, when its label is near (a table column headed 생년월일, a form field on the line above)
            _p("birth_context", rf"(?<![0-9]){_DATE}", 0.05),
        ], ["생년월일", "출생", "생일", "DOB"], min_run_digits=4),
        R("AGE", "ko_age", [_p("age", AGE_RX, 0.6)], [], min_run_digits=1),
    ]
    return [*canonical, *labelled_recognizers(canonical)]
