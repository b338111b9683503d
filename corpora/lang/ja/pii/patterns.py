"""Japanese pattern recognizers: phone and fax numbers, postal codes, My Number, corporate numbers, addresses.

Sources of the formats:
- Phone numbers: 総務省「電気通信番号計画」(令和元年総務省告示第6号) and its summary 「電話番号に関するQ&A」.
  Domestic numbers open with the trunk prefix 0. Fixed lines have ten digits: an area code (市外局番, 0 and
  one to four digits) and a local exchange (市内局番) of six digits together, then a four-digit subscriber
  number (03-1234-5678, 045-123-4567, 0466-12-3456, 01267-1-2345). Mobile and PHS numbers (070, 080, 090) and
  IP phones (050) have eleven: 0A0-XXXX-XXXX; M2M numbers (020) too. Free dial is 0120 + six digits
  (0120-XXX-XXX) or 0800 + seven, navi dial 0570 + six. From abroad: +81 and the number without its 0.
- Postal codes: 日本郵便「郵便番号」, seven digits written NNN-NNNN, after the postal mark 〒.
- My Number (個人番号): 12 digits, the last a check digit computed by 行政手続における特定の個人を識別する
  ための番号の利用等に関する法律施行令 第8条 (11 − Σ Pn×Qn mod 11, weights Qn = n+1 for n ≤ 6 and n−5
  for n ≥ 7, 0 when the remainder is 0 or 1); every issued number satisfies it. python-stdnum `jp.in_`.
- Corporate number (法人番号): 13 digits, a check digit first, then the 12-digit base
  (法人番号の指定等に関する省令 第2条: 9 − Σ Pn×Qn mod 9, Qn = 1 for odd n and 2 for even n); python-stdnum
  `jp.cn`. The qualified-invoice registration number (適格請求書発行事業者登録番号, 消費税法 第57条の2) is "T"
  and a corporate number for a corporation, "T" and 13 digits with the same check digit for a sole trader. The
  会社法人等番号 of the commercial registry (商業登記規則 第1条の2) is 12 digits, 4-2-6, with no check digit.
- Addresses: 都道府県 (the 47 of 地方自治法), 郡, 市区町村 (a 政令指定都市 adds its 区), then the 町域 (町名,
  大字, 字) and the 住居表示 (住居表示に関する法律: 街区符号 and 住居番号, with 丁目: `3丁目1番1号`, `3-1-1`) or
  the 地番 (`1323番地`), Sapporo's and Asahikawa's 条・丁目 (`北1条西2丁目`), then a building and a room.

The corpus is NFKC-normalized for Japanese, but detection should not depend on it: `fold` maps full-width
ASCII (digits, letters, `（）－＋＠：`) to ASCII and a dash or long-vowel mark between two digits (`03ー1234ー5678`)
to a hyphen, one character for one, so the patterns below are written in ASCII and offsets need no mapping.
"""

from __future__ import annotations

import re

from stdnum.jp import cn as jp_cn
from stdnum.jp import in_ as jp_in

from corpora.pii import validators as v
from corpora.pii.common import LA, LB, SURE, D, PiiPatternRecognizer, pattern

LANG = "ja"

# ---- folding ------------------------------------------------------------------------------------------------
_WIDTH = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)}  # ！..～ -> !..~ (the full-width ASCII block)
_DASHES = "‐‑‒–—―−ーｰ"  # hyphen, dashes, minus sign, the long-vowel marks typed for a hyphen
_DASH_BETWEEN_DIGITS = re.compile(f"(?<=[0-9])[{_DASHES}](?=[0-9])")


def fold(text: str) -> str:
    """`text` with full-width ASCII made ASCII and a dash between digits made '-'; the same length, so every
    offset into the result is an offset into `text`. Idempotent."""
    if text.isascii():
        return text
    text = text.translate(_WIDTH)
    if any(c in text for c in _DASHES):
        text = _DASH_BETWEEN_DIGITS.sub("-", text)
    return text


# ---- phone and fax ------------------------------------------------------------------------------------------
# Not inside a longer number or code (`ABC-03-1234-5678`, `12-03-...`), but right after TEL / FAX (℡ is TEL
# after NFKC, so `TEL03-1234-5678` occurs) and after `TEL.`, `Tel:`.
PLB = r"(?:(?<![0-9A-Za-z])|(?<=TEL|Tel|tel|FAX|Fax|fax))(?<![0-9][-.])(?<![A-Za-z]-)"
# Area code (with its 0), then a separator, a closing bracket, or an opening one that wraps the exchange:
# 03-, 03 , (03), 03), 03(1234)5678.
_G1 = rf"(?:\(0{D}{{1,4}}\)[ ]?|0{D}{{1,4}}(?:[-. ]|\)[ ]?|(?=\()))"
_G2 = rf"(?:\({D}{{1,4}}\)[ ]?|{D}{{1,4}}[-. ])"
GROUPED = rf"{_G1}{_G2}{D}{{4}}"
FREE = rf"(?:0120[-. ]?{D}{{3}}[-. ]?{D}{{3}}|0800[-. ]?{D}{{3}}[-. ]?{D}{{4}}|0570[-. ]?{D}{{3}}[-. ]?{D}{{3}})"
INTL = rf"\+81[-. ]?(?:\(0\)[ ]?)?[1-9]{D}{{0,3}}[-. ]?{D}{{1,4}}[-. ]?{D}{{4}}"
MOBILE_BARE = rf"0[25789]0{D}{{8}}"
FIXED_BARE = rf"0[1-9]{D}{{8}}"
PHONE_ANY = rf"(?:{INTL}|{FREE}|{GROUPED}|{MOBILE_BARE}|{FIXED_BARE})"
ELEVEN_DIGIT_PREFIXES = ("020", "050", "070", "080", "090", "0800")
# Context words are matched case-insensitively (context.py): TEL covers Tel and tel.
PHONE_CONTEXT = ["電話", "TEL", "℡", "☎", "携帯", "連絡先", "問い合わせ", "問合せ", "問合わせ", "お問合せ", "直通",
                 "ダイヤル", "コールセンター"]
# A product code printed like a phone number: the same line names it so.
NOT_PHONE = ("品番", "型番", "型式", "製品番号", "商品番号", "商品コード", "部品番号", "ISBN", "JAN", "シリアル")
FAX_KEY = r"(?:FAX|Fax|fax|ファックス|ファクス|ファクシミリ)(?:番号)?[ ]?[.:]?[ ]?"


def phone_ok(t: str) -> bool:
    """Ten digits for a fixed line (0 and a non-zero digit) or free dial / navi dial, eleven for mobile, IP,
    M2M and 0800 numbers; +81 and nine or ten digits (without the trunk 0)."""
    if t.startswith("+"):
        ds = "0" + v.digits(t.replace("(0)", "", 1))[2:]
    else:
        ds = v.digits(t)
    if v.placeholder_digits(t) or v.repeated_digits(ds[1:]) or ds[1] == "0":
        return False
    if len(ds) == 10:
        return True
    return len(ds) == 11 and ds.startswith(ELEVEN_DIGIT_PREFIXES)


def _phone(t: str) -> float:
    """0 for an impossible number; an eleven-digit (mobile, IP phone) number printed in groups is as sure as
    a +81 one; otherwise the pattern's own score (-1)."""
    if not phone_ok(t):
        return 0.0
    return SURE if len(v.digits(t)) == 11 and not t.isdigit() else -1.0


# ---- postal codes -------------------------------------------------------------------------------------------
PREFECTURES = ("北海道", "青森県", "岩手県", "宮城県", "秋田県", "山形県", "福島県", "茨城県", "栃木県", "群馬県",
               "埼玉県", "千葉県", "東京都", "神奈川県", "新潟県", "富山県", "石川県", "福井県", "山梨県", "長野県",
               "岐阜県", "静岡県", "愛知県", "三重県", "滋賀県", "京都府", "大阪府", "兵庫県", "奈良県", "和歌山県",
               "鳥取県", "島根県", "岡山県", "広島県", "山口県", "徳島県", "香川県", "愛媛県", "高知県", "福岡県",
               "佐賀県", "長崎県", "熊本県", "大分県", "宮崎県", "鹿児島県", "沖縄県")
# 京都府 must not be read inside 東京都府中市 (東京都 + 府中市)
PREF = "(?:" + "|".join(("(?<!東)" + p if p == "京都府" else p) for p in PREFECTURES) + ")"
_ZIP = rf"{D}{{3}}-?{D}{{4}}(?![0-9])(?!-[0-9])"
ZIP_LB = r"(?<![0-9A-Za-z])(?<![0-9A-Za-z][-.])"


# ---- My Number and corporate numbers ------------------------------------------------------------------------
def my_number_ok(t: str) -> bool:
    """12 digits with the check digit of 施行令 第8条 (python-stdnum `jp.in_`), and not a dummy (one repeated
    digit: 000000000000 passes the check)."""
    ds = v.digits(t)
    return len(ds) == 12 and not v.repeated_digits(ds) and jp_in.is_valid(ds)


def corporate_number_ok(t: str) -> bool:
    """13 digits, the first the check digit of the other twelve (python-stdnum `jp.cn`)."""
    ds = v.digits(t)
    return len(ds) == 13 and not v.placeholder_digits(ds) and jp_cn.is_valid(ds)


def _my_number(t: str) -> float:
    """A valid 4-4-4 number printed with separators (as on the card) is kept on its shape; twelve bare digits
    with a valid check digit are common enough (one in ten of any twelve digits) that they need a context
    word. A failed check digit is no My Number at all: every issued number has a valid one."""
    if not my_number_ok(t):
        return 0.0
    return -1.0 if any(c in t for c in "- ") else 0.1


def _corporate_number(t: str) -> float:
    """The grouped form 1-2345-6789-0123 (the tax agency's) and the invoice form T+13 are kept on a valid check
    digit; thirteen bare digits need a context word (a JAN bar code passes the check one time in nine)."""
    if not corporate_number_ok(t):
        return 0.0
    if t.startswith("T"):
        return 0.95
    return SURE if "-" in t else -1.0


# Not a part of a longer spaced number either (four groups of a card number: 1234 5678 9012 3456).
NLB = LB + r"(?<![0-9][ ])"
NLA = LA + r"(?![ ][0-9])"
MY_NUMBER_CONTEXT = ["マイナンバー", "個人番号", "マイナ", "通知カード"]
CORPORATE_CONTEXT = ["法人番号", "法人", "登録番号", "インボイス", "適格請求書"]
REGISTRY_CONTEXT = ["会社法人等番号", "会社法人番号", "登記番号"]
NOT_MY_NUMBER = ("法人",)  # 会社法人等番号 is also twelve digits
NOT_CORPORATE = ("JAN", "ISBN", "バーコード", "商品コード", "個人番号", "マイナンバー")

# ---- addresses ----------------------------------------------------------------------------------------------
# Kanji (with 々 〆 ヶ ヵ ケ) and katakana (ニセコ町, 南アルプス市, 虎ノ門): the letters of place names.
KK = "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々〆ヶヵ\u30a1-\u30fa\u30fc]"
# Cities whose names are written in kana (the municipalities of 総務省「全国地方公共団体コード」 with hiragana).
KANA_CITIES = ("いちき串木野", "かすみがうら", "つくばみらい", "ひたちなか", "南さつま", "南あわじ", "伊豆の国", "あきる野",
               "ふじみ野", "さいたま", "つくば", "いわき", "いすみ", "みどり", "さぬき", "かほく", "あわら", "いなべ",
               "みよし", "うきは", "みやま", "えびの", "たつの")
_KANA_CITY = "(?:" + "|".join(KANA_CITIES) + ")市"
SP0 = "[ \u3000]?"
# 郡 (optional) and 市区町村, a designated city's 区 after its 市.
# Not the first character of a word that starts with 市/区 (市街, 市民, 区域, 区間).
_NOT_WORD = "(?!街|民|域|間|画|議|営|政|役所|制)"
MUNI = (rf"(?:{KK}{{1,5}}郡{SP0})?(?:{_KANA_CITY}|{KK}{{1,6}}?(?:市|区|町|村){_NOT_WORD})"
        rf"(?:{KK}{{1,4}}?区{_NOT_WORD})?")
# Without a prefecture, a city or ward: not a word ending in 区/市 that is no municipality (地区, 選挙区, 大都市).
_NOT_MUNI = "(?<!地区|挙区|学区|管区|特区|教区|都市)"
MUNI_CITY = (rf"(?:{_KANA_CITY}|{KK}{{1,5}}?(?:市|区){_NOT_MUNI}{_NOT_WORD})"
             rf"(?:{KK}{{1,4}}?区{_NOT_WORD})?")  # 港区, 大阪市北区
# 町域: place-name letters, with の and が inside (丸の内, 自由が丘, 霞が関) and Kyoto's 上る/下る/入る.
# Greedy: the longest town part after which a number part follows (烏丸通御池上る二条殿町|538).
TOWN = rf"(?:{KK}(?:{KK}|[のがる]){{0,15}})?"
# After a prefecture and a municipality the 町域 may also open with a kana name of three or more letters
# (みなとみらい) that neither opens nor ends with a particle (港区では…, 港区にある…).
_PARTICLE = "[でにはをとへもやのがか]"
TOWN_PREF = rf"(?:{TOWN}|(?!{_PARTICLE})[\u3041-\u3096]{{3,10}}(?<!{_PARTICLE}){KK}{{0,4}})"
NUMK = "(?:[0-9]{1,5}|[一二三四五六七八九十〇]{1,4})"
CHOME = rf"{NUMK}丁目"
BAN = rf"{NUMK}番(?![町丁目])(?:地)?(?:の?{NUMK}号?)?"  # 1番, 1番地, 1番地の2, 1番1号; not 2番町, 3番目
BAN_STRONG = rf"{NUMK}番(?:地(?:の?{NUMK}号?)?|{NUMK}号)"  # 1番地, 1番地の2, 1番1号
GOU = rf"(?<!国道|県道){NUMK}号(?!線)"  # not a route (国道433号)
# 1-1, 1-2-3, 1-2-3-405; not floors (3-7階) or a score or date range
HYPH = r"(?<![約第])[0-9]{1,5}(?:-[0-9]{1,5}){1,3}(?![0-9]|[階年月日時分人位回円])(?:号室|号)?"
# 北1条西2丁目, 南3条, 4条通8丁目 (Sapporo, Asahikawa); a bare 二条 is a street name (Kyoto), not this
JO = rf"(?:[東西南北]{NUMK}条(?:[東西南北]?{NUMK}丁目)?|{NUMK}条通?{NUMK}丁目)"
_AFTER_CHOME = rf"(?:{SP0}(?:{HYPH}|{BAN}|{GOU}|[0-9]{{1,5}}(?![0-9])))?"
STREET = rf"(?:(?:{JO}|{CHOME}){_AFTER_CHOME}|{HYPH}|{BAN}|{GOU})"
# Without a prefecture the number part must be an address's own: 丁目, 条, hyphens, 番地, 番 + 号.
STREET_STRONG = rf"(?:(?:{JO}|{CHOME}){_AFTER_CHOME}|{HYPH}|{BAN_STRONG})"
# A lone lot number (大字軽井沢1323), only after a prefecture, and not a count or a date.
SINGLE = r"(?<![約第])[0-9]{1,5}(?![0-9]|[-.,][0-9]|[年月日時分秒人名件回円万億個歳%位台階期代度系線条丁番号つ])"
BLDG_WORDS = ("ビルディング", "ビル", "庁舎", "マンション", "ハイツ", "タワー", "レジデンス", "コーポ", "アパート", "ヒルズ",
              "プラザ", "センター", "ハウス", "コート", "パレス", "ガーデン", "テラス", "メゾン", "ハイム", "ヴィラ",
              "スクエア", "会館", "荘", "館", "棟", "寮")
# a name ending in a building word (greedy: 六本木ヒルズ森タワー, not 六本木ヒルズ), a katakana tail (タワーズ),
# a wing (2, B, 第二号館)
BLDG = (rf"{SP0}[{KK[1:-1]}A-Za-z0-9・&]{{0,20}}(?:{'|'.join(BLDG_WORDS)})[\u30a1-\u30fa\u30fc]{{0,4}}"
        rf"(?:[0-9A-Z]{{1,3}}(?![0-9階号室])|第?[一二三四五六七八九十]{{1,2}}号?館)?")
ROOM = rf"{SP0}(?:[0-9]{{1,4}}(?:階|F|号室|号)|[A-Z][0-9]{{1,4}}号室|#[0-9]{{1,4}}|B[0-9]{{1,2}}F?)"
DETAIL = rf"(?:{BLDG}(?:{ROOM})?|{ROOM}|-[0-9]{{1,4}}(?:号室|号)?(?![0-9]))?"
ADDRESS_PREF = rf"{PREF}{SP0}{MUNI}{SP0}{TOWN_PREF}{SP0}(?:{STREET}|{SINGLE}){DETAIL}"
ADDRESS_CITY = rf"(?<!{KK}){MUNI_CITY}{SP0}{TOWN}{SP0}{STREET_STRONG}{DETAIL}"
ADDRESS_CONTEXT = ["住所", "所在地", "在住", "本社", "自宅", "送付先", "届け先", "現住所", "居所", "住まい"]
ADDRESS_TRIGGER = re.compile("(?:北海道|[都府県市区])")


_p = pattern


def _r(*args, **kwargs) -> PiiPatternRecognizer:
    return PiiPatternRecognizer(*args, language=LANG, fold=fold, **kwargs)


def build_pattern_recognizers() -> list[PiiPatternRecognizer]:
    """The Japanese pattern recognizers proper to Japan (the shared ones: `common`), in a fixed order."""
    return [
        _r("PHONE", "ja_phone", [
            _p("intl", r"(?<![0-9+])" + INTL + LA, SURE),
            _p("free", PLB + FREE + LA, SURE),
            _p("grouped", PLB + GROUPED + LA, 0.7),
            _p("mobile_bare", PLB + MOBILE_BARE + LA, 0.6),
            # ten bare digits starting with 0: only with a context word (電話, TEL)
            _p("fixed_bare", PLB + FIXED_BARE + LA, 0.1),
        ], PHONE_CONTEXT, rescore=_phone, negative_context=NOT_PHONE, min_run_digits=10),
        # 1.0: the key is definitive, and a tie with a phone reading goes to FAX by type priority
        _r("FAX", "ja_fax", [_p("fax", rf"(?<={FAX_KEY}){PHONE_ANY}" + LA, 1.0)], ["FAX", "ファックス"],
           rescore=lambda t: -1.0 if phone_ok(t) else 0.0, min_run_digits=10),
        _r("POSTAL_CODE", "ja_postal_code", [
            _p("mark", rf"(?<=〒[ \u3000]{{0,2}}){_ZIP}", 0.95),
            _p("label", rf"(?<=(?:郵便番号|郵便|住所|所在地)[ \u3000]{{0,2}}:?[ \u3000]{{0,2}}){_ZIP}", SURE),
            _p("before_prefecture", rf"{ZIP_LB}{D}{{3}}-{D}{{4}}(?=[ \u3000]{{0,2}}{PREF})", SURE),
        ], [], rescore=lambda t: 0.0 if v.placeholder_digits(t) else -1.0, min_run_digits=7),
        _r("MY_NUMBER", "ja_my_number", [
            _p("my_number", NLB + rf"{D}{{4}}[- ]?{D}{{4}}[- ]?{D}{{4}}" + NLA, 0.6),
        ], MY_NUMBER_CONTEXT, rescore=_my_number, negative_context=NOT_MY_NUMBER, min_run_digits=12),
        _r("CORPORATE_NUMBER", "ja_corporate_number", [
            _p("invoice", rf"(?<![0-9A-Za-z])T[ -]?(?:[1-9]{D}{{12}}|[1-9]-{D}{{4}}-{D}{{4}}-{D}{{4}})" + LA, 0.95),
            _p("grouped", NLB + rf"[1-9]-{D}{{4}}-{D}{{4}}-{D}{{4}}" + NLA, SURE),
            _p("bare", NLB + rf"[1-9]{D}{{12}}" + NLA, 0.1),
        ], CORPORATE_CONTEXT, rescore=_corporate_number, negative_context=NOT_CORPORATE, min_run_digits=13),
        # 会社法人等番号 (no check digit): only by its label
        _r("CORPORATE_NUMBER", "ja_company_registry_number", [
            _p("registry", NLB + rf"{D}{{4}}-{D}{{2}}-{D}{{6}}" + NLA, 0.1),
            _p("registry_bare", NLB + rf"{D}{{12}}" + NLA, 0.05),
        ], REGISTRY_CONTEXT, rescore=lambda t: 0.0 if v.placeholder_digits(t) else -1.0, min_run_digits=12),
        _r("ADDRESS", "ja_address", [
            _p("prefecture", ADDRESS_PREF, SURE),
            _p("city", ADDRESS_CITY, 0.6),
        ], ADDRESS_CONTEXT, trigger="address", context_after=True),
    ]
