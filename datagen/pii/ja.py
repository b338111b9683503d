"""An independent evaluation set for the Japanese PII detector: synthetic documents with gold spans.

What it is for
--------------
The Japanese detector (corpora/lang/ja/pii) was written against the examples its authors saw, and its recall is
known only from hand-written tests. This module writes documents of the registers where personal data occurs
in Japanese text -- 行政機関からの通知, 賃貸借契約書, 申込書・申請書, ビジネスメール (署名つき), LINE 風の
チャット, 判決文, 議事録, 履歴書, EC の注文確認メール, HTML の表 -- whose values follow the *official formats*
of each identifier, not the detector's patterns, with gold spans for every value. It was written without
reading the detector's rules (patterns, name lists, context words, its tests). The generic machinery -- the
line/segment builder, the hash that splits an open class, the document loop, the digit, IPv4 and URL helpers --
is shared with the Korean generator (datagen/pii/common.py), imported, not copied.

Records: one JSON object per line, `{"id", "genre", "split", "text", "spans": [{"label", "start", "end",
"text"}]}`, character offsets into `text`, end exclusive (`text[start:end] == span["text"]`); the format
`corpora.pii.evaluate.read_gold` reads. Labels are `corpora.lang.ja.PII_TYPES`. Gold is on the raw text:
some numbers and addresses are written in full-width digits (`０３－１２３４－５６７８`; the pipeline applies
NFKC, the gold does not).

What is in a span, and what is not
----------------------------------
- PERSON: the name only -- no honorific (様, さん, 氏, 先生, 殿, くん, ちゃん), no title (部長, 委員, 弁護士),
  no role word (原告, 借主). A full name includes the space between surname and given name when there is
  one (`佐藤 健太`, `佐藤　健太`). A surname alone (`田中様`, `株式会社…の佐藤です`), a given name alone
  (`美咲ちゃん`), the reading in a フリガナ/ふりがな field (`サトウ ケンタ`), a romanised name in a signature
  (`Kenta Sato`) and a chat display name that is a name (`けんた`, `佐藤 美咲`) are PERSON too; an emoji or
  decoration after a display name is outside the span.
- POSTAL_CODE: the digits and the hyphen only; the mark `〒` and the words 郵便番号 are outside.
- ADDRESS: one span from the 都道府県 (or, when the prefecture is left out, the 市区町村) down to the last
  part written: 号, 番地, building name, floor and room (`東京都渋谷区桜丘町1丁目2番3号 サクラビル5階`). The
  postal code is a separate span before it. Every postal address is labelled, whoever it belongs to (a person,
  a company's head office, a city hall).
- PHONE / FAX: the number only (with its +81, parentheses and hyphens); the words TEL, 電話, FAX, ファックス
  are outside. A number is FAX when the word before it is FAX / Fax / ファックス / ファクス / FAX番号 (or it
  is in a table column headed FAX), and PHONE otherwise; no number is written as "TEL/FAX".
- MY_NUMBER: the 12 digits with their separators (`1234 5678 9012`, `1234-5678-9012`, twelve in a row).
- CORPORATE_NUMBER: the 13-digit 法人番号 (`1234567890123`, `1-2345-6789-0123`), and the 12-digit 会社法人等番号
  (`0100-01-123456`). In a 適格請求書発行事業者登録番号 (`T1234567890123`) the span is the 13 digits, not the T.
- CARD, EMAIL, URL, IP: the value as written. A masked card number (`**** **** **** 1234`, `末尾1234`) is not
  labelled.
- Everything else is a negative, planted in every genre: dates (2024年3月1日, 令和6年, R6.3.1), times, prices
  (¥12,800, 1万2千円), 注文番号, 伝票番号, お問い合わせ番号, 型番, ISBN, JAN codes, 法令番号 (平成15年法律第57号),
  事件番号, 免許番号, page numbers, twelve- and thirteen-digit numbers that fail the My Number and 法人番号
  check digits (order, tracking and reference numbers, some written 1234-5678-9012 like a My Number), place
  names used as the names of stations and offices (東京駅, 大阪府警, 横浜市役所), place names outside an
  address (東京都内で), company names, dates of birth and ages (not types of the Japanese detector). No
  famous person is named, and a company is never named after a surname, so a PERSON gold span is never
  arguable.

The two splits
--------------
`dev` is for looking at errors and tuning rules; `heldout` is for the number that is reported, and should be
looked at as little as possible. Every document draws from its own random stream (seeded by the split, the
seed and the document index; document i does not depend on how many are written), and each split draws its
*open-class* values from its own pools: given names (kanji and hiragana), 町名, building names, company names,
e-mail user names and company domains. A value is put in one split by a hash of its key (its romanised
reading for a name, so that 健太 and 賢太, both `kenta`, land together), and any value one split produced
that the other also produced, in any surface form (kanji, kana, romaji), is dropped from both. Closed classes
are shared: the 47 都道府県 and the real 市区町村, surnames (a closed class in Japanese), honorifics and
titles, mail providers, universities, ministries and city halls, and the canonical example names of Japanese
forms (山田 太郎, 山田 花子, 鈴木 一郎).

Sources of the formats
----------------------
- 電話番号 (総務省「電気通信番号計画」, 電気通信番号規則): fixed lines are 10 digits, 0 + 市外局番 + 市内局番 +
  加入者番号 (4 digits), the 市外局番 with its 0 two to five digits long (03 東京, 06 大阪, 045 横浜, 052 名古屋,
  0467 茅ヶ崎, 04992 伊豆大島; a real list below) and the 市内局番 filling up to six digits, never starting with
  0 or 1; mobiles 070/080/090-XXXX-XXXX, IP phones 050-XXXX-XXXX, フリーダイヤル 0120-XXX-XXX and
  0800-XXX-XXXX, ナビダイヤル 0570-XXX-XXX; international +81 with the leading 0 dropped (`+81-3-1234-5678`,
  `+81 90 1234 5678`, `+81-(0)3-1234-5678`). Written with hyphens, with the 市内局番 in parentheses
  (`03(1234)5678`), with the area code in parentheses (`(03)1234-5678`), with spaces, as one run of digits, and
  sometimes in full-width digits (`０３－１２３４－５６７８`).
- 郵便番号 (日本郵便, 7 digits since 1998): NNN-NNNN, the first three digits in the block of the prefecture
  of the address that follows it (東京 100-209, 神奈川 210-259, 大阪 530-599, 北海道 040-099, 沖縄 900-909 ...;
  the blocks below are approximate), after 〒, in a 郵便番号 field, or bare before the address; sometimes in
  full-width digits or as seven digits in a row.
- 個人番号 (マイナンバー): 12 digits, the last a check digit by 行政手続における特定の個人を識別するための番号の
  利用等に関する法律施行令 (平成26年政令第155号) 第8条: 11 − (Σ Pn × Qn mod 11) over the other eleven digits,
  Pn the n-th digit from the right, Qn = n + 1 for n ≤ 6 and n − 5 for n ≥ 7, and 0 when the remainder is 0 or
  1. Written `1234 5678 9012` (as on the card), `1234-5678-9012` or twelve in a row. Every one is checked
  against python-stdnum's `stdnum.jp.in_` by the tests.
- 法人番号 (法人番号の指定等に関する省令 第2条, 国税庁): a check digit, then the 12-digit 基礎番号; the check
  digit is 9 − (Σ Pn × Qn mod 9), Pn the n-th digit of the 基礎番号 from the right, Qn = 1 for odd n and 2 for
  even n. For a registered company the 基礎番号 is its 会社法人等番号 (商業登記規則 (昭和39年法務省令第23号)
  第1条の2): 登記所コード 4 digits (0100 東京法務局, 0104 its 港出張所, ...), the kind 2 digits (01 株式会社,
  02 有限会社, 03 合同会社), a serial 6 digits, written `0100-01-123456`. Checked against `stdnum.jp.cn`.
  A 適格請求書発行事業者登録番号 (消費税法 第57条の2, the インボイス制度 since 2023-10) is T + the 法人番号.
- クレジットカード (ISO/IEC 7812-1): issuer prefixes JCB 3528-3589 (16 digits), Visa 4 (16), Mastercard 51-55
  (16), American Express 34/37 (15, written 4-6-5), Diners Club 36 (14, written 4-6-4); the last digit the
  Luhn check digit (`stdnum.luhn`).
- E-mail (RFC 5322 dot-atom local parts: letters, digits, `. _ - +`): mail providers (gmail.com, yahoo.co.jp,
  docomo.ne.jp, ezweb.ne.jp, softbank.ne.jp, icloud.com, ...), company domains under .co.jp and .jp (invented),
  universities under .ac.jp, ministries under .go.jp, local governments under .lg.jp (real).
  URL (RFC 3986): http and https, with paths and query strings, and `www.` without a scheme. IP: IPv4 dotted
  quads (RFC 791; private ranges of RFC 1918 and public ones) and IPv6 (RFC 4291, full and `::`-compressed,
  RFC 5952 lower case).
- 住所 (住居表示に関する法律 and the 地番 of 不動産登記法): the 47 都道府県 and real 市区町村 of each (the 政令指定
  都市 with their 区, 郡 + 町/村, 東京 23 区), then an invented 町名 and the block: 住居表示 `1丁目2番3号`,
  `二丁目4番9号`, `1-2-3`, `1丁目2-3`; 地番 `1234番地`, `1234番地5`, `1234番地の5`, `大字…1234番地` in 郡 areas;
  札幌's grid `北3条西4丁目1-2`; then sometimes an invented building (`メゾン…`, `…ハイツ`, `…ビル`) with a
  floor or a room (`5階`, `305号室`, `-305`). 市区町村 as of 2024 (浜松市's 区 of 2024-01).
- 人名: surnames from the common-surname frequency rankings (a closed class: 佐藤 鈴木 高橋 田中 伊藤 …,
  270 with their readings); given names built from the usual name elements (健 + 太, 美 + 咲, …) and common
  hiragana names, split between the splits; readings romanised in passport Hepburn (長音 dropped: さとう →
  sato) for e-mail user names and signatures.
- Genres: 公用文 (通知書: 文書番号, 日付, 宛名 + 様, 発信者, 件名, 記, 問い合わせ先), 国土交通省 賃貸住宅標準契約書
  (物件の表示, 契約期間, 賃料, 貸主・借主・連帯保証人, 媒介業者 with 宅地建物取引業 免許番号), 住民票の写し等
  交付申請書 / 扶養控除等(異動)申告書 / 入会申込書, ビジネスメール (宛名, 挨拶, 署名), LINE の「トーク履歴」
  export (`HH:MM<TAB>name<TAB>message`), 民事判決書 (事件番号 令和5年(ワ)第1234号, 当事者, 主文, 事実及び理由),
  会議録 (日時, 場所, 出席者, 発言者), JIS 様式例 の履歴書 (ふりがな, 氏名, 生年月日, 現住所, 学歴・職歴), EC 注文
  確認メール (注文番号, お届け先, 支払方法, 伝票番号, 登録番号), HTML tables (名簿, 取引先一覧, アクセスログ).
"""

from __future__ import annotations

import datetime
import random
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from functools import lru_cache, partial
from typing import NamedTuple

from stdnum import luhn

from datagen.pii import common
from datagen.pii.common import _S, SPLITS, _digits, _Lines, _nz, _Seg, _side, _td, by_cut

GENRES: tuple[str, ...] = ("notice", "lease", "application", "business_mail", "chat", "judgment", "minutes",
                           "resume", "order_mail", "html_table")
LABELS = ("PERSON", "PHONE", "FAX", "MY_NUMBER", "CORPORATE_NUMBER", "POSTAL_CODE", "CARD", "EMAIL", "URL", "IP",
          "ADDRESS")  # corpora.lang.ja.PII_TYPES (the tests check they agree)

# ---------------------------------------------------------------------------------------------------------------
# Check digits (the statutes' formulas; the tests check every value against python-stdnum)
# ---------------------------------------------------------------------------------------------------------------


def my_number_check_digit(body: str) -> str:
    """The 個人番号 check digit of 11 digits (番号法施行令 第8条)."""
    if len(body) != 11 or not body.isdigit():
        raise ValueError(f"need 11 digits, got {body!r}")
    s = sum(int(body[-n]) * (n + 1 if n <= 6 else n - 5) for n in range(1, 12))
    r = s % 11
    return "0" if r <= 1 else str(11 - r)


def corporate_check_digit(base: str) -> str:
    """The 法人番号 check digit (the leading one) of a 12-digit 基礎番号 (法人番号の指定等に関する省令 第2条)."""
    if len(base) != 12 or not base.isdigit():
        raise ValueError(f"need 12 digits, got {base!r}")
    s = sum(int(base[-n]) * (1 if n % 2 else 2) for n in range(1, 13))
    return str(9 - s % 9)


def _ean13_check(body: str) -> str:
    s = sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(body))
    return str(-s % 10)


_ZEN = str.maketrans("0123456789-()+ :", "０１２３４５６７８９－（）＋　：")


def _zen(s: str) -> str:
    """Full-width digits, hyphen, parentheses and spaces (what NFKC folds back)."""
    return s.translate(_ZEN)


_KANJI_NUM = "〇一二三四五六七八九"


_ERAS = ((datetime.date(2019, 5, 1), "令和", "R"), (datetime.date(1989, 1, 8), "平成", "H"),
         (datetime.date(1926, 12, 25), "昭和", "S"))


def _wareki(d: datetime.date, short: bool = False) -> str:
    """The 和暦 date (令和6年3月1日; short: R6.3.1); the first year of an era is 元年."""
    start, name, letter = next(e for e in _ERAS if d >= e[0])
    n = d.year - start.year + 1
    if short:
        return f"{letter}{n}.{d.month}.{d.day}"
    return f"{name}{'元' if n == 1 else n}年{d.month}月{d.day}日"


def _kanji_num(n: int) -> str:
    """1-99 in kanji numerals (二十三)."""
    if n < 10:
        return _KANJI_NUM[n]
    tens, ones = divmod(n, 10)
    return ("" if tens == 1 else _KANJI_NUM[tens]) + "十" + ("" if ones == 0 else _KANJI_NUM[ones])


# ---------------------------------------------------------------------------------------------------------------
# Kana and romaji
# ---------------------------------------------------------------------------------------------------------------

_ROMAJI = dict(zip(
    "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんがぎぐげござじずぜぞ"
    "だぢづでどばびぶべぼぱぴぷぺぽ",
    ("a i u e o ka ki ku ke ko sa shi su se so ta chi tsu te to na ni nu ne no ha hi fu he ho ma mi mu me mo ya "
     "yu yo ra ri ru re ro wa o n ga gi gu ge go za ji zu ze zo da ji zu de do ba bi bu be bo pa pi pu pe po")
    .split(), strict=True))
_YOON = {"ゃ": "a", "ゅ": "u", "ょ": "o"}


def romaji(kana: str) -> str:
    """Passport Hepburn of a hiragana reading, long vowels dropped (さとう -> sato, いのうえ -> inoue)."""
    out: list[str] = []
    i = 0
    double = False
    while i < len(kana):
        ch = kana[i]
        if ch == "っ":
            double = True
            i += 1
            continue
        syl = _ROMAJI[ch]
        if i + 1 < len(kana) and kana[i + 1] in _YOON:
            v = _YOON[kana[i + 1]]
            syl = syl[:-1] + ("y" + v if syl[:-1] not in ("sh", "ch", "j") else v)
            i += 1
        if double and syl[0] not in "aeiou":
            syl = ("t" if syl.startswith("ch") else syl[0]) + syl
        double = False
        out.append(syl)
        i += 1
    return re.sub(r"(o)u(?![aeiou])|(o)o(?![aeiou])|(u)u(?![aeiou])", lambda m: m.group(m.lastindex or 0),
                  "".join(out))


def katakana(kana: str) -> str:
    return "".join(chr(ord(c) + 0x60) if "ぁ" <= c <= "ゖ" else c for c in kana)


# ---------------------------------------------------------------------------------------------------------------
# Closed classes (shared by both splits)
# ---------------------------------------------------------------------------------------------------------------

# 都道府県, the first-three-digit block of its postal codes, real 市区町村 (政令指定都市 with their 区; 郡 + 町/村)
_PREFS: tuple[tuple[str, tuple[int, int], tuple[str, ...]], ...] = (
    ("北海道", (40, 99), ("札幌市中央区", "札幌市北区", "札幌市東区", "札幌市白石区", "札幌市豊平区", "札幌市西区",
                        "札幌市手稲区", "札幌市清田区", "函館市", "旭川市", "小樽市", "釧路市", "帯広市", "北見市",
                        "苫小牧市", "江別市", "千歳市", "虻田郡ニセコ町", "余市郡余市町", "上川郡東川町")),
    ("青森県", (30, 39), ("青森市", "弘前市", "八戸市", "十和田市", "三沢市", "上北郡おいらせ町")),
    ("岩手県", (20, 29), ("盛岡市", "一関市", "奥州市", "花巻市", "北上市", "宮古市", "紫波郡紫波町")),
    ("宮城県", (980, 989), ("仙台市青葉区", "仙台市宮城野区", "仙台市若林区", "仙台市太白区", "仙台市泉区", "石巻市",
                          "大崎市", "名取市", "塩竈市", "宮城郡利府町")),
    ("秋田県", (10, 19), ("秋田市", "横手市", "大仙市", "能代市", "由利本荘市")),
    ("山形県", (990, 999), ("山形市", "鶴岡市", "酒田市", "米沢市", "天童市", "東村山郡山辺町")),
    ("福島県", (960, 979), ("福島市", "郡山市", "いわき市", "会津若松市", "須賀川市")),
    ("茨城県", (300, 319), ("水戸市", "つくば市", "日立市", "ひたちなか市", "土浦市", "古河市", "取手市", "那珂郡東海村")),
    ("栃木県", (320, 329), ("宇都宮市", "小山市", "栃木市", "足利市", "那須塩原市", "佐野市", "那須郡那須町")),
    ("群馬県", (370, 379), ("前橋市", "高崎市", "太田市", "伊勢崎市", "桐生市", "吾妻郡草津町")),
    ("埼玉県", (330, 369), ("さいたま市浦和区", "さいたま市大宮区", "さいたま市中央区", "さいたま市南区", "川口市",
                          "川越市", "所沢市", "越谷市", "草加市", "春日部市", "熊谷市", "入間郡三芳町")),
    ("千葉県", (260, 299), ("千葉市中央区", "千葉市美浜区", "千葉市花見川区", "船橋市", "松戸市", "市川市", "柏市",
                          "浦安市", "習志野市", "成田市", "印旛郡酒々井町")),
    ("東京都", (100, 209), ("千代田区", "中央区", "港区", "新宿区", "文京区", "台東区", "墨田区", "江東区", "品川区",
                          "目黒区", "大田区", "世田谷区", "渋谷区", "中野区", "杉並区", "豊島区", "北区", "荒川区",
                          "板橋区", "練馬区", "足立区", "葛飾区", "江戸川区", "八王子市", "立川市", "武蔵野市",
                          "三鷹市", "府中市", "調布市", "町田市", "国分寺市", "西多摩郡瑞穂町")),
    ("神奈川県", (210, 259), ("横浜市中区", "横浜市西区", "横浜市港北区", "横浜市青葉区", "横浜市都筑区",
                            "横浜市戸塚区", "川崎市川崎区", "川崎市中原区", "川崎市高津区", "相模原市中央区",
                            "相模原市南区", "横須賀市", "藤沢市", "鎌倉市", "茅ヶ崎市", "平塚市", "小田原市", "厚木市",
                            "大和市", "足柄下郡箱根町", "三浦郡葉山町")),
    ("新潟県", (940, 959), ("新潟市中央区", "新潟市東区", "新潟市西区", "長岡市", "上越市", "三条市", "柏崎市",
                          "南魚沼郡湯沢町")),
    ("富山県", (930, 939), ("富山市", "高岡市", "射水市", "砺波市", "中新川郡立山町")),
    ("石川県", (920, 929), ("金沢市", "白山市", "小松市", "加賀市", "七尾市", "河北郡内灘町")),
    ("福井県", (910, 919), ("福井市", "坂井市", "越前市", "敦賀市", "鯖江市")),
    ("山梨県", (400, 409), ("甲府市", "富士吉田市", "甲斐市", "南アルプス市", "笛吹市", "南都留郡富士河口湖町")),
    ("長野県", (380, 399), ("長野市", "松本市", "上田市", "飯田市", "佐久市", "諏訪市", "北佐久郡軽井沢町")),
    ("岐阜県", (500, 509), ("岐阜市", "大垣市", "各務原市", "多治見市", "高山市", "関市", "不破郡垂井町")),
    ("静岡県", (410, 439), ("静岡市葵区", "静岡市駿河区", "静岡市清水区", "浜松市中央区", "浜松市浜名区", "沼津市",
                          "富士市", "磐田市", "藤枝市", "焼津市", "三島市", "熱海市", "田方郡函南町")),
    ("愛知県", (440, 499), ("名古屋市中区", "名古屋市中村区", "名古屋市千種区", "名古屋市昭和区", "名古屋市名東区",
                          "名古屋市緑区", "豊田市", "岡崎市", "一宮市", "豊橋市", "春日井市", "安城市", "刈谷市",
                          "西尾市", "知多郡東浦町")),
    ("三重県", (510, 519), ("津市", "四日市市", "鈴鹿市", "松阪市", "桑名市", "伊勢市", "三重郡菰野町")),
    ("滋賀県", (520, 529), ("大津市", "草津市", "長浜市", "彦根市", "東近江市", "守山市", "犬上郡豊郷町")),
    ("京都府", (600, 629), ("京都市中京区", "京都市下京区", "京都市左京区", "京都市右京区", "京都市伏見区",
                          "京都市北区", "宇治市", "亀岡市", "舞鶴市", "福知山市", "長岡京市", "乙訓郡大山崎町")),
    ("大阪府", (530, 599), ("大阪市北区", "大阪市中央区", "大阪市西区", "大阪市天王寺区", "大阪市淀川区",
                          "大阪市浪速区", "堺市堺区", "堺市北区", "東大阪市", "豊中市", "吹田市", "高槻市", "枚方市",
                          "茨木市", "八尾市", "泉南郡熊取町")),
    ("兵庫県", (650, 679), ("神戸市中央区", "神戸市東灘区", "神戸市灘区", "神戸市兵庫区", "神戸市須磨区",
                          "神戸市西区", "姫路市", "西宮市", "尼崎市", "明石市", "加古川市", "宝塚市", "伊丹市",
                          "川辺郡猪名川町")),
    ("奈良県", (630, 639), ("奈良市", "橿原市", "生駒市", "大和郡山市", "天理市", "北葛城郡王寺町")),
    ("和歌山県", (640, 649), ("和歌山市", "田辺市", "橋本市", "紀の川市", "岩出市", "西牟婁郡白浜町")),
    ("鳥取県", (680, 689), ("鳥取市", "米子市", "倉吉市", "境港市", "東伯郡湯梨浜町")),
    ("島根県", (690, 699), ("松江市", "出雲市", "浜田市", "益田市", "大田市")),
    ("岡山県", (700, 719), ("岡山市北区", "岡山市中区", "岡山市南区", "倉敷市", "津山市", "総社市", "玉野市",
                          "都窪郡早島町")),
    ("広島県", (720, 739), ("広島市中区", "広島市南区", "広島市西区", "広島市安佐南区", "福山市", "呉市", "東広島市",
                          "尾道市", "廿日市市", "安芸郡府中町")),
    ("山口県", (740, 759), ("山口市", "下関市", "宇部市", "周南市", "岩国市", "防府市", "熊毛郡田布施町")),
    ("徳島県", (770, 779), ("徳島市", "阿南市", "鳴門市", "吉野川市", "名西郡石井町")),
    ("香川県", (760, 769), ("高松市", "丸亀市", "坂出市", "観音寺市", "善通寺市", "仲多度郡琴平町")),
    ("愛媛県", (790, 799), ("松山市", "今治市", "新居浜市", "西条市", "宇和島市", "伊予郡砥部町")),
    ("高知県", (780, 789), ("高知市", "南国市", "四万十市", "香南市", "土佐市", "高岡郡四万十町")),
    ("福岡県", (800, 839), ("福岡市中央区", "福岡市博多区", "福岡市東区", "福岡市早良区", "福岡市南区",
                          "北九州市小倉北区", "北九州市八幡西区", "久留米市", "飯塚市", "大牟田市", "春日市",
                          "糟屋郡粕屋町")),
    ("佐賀県", (840, 849), ("佐賀市", "唐津市", "鳥栖市", "伊万里市", "武雄市", "三養基郡みやき町")),
    ("長崎県", (850, 859), ("長崎市", "佐世保市", "諫早市", "大村市", "島原市", "西彼杵郡時津町")),
    ("熊本県", (860, 869), ("熊本市中央区", "熊本市東区", "熊本市北区", "八代市", "天草市", "玉名市", "菊池郡菊陽町")),
    ("大分県", (870, 879), ("大分市", "別府市", "中津市", "佐伯市", "日田市", "速見郡日出町")),
    ("宮崎県", (880, 889), ("宮崎市", "都城市", "延岡市", "日向市", "日南市", "北諸県郡三股町")),
    ("鹿児島県", (890, 899), ("鹿児島市", "霧島市", "鹿屋市", "薩摩川内市", "姶良市", "熊毛郡屋久島町")),
    ("沖縄県", (900, 909), ("那覇市", "沖縄市", "うるま市", "浦添市", "宜野湾市", "名護市", "石垣市", "中頭郡読谷村",
                          "国頭郡恩納村")),
)
_TOKYO = 12
_PREF_INDEX = {p: i for i, (p, _, _) in enumerate(_PREFS)}
# cities whose 区 make the prefecture optional in practice (政令指定都市) and the 23 区
_DESIGNATED = re.compile(r"^(札幌|仙台|さいたま|千葉|横浜|川崎|相模原|新潟|静岡|浜松|名古屋|京都|大阪|堺|神戸|岡山|"
                         r"広島|北九州|福岡|熊本)市")

# 市外局番 (with the 0) and the length of the 市内局番 that makes ten digits
_AREA: tuple[tuple[str, int], ...] = (
    ("03", 4), ("06", 4), ("011", 3), ("017", 3), ("018", 3), ("019", 3), ("022", 3), ("023", 3), ("024", 3),
    ("025", 3), ("027", 3), ("028", 3), ("029", 3), ("042", 3), ("043", 3), ("044", 3), ("045", 3), ("046", 3),
    ("048", 3), ("052", 3), ("053", 3), ("054", 3), ("058", 3), ("059", 3), ("072", 3), ("075", 3), ("076", 3),
    ("078", 3), ("082", 3), ("086", 3), ("087", 3), ("089", 3), ("092", 3), ("093", 3), ("095", 3), ("096", 3),
    ("097", 3), ("098", 3), ("099", 3), ("0263", 2), ("0266", 2), ("0276", 2), ("0422", 2), ("0463", 2),
    ("0465", 2), ("0466", 2), ("0467", 2), ("0476", 2), ("0545", 2), ("0564", 2), ("0565", 2), ("0742", 2),
    ("0749", 2), ("0852", 2), ("0857", 2), ("0942", 2), ("0952", 2), ("0956", 2), ("04992", 1), ("04996", 1))
_AREA_W = tuple(30 if a in ("03", "06") else 6 if len(a) == 3 else 2 for a, _ in _AREA)

_SURNAMES_RAW = """
佐藤さとう 鈴木すずき 高橋たかはし 田中たなか 伊藤いとう 渡辺わたなべ 山本やまもと 中村なかむら 小林こばやし 加藤かとう
吉田よしだ 山田やまだ 佐々木ささき 山口やまぐち 松本まつもと 井上いのうえ 木村きむら 林はやし 斎藤さいとう 清水しみず
山崎やまざき 森もり 池田いけだ 橋本はしもと 阿部あべ 石川いしかわ 山下やました 中島なかじま 石井いしい 小川おがわ
前田まえだ 岡田おかだ 長谷川はせがわ 藤田ふじた 後藤ごとう 近藤こんどう 村上むらかみ 遠藤えんどう 青木あおき 坂本さかもと
斉藤さいとう 福田ふくだ 太田おおた 西村にしむら 藤井ふじい 金子かねこ 岡本おかもと 藤原ふじわら 中野なかの 三浦みうら
原田はらだ 中川なかがわ 松田まつだ 竹内たけうち 小野おの 田村たむら 中山なかやま 和田わだ 石田いしだ 森田もりた
上田うえだ 原はら 内田うちだ 柴田しばた 酒井さかい 宮崎みやざき 横山よこやま 高木たかぎ 安藤あんどう 宮本みやもと
大野おおの 小島こじま 谷口たにぐち 今井いまい 工藤くどう 高田たかだ 増田ますだ 丸山まるやま 杉山すぎやま 村田むらた
大塚おおつか 新井あらい 小山こやま 平野ひらの 藤本ふじもと 河野こうの 上野うえの 野口のぐち 武田たけだ 松井まつい
千葉ちば 岩崎いわさき 菅原すがわら 木下きのした 久保くぼ 佐野さの 野村のむら 松尾まつお 菊地きくち 杉本すぎもと
市川いちかわ 古川ふるかわ 大西おおにし 島田しまだ 水野みずの 桜井さくらい 高野たかの 渡部わたなべ 吉川よしかわ 山内やまうち
西田にしだ 飯田いいだ 菊池きくち 西川にしかわ 小松こまつ 北村きたむら 安田やすだ 五十嵐いがらし 川口かわぐち 平田ひらた
関せき 中田なかた 久保田くぼた 服部はっとり 東ひがし 岩田いわた 土屋つちや 川崎かわさき 福島ふくしま 本田ほんだ
辻つじ 樋口ひぐち 秋山あきやま 田口たぐち 永井ながい 山中やまなか 中西なかにし 吉村よしむら 川上かわかみ 石原いしはら
大橋おおはし 松岡まつおか 馬場ばば 浅野あさの 荒木あらき 大久保おおくぼ 野田のだ 小沢おざわ 田辺たなべ 川村かわむら
星野ほしの 黒田くろだ 堀ほり 尾崎おざき 望月もちづき 永田ながた 熊谷くまがい 内藤ないとう 松村まつむら 西山にしやま
大谷おおたに 平井ひらい 大島おおしま 岩本いわもと 片山かたやま 本間ほんま 早川はやかわ 横田よこた 岡崎おかざき 荒井あらい
大石おおいし 鎌田かまた 成田なりた 宮田みやた 小田おだ 石橋いしばし 篠原しのはら 須藤すどう 河合かわい 大川おおかわ
高山たかやま 萩原はぎわら 吉岡よしおか 田代たしろ 小池こいけ 上原うえはら 大森おおもり 日高ひだか 堀内ほりうち 松下まつした
今村いまむら 中尾なかお 小西こにし 浅井あさい 宮下みやした 広瀬ひろせ 飯島いいじま 桑原くわはら 関口せきぐち 岡おか
北川きたがわ 中井なかい 奥村おくむら 西野にしの 栗原くりはら 吉野よしの 長田ながた 大木おおき 松原まつばら 三宅みやけ
川田かわた 富田とみた 堤つつみ 矢野やの 金井かない 白石しらいし 小倉おぐら 大竹おおたけ 松永まつなが 牧野まきの
南みなみ 杉浦すぎうら 村井むらい 新田にった 土井どい 岡村おかむら 荒川あらかわ 矢島やじま 寺田てらだ 高井たかい
細川ほそかわ 河村かわむら 竹田たけだ 森本もりもと 岩井いわい 坂口さかぐち 柏木かしわぎ 浜田はまだ 松浦まつうら 豊田とよだ
田島たじま 吉原よしはら 坂井さかい 千田ちだ 宇野うの 小出こいで 中谷なかたに 柳田やなぎだ 三上みかみ 須田すだ
西尾にしお 稲垣いながき 宮川みやがわ 大山おおやま 飯塚いいづか 佐久間さくま 小笠原おがさわら 安達あだち 奥田おくだ 平山ひらやま
中本なかもと 大場おおば 根本ねもと 野崎のざき 志村しむら 内山うちやま 島崎しまざき 福井ふくい 吉井よしい 石塚いしづか
"""


class Surname(NamedTuple):
    kanji: str
    kana: str
    roman: str


def _parse_surnames(raw: str) -> tuple[Surname, ...]:
    out = []
    for tok in raw.split():
        m = re.fullmatch(r"([\u3005\u4e00-\u9fff]+)([\u3041-\u3096]+)", tok)
        if not m:
            raise ValueError(f"bad surname entry {tok!r}")
        out.append(Surname(m.group(1), m.group(2), romaji(m.group(2))))
    return tuple(out)


SURNAMES = _parse_surnames(_SURNAMES_RAW)
# rank weights (Zipf-like: the first ones are far more frequent)
_SUR_W = tuple(1.0 / (i + 8) for i in range(len(SURNAMES)))


class GivenName(NamedTuple):
    text: str  # as written: kanji, or hiragana for a name written in kana
    kana: str  # the reading, hiragana
    roman: str
    gender: str  # "m" or "f"


CANONICAL = ((Surname("山田", "やまだ", "yamada"), GivenName("太郎", "たろう", "taro", "m")),
             (Surname("山田", "やまだ", "yamada"), GivenName("花子", "はなこ", "hanako", "f")),
             (Surname("鈴木", "すずき", "suzuki"), GivenName("一郎", "いちろう", "ichiro", "m")))

_PROVIDERS = ("gmail.com", "gmail.com", "yahoo.co.jp", "yahoo.co.jp", "icloud.com", "outlook.jp", "hotmail.co.jp",
              "docomo.ne.jp", "ezweb.ne.jp", "au.com", "softbank.ne.jp", "i.softbank.jp", "nifty.com", "biglobe.ne.jp")
_UNIVERSITIES = (("東京大学", "u-tokyo.ac.jp"), ("京都大学", "kyoto-u.ac.jp"), ("大阪大学", "osaka-u.ac.jp"),
                 ("東北大学", "tohoku.ac.jp"), ("名古屋大学", "nagoya-u.ac.jp"), ("北海道大学", "hokudai.ac.jp"),
                 ("九州大学", "kyushu-u.ac.jp"), ("筑波大学", "tsukuba.ac.jp"), ("神戸大学", "kobe-u.ac.jp"),
                 ("広島大学", "hiroshima-u.ac.jp"))
_MINISTRIES = (("厚生労働省", "mhlw.go.jp"), ("総務省", "soumu.go.jp"), ("経済産業省", "meti.go.jp"),
               ("文部科学省", "mext.go.jp"), ("国税庁", "nta.go.jp"), ("法務省", "moj.go.jp"),
               ("個人情報保護委員会", "ppc.go.jp"), ("デジタル庁", "digital.go.jp"), ("国土交通省", "mlit.go.jp"),
               ("環境省", "env.go.jp"))
# (city, its city hall, the domain of its web site, its prefecture, its 市外局番)
_CITY_HALLS = (("横浜市", "横浜市役所", "city.yokohama.lg.jp", "神奈川県", "045"),
               ("大阪市", "大阪市役所", "city.osaka.lg.jp", "大阪府", "06"),
               ("名古屋市", "名古屋市役所", "city.nagoya.lg.jp", "愛知県", "052"),
               ("福岡市", "福岡市役所", "city.fukuoka.lg.jp", "福岡県", "092"),
               ("神戸市", "神戸市役所", "city.kobe.lg.jp", "兵庫県", "078"),
               ("京都市", "京都市役所", "city.kyoto.lg.jp", "京都府", "075"),
               ("札幌市", "札幌市役所", "city.sapporo.jp", "北海道", "011"),
               ("仙台市", "仙台市役所", "city.sendai.jp", "宮城県", "022"),
               ("東京都", "東京都庁", "metro.tokyo.lg.jp", "東京都", "03"),
               ("大阪府", "大阪府庁", "pref.osaka.lg.jp", "大阪府", "06"))
_HALL_DOMAINS = frozenset(h[2] for h in _CITY_HALLS)
_EXITS = ("改札前", "東口", "西口", "中央口", "北口", "南口")
_STATIONS = ("東京駅", "新宿駅", "渋谷駅", "池袋駅", "品川駅", "横浜駅", "大宮駅", "千葉駅", "名古屋駅", "京都駅",
             "新大阪駅", "博多駅", "仙台駅", "札幌駅", "松本駅", "熊谷駅", "広島駅", "岡山駅")
_TRAINS = ("のぞみ", "ひかり", "はやぶさ", "こだま")
_POLICE = ("大阪府警", "神奈川県警", "警視庁", "愛知県警", "福岡県警", "北海道警察", "兵庫県警")
_DEPTS = ("市民課", "保険年金課", "市民税課", "資産税課", "子育て支援課", "福祉課", "戸籍住民課", "納税課",
          "マイナンバーカード交付窓口", "情報政策課", "介護保険課", "環境保全課")
_CO_DEPTS = ("営業部", "総務部", "人事部", "経理部", "開発部", "営業企画課", "カスタマーサポート", "購買部",
             "システム部", "法務部", "品質保証部", "広報室")
_TITLES = ("部長", "課長", "係長", "主任", "マネージャー", "代表取締役", "取締役", "室長", "担当")
_ROLE_USERS = ("info", "support", "contact", "sales", "soumu", "jinji", "eigyo", "uketsuke", "order", "shop",
               "privacy", "recruit")
_LAWS = ("個人情報の保護に関する法律（平成15年法律第57号）第27条",
         "行政手続における特定の個人を識別するための番号の利用等に関する法律（平成25年法律第27号）第16条",
         "借地借家法（平成3年法律第90号）第38条", "民法（明治29年法律第89号）第601条",
         "商業登記規則（昭和39年法務省令第23号）第1条の2",
         "行政手続における特定の個人を識別するための番号の利用等に関する法律施行令（平成26年政令第155号）第8条")
_PRODUCTS = (("ワイヤレスイヤホン", "WH-", 12800), ("電気ケトル", "KT-", 3980), ("ノートパソコン用スタンド", "NS-", 2480),
             ("加湿器", "HD-", 8980), ("コーヒーメーカー", "CM-", 15800), ("モバイルバッテリー", "MB-", 4280),
             ("トートバッグ", "TB-", 5500), ("ハンドクリーム 3本セット", "HC-", 1980), ("LEDデスクライト", "DL-", 6980))
_WEEKDAYS = "月火水木金土日"

# ---------------------------------------------------------------------------------------------------------------
# Open classes: built from elements, then split by a hash
# ---------------------------------------------------------------------------------------------------------------

_M_FIRST = ("健けん 翔しょう 大だい 拓たく 悠ゆう 蓮れん 颯そう 陽よう 隼しゅん 誠せい 浩こう 康こう 直なお 和かず 達たつ "
            "秀ひで 英えい 啓けい 智とも 俊とし 正まさ 光こう 勇ゆう 真しん 信のぶ 賢けん 亮りょう 涼りょう 航こう 慎しん "
            "龍りゅう 晴はる 雅まさ 修しゅう 恭きょう 圭けい 純じゅん 敏とし 昌まさ 哲てつ")
_M_SECOND = "太た 介すけ 輔すけ 斗と 人と 也や 樹き 平へい 吾ご 司じ 治じ 一いち 之ゆき 彦ひこ 希き 馬ま 弥や"
_F_FIRST = ("美み 真ま 由ゆ 奈な 沙さ 紗さ 彩あや 愛あい 結ゆい 陽ひ 千ち 早さ 麻ま 里り 亜あ 恵え 佳か 春はる 詩うた "
            "明あき 理り 友とも 裕ゆ 優ゆう 菜な 香か 絵え 知ち 希き 桃もも 芽め 舞まい 夏なつ 若わか 彩さ")
_F_SECOND = ("子こ 美み 香か 奈な 花か 菜な 恵え 代よ 里り 乃の 衣い 希き 穂ほ 緒お 帆ほ 央お 音ね 咲さき 佳か 華か "
             "絵え 羽は")
# combinations that read as ordinary words, not names
_GIVEN_STOP = {"大人", "里子", "舞子", "菜花", "沙子", "真似"}
_HIRA_GIVEN = ("さくら ひなた あおい ゆい めい りこ ここな ひより さき みゆ ゆうな かえで あかり つむぎ いろは ののか "
               "はるか みずき しずく ちひろ まなみ ゆかり あずさ かおり みどり ひろみ あゆみ なぎさ はるき ゆうと そうた "
               "はると ゆうま かいと りく あさひ こうき しょう たける ひかる まこと").split()
_HIRA_GENDER_M = set("はるき ゆうと そうた はると ゆうま かいと りく あさひ こうき しょう たける".split())

_TOWN_STEMS = ("桜 若葉 緑 青葉 松 梅 竹 杉 柳 藤 菊 萩 栗 桃 泉 朝日 旭 日の出 光 春日 星 月見 鶴 亀 鷹 白 黒 赤 "
               "金 銀 玉 宮 寺 花 雪 霞 浅 清 千歳 八幡 弥生 曙 錦 美原 東雲 汐見 桜木 柏 楓 椿 榎 桂 橘 芝 石 岩 滝 "
               "富士見 稲 柿 紅葉 蛍 若松 常盤").split()
_TOWN_SFX = ("町 台 ヶ丘 が丘 原 野 沢 田 坂 浜 川 谷 島 丘 通 本町 新町 東町 西町 南町 北町 中町 園 平 "
             "ヶ谷 が原").split()
_BLD_STEMS = ("サンライズ グリーン リバーサイド エスポワール ソレイユ フォレスト ベルテ ラフィネ エクセル "
              "シャルム プレジール アルカディア クレスト ルミエール セジュール ヴィラ カーサ エトワール アーバン "
              "サニー コスモ パレス ロイヤル ハーモニー ステラ オリオン アムール フェリス レジェ プリマ").split()
_BLD_PAT = ("メゾン{} {}ハイツ {}マンション {}ビル {}レジデンス コーポ{} {}荘 パーク{} {}タワー {}ヒルズ "
            "グラン{} {}コート {}第2ビル").split()
_CO_FIRST = ("東と 西さい 南なん 北ほく 大だい 新しん 明めい 昭しょう 光こう 三さん 共きょう 協きょう 信しん 正せい "
             "丸まる 富ふ 興こう 泰たい 日にち 旭きょく 中ちゅう 太たい 朋ほう 栄えい 国こく 千せん 万まん 高こう 平へい "
             "和わ")
_CO_SECOND = ("栄えい 和わ 進しん 洋よう 陽よう 成せい 伸しん 興こう 邦ほう 光こう 星せい 輪りん 友ゆう 盛せい 央おう "
              "立りつ 精せい 研けん 創そう 明めい")
_CO_KANJI_SFX = (("工業", "kogyo"), ("商事", "shoji"), ("物産", "bussan"), ("製作所", "ss"), ("建設", "kensetsu"),
                 ("電機", "denki"), ("印刷", "insatsu"), ("運輸", "unyu"), ("不動産", "fudosan"), ("産業", "sangyo"),
                 ("化学", "kagaku"), ("食品", "foods"), ("興産", "kosan"), ("精工", "seiko"), ("商会", "shokai"),
                 ("技研", "giken"), ("通信", "tsushin"), ("開発", "kaihatsu"), ("観光", "kanko"), ("薬品", "yakuhin"))
# katakana words that are not also given names (no ヒカリ, ツバサ, ソラ, ミライ, ミドリ: a company name holds no name)
_CO_KANA = ("ネクスト next クレスト crest アクシス axis ルミナ lumina テラ terra ノヴァ nova ユニオン union "
            "アクア aqua グリーン green サン sun スター star ウェーブ wave フォレスト forest オーシャン ocean "
            "ライト light ハーモニー harmony ビジョン vision コスモ cosmo アーク arc ゼニス zenith プライム prime "
            "トラスト trust ブライト bright シード seed イロドリ irodori リンクス lynx ベクター vector "
            "フロンティア frontier").split()
_CO_KANA_SFX = (("テック", "tech"), ("システムズ", "systems"), ("ソリューションズ", "solutions"), ("ラボ", "lab"),
                ("ネット", "net"), ("ワークス", "works"), ("デザイン", "design"), ("プラス", "plus"), ("ライフ", "life"),
                ("フーズ", "foods"), ("メディカル", "medical"), ("パートナーズ", "partners"), ("ロジスティクス", "logi"),
                ("クリエイト", "create"))


def _pairs(raw: str) -> list[tuple[str, str]]:
    """("健", "けん") pairs from "健けん 翔しょう ...": each kanji element with its reading in hiragana."""
    return common.split_pairs(raw, "\u4e00-\u9fff", "\u3041-\u3096")


class Company(NamedTuple):
    name: str  # without the legal form (株式会社 is added when written)
    roman: str  # the domain stem


@dataclass(frozen=True)
class Pools:
    """The open-class values of one split (no surface form of one split's values is one of the other's)."""

    given: tuple[GivenName, ...]  # kanji given names
    given_kana: tuple[GivenName, ...]  # names written in hiragana
    towns: tuple[str, ...]
    buildings: tuple[str, ...]
    companies: tuple[Company, ...]
    users: tuple[str, ...]
    domains: tuple[str, ...]

    def values(self) -> set[str]:
        """Every surface form of every value (lower case for romaji)."""
        return {f for fld in fields(self) for x in getattr(self, fld.name) for f in _forms(x)}


def _forms(x: GivenName | Company | str) -> tuple[str, ...]:
    if isinstance(x, GivenName):
        return (x.text, x.kana, katakana(x.kana), x.roman)
    if isinstance(x, Company):
        return (x.name, x.roman)
    return (x.lower(),)


def _key(x: GivenName | Company | str) -> str:
    return x.roman if isinstance(x, GivenName | Company) else x


@lru_cache(maxsize=1)
def _universe() -> dict[str, list]:
    """Every candidate open-class value, before the split."""
    given: list[GivenName] = []
    for firsts, seconds, g in ((_M_FIRST, _M_SECOND, "m"), (_F_FIRST, _F_SECOND, "f")):
        for a, ka in _pairs(firsts):
            for b, kb in _pairs(seconds):
                if a == b or ka == kb or a + b in _GIVEN_STOP:
                    continue
                given.append(GivenName(a + b, ka + kb, romaji(ka + kb), g))
    canon = {gn.text for _, gn in CANONICAL}
    sur_kana = {s.kana for s in SURNAMES}  # a given name read like a surname (沙咲, ささき) would blur a フリガナ
    given = [g for g in dict((g.text, g) for g in given).values() if g.text not in canon and g.kana not in sur_kana]
    hira = [GivenName(k, k, romaji(k), "m" if k in _HIRA_GENDER_M else "f") for k in _HIRA_GIVEN]
    closed = {s.kanji for s in SURNAMES} | {re.sub("[市区町村郡]$", "", part) for _, _, ms in _PREFS for m in ms
                                            for part in re.findall(r"[^市区町村郡]+[市区町村郡]", m)}
    towns = [s + x for s in _TOWN_STEMS for x in _TOWN_SFX if s + x not in closed and s not in closed]
    buildings = [p.format(s) for s in _BLD_STEMS for p in _BLD_PAT]
    buildings += [f"{t}{p}" for t in _TOWN_STEMS[:24] for p in ("ビル", "ハイツ", "マンション")]
    companies: list[Company] = []
    for a, ka in _pairs(_CO_FIRST):
        for b, kb in _pairs(_CO_SECOND):
            if a == b:
                continue
            pr = random.Random("evalgen-ja-pool:" + a + b)
            sfx, rsfx = pr.choice(_CO_KANJI_SFX)
            companies.append(Company(a + b + sfx, romaji(ka + kb) + pr.choice(("", "-")) + rsfx))
    kana = _CO_KANA
    for i in range(0, len(kana), 2):
        pr = random.Random("evalgen-ja-pool:" + kana[i])
        for sfx, rsfx in pr.sample(_CO_KANA_SFX, 4):
            companies.append(Company(kana[i] + sfx, kana[i + 1] + pr.choice(("", "-")) + rsfx))
    companies = list(dict((c.name, c) for c in companies).values())
    return {"given": given, "given_kana": hira, "towns": towns, "buildings": buildings, "companies": companies}


def domain_of(co: Company) -> str:
    """The web and mail domain of a company (from its romanised name)."""
    pr = random.Random("evalgen-ja-domain:" + co.roman)
    return co.roman + "." + pr.choice(("co.jp", "co.jp", "co.jp", "jp", "com"))


@lru_cache(maxsize=2)
def _raw_pools(side: int) -> Pools:
    u = _universe()
    mine = {k: [x for x in vals if _side("ja:" + _key(x)) == side] for k, vals in u.items()}
    users: list[str] = []
    sur_roms = [s.roman for s in SURNAMES[:60]]
    for g in mine["given"] + mine["given_kana"]:
        pr = random.Random("evalgen-ja-user:" + g.roman)
        s = pr.choice(sur_roms)
        forms = (f"{g.roman}.{s}", f"{s}.{g.roman}", f"{s}{g.roman}", f"{g.roman}{pr.randint(70, 99)}",
                 f"{g.roman[0]}.{s}{pr.randint(1, 9)}", f"{g.roman}_{s}", f"{s}-{g.roman}",
                 f"{g.roman}.{s}+{pr.choice(('shop', 'news', 'work'))}", f"{g.roman}{pr.randint(1980, 2005)}")
        users.extend(pr.sample(forms, 2))
    domains = [domain_of(c) for c in mine["companies"]]
    return Pools(given=tuple(mine["given"]), given_kana=tuple(mine["given_kana"]), towns=tuple(mine["towns"]),
                 buildings=tuple(mine["buildings"]), companies=tuple(mine["companies"]),
                 users=tuple(dict.fromkeys(users)), domains=tuple(dict.fromkeys(domains)))


@lru_cache(maxsize=2)
def pools(split: str) -> Pools:
    """The open-class value pools of `split` ("dev" or "heldout"); independent of the seed."""
    common.check_split(split)
    i = SPLITS.index(split)
    mine, other = _raw_pools(i), _raw_pools(1 - i)
    # a value with any surface form the other split also produced, in any field, is dropped (from both, since
    # the other split drops it by the same rule)
    theirs = other.values()

    def keep(vals: Iterable) -> tuple:
        return tuple(x for x in vals if not set(_forms(x)) & theirs)

    return Pools(**{f.name: keep(getattr(mine, f.name)) for f in fields(Pools)})


# ---------------------------------------------------------------------------------------------------------------
# Value makers
# ---------------------------------------------------------------------------------------------------------------


class Person(NamedTuple):
    sur: Surname
    given: GivenName
    used: tuple[tuple[str, str], ...]


class Negative(NamedTuple):
    """A planted number that must not be labelled: `kind`, `text` as written; `digits` its 12 or 13 digits
    when it is one of the check-digit negatives (they fail the My Number / 法人番号 check), else ""."""

    kind: str
    text: str
    digits: str


class _Ctx:
    """One document's random stream and its split's pools, with the value makers."""

    def __init__(self, rng: random.Random, pools_: Pools) -> None:
        self.r = rng
        self.P = pools_
        self.negatives: list[Negative] = []

    # -- names ---------------------------------------------------------------------------------------------------
    def new_person(self, gender: str | None = None, canonical: float = 0.03) -> Person:
        r, P = self.r, self.P
        if r.random() < canonical:
            s, g = r.choice(CANONICAL)
            return Person(s, g, ())
        sur = r.choices(SURNAMES, weights=_SUR_W)[0]
        gender = gender or r.choice("mf")
        if r.random() < 0.08:
            g = r.choice([x for x in P.given_kana if x.gender == gender] or P.given_kana)
            return Person(sur, g, (("given_kana", g.text),))
        g = r.choice([x for x in P.given if x.gender == gender])
        return Person(sur, g, (("given", g.text),))

    def name(self, p: Person, style: str = "full") -> _S:
        """`p` written in `style`: full (kanji), sur, given, kata (フリガナ), hira (ふりがな), roman, nick."""
        r = self.r
        sep = r.choices(("", " ", "　"), (35, 45, 20))[0]
        used = p.used if style not in ("sur",) else ()
        if style == "full":
            return _S("PERSON", p.sur.kanji + sep + p.given.text, used=used)
        if style == "sur":
            return _S("PERSON", p.sur.kanji)
        if style == "given":
            return _S("PERSON", p.given.text, used=used)
        if style == "kata":
            return _S("PERSON", katakana(p.sur.kana) + r.choice((" ", "　", "")) + katakana(p.given.kana), used=used)
        if style == "hira":
            return _S("PERSON", p.sur.kana + r.choice((" ", "　")) + p.given.kana, used=used)
        if style == "roman":
            g, s = p.given.roman.capitalize(), p.sur.roman.capitalize()
            return _S("PERSON", r.choice((f"{g} {s}", f"{s.upper()} {g}", f"{s} {g}", f"{g} {s.upper()}")),
                      used=used)
        if style == "nick":
            k = r.random()
            if k < 0.4:
                return _S("PERSON", p.given.kana, used=used)
            if k < 0.6:
                return _S("PERSON", katakana(p.given.kana), used=used)
            if k < 0.8:
                return _S("PERSON", p.given.text, used=used)
            return _S("PERSON", p.sur.kanji + " " + p.given.text, used=used)
        raise ValueError(style)

    def person(self, style: str | None = None) -> _S:
        style = style or self.r.choices(("full", "sur"), (85, 15))[0]
        return self.name(self.new_person(), style)

    def company(self, kind: str | None = None) -> tuple[str, Company, str]:
        """(the company as written, the pool value, its legal form)."""
        r = self.r
        co = r.choice(self.P.companies)
        kind = kind or r.choices(("株式会社", "有限会社", "合同会社"), (82, 9, 9))[0]
        if kind == "株式会社":
            text = r.choices((f"株式会社{co.name}", f"{co.name}株式会社", f"(株){co.name}", f"㈱{co.name}",
                              f"株式会社 {co.name}"), (40, 35, 10, 8, 7))[0]
        else:
            text = r.choice((f"{kind}{co.name}", f"{co.name}{kind}"))
        return text, co, kind

    # -- numbers -------------------------------------------------------------------------------------------------
    def _fixed_parts(self, area: str | None = None) -> tuple[str, str, str]:
        area = area or self.r.choices(_AREA, weights=_AREA_W)[0][0]
        return area, _nz(self.r, 6 - len(area)), _digits(self.r, 4)

    def phone(self, kind: str | None = None, label: str = "PHONE", zen: float = 0.1, area: str | None = None
              ) -> _S:
        r = self.r
        kind = kind or r.choices(("mobile", "fixed", "ip", "free", "navi", "intl"), (42, 36, 5, 8, 3, 6))[0]
        if kind == "fixed":
            a, b, c = self._fixed_parts(area)
            t = r.choices((f"{a}-{b}-{c}", f"{a}({b}){c}", f"({a}){b}-{c}", f"{a}{b}{c}", f"{a} {b} {c}"),
                          (62, 12, 10, 8, 8))[0]
        elif kind == "mobile":
            pre = r.choices(("090", "080", "070"), (50, 35, 15))[0]
            b, c = str(r.randint(1, 9)) + _digits(r, 3), _digits(r, 4)
            t = r.choices((f"{pre}-{b}-{c}", f"{pre}{b}{c}", f"{pre} {b} {c}", f"{pre}({b}){c}"), (70, 15, 10, 5))[0]
        elif kind == "ip":
            t = f"050-{r.randint(1, 9)}{_digits(r, 3)}-{_digits(r, 4)}"
        elif kind == "free":
            t = r.choice((f"0120-{_digits(r, 3)}-{_digits(r, 3)}", f"0120-{_digits(r, 2)}-{_digits(r, 4)}",
                          f"0800-{_digits(r, 3)}-{_digits(r, 4)}"))
        elif kind == "navi":
            t = f"0570-{_digits(r, 3)}-{_digits(r, 3)}"
        else:
            if r.random() < 0.5:
                a, b, c = self._fixed_parts()
            else:
                a, b, c = r.choice(("090", "080", "070")), str(r.randint(1, 9)) + _digits(r, 3), _digits(r, 4)
            a = a[1:]
            return _S(label, r.choice((f"+81-{a}-{b}-{c}", f"+81 {a} {b} {c}", f"+81-(0){a}-{b}-{c}",
                                       f"+81 {a}-{b}-{c}")))
        if r.random() < zen:
            t = _zen(t)
        return _S(label, t)

    def fax(self, area: str | None = None) -> _S:
        return self.phone(self.r.choices(("fixed", "ip"), (92, 8))[0] if area is None else "fixed", label="FAX",
                          area=area)

    def fax_label(self) -> str:
        return self.r.choice(("FAX：", "FAX ", "Fax: ", "FAX番号：", "ファックス：", "ファクス ", "ＦＡＸ："))

    def tel_label(self) -> str:
        return self.r.choice(("TEL：", "TEL ", "Tel: ", "電話：", "電話番号：", "電話 ", "℡ ", "ＴＥＬ："))

    def postal(self, pref: int, zen: float = 0.08) -> _S:
        r = self.r
        lo, hi = _PREFS[pref][1]
        first = r.randint(lo, hi)
        t = f"{first:03d}-{_digits(r, 4)}"
        k = r.random()
        if k < zen:
            t = _zen(t)
        elif k < zen + 0.04:
            t = t.replace("-", "")
        return _S("POSTAL_CODE", t)

    def my_number(self) -> _S:
        r = self.r
        body = _digits(r, 11)
        full = body + my_number_check_digit(body)
        t = r.choices((f"{full[:4]} {full[4:8]} {full[8:]}", f"{full[:4]}-{full[4:8]}-{full[8:]}", full),
                      (45, 30, 25))[0]
        if r.random() < 0.08:
            t = _zen(t)
        return _S("MY_NUMBER", t, valid=True)

    def registry_number(self, kind: str = "株式会社") -> str:
        """A 12-digit 会社法人等番号 (digits only)."""
        r = self.r
        office = r.choice(("0100", "0100", "0104", "0110", "0111", "0113", "0200", "0300", "1200", "1300", "1800",
                           "1803", "2000", "2100", "4000", "4300"))
        code = {"株式会社": "01", "有限会社": "02", "合同会社": "03"}.get(kind, "01")
        return office + code + f"{r.choice((r.randint(1, 99999), r.randint(1, 999999))):06d}"

    def corporate_number(self, kind: str = "株式会社", registry: float = 0.15) -> _S:
        r = self.r
        base = self.registry_number(kind)
        if r.random() < registry:
            return _S("CORPORATE_NUMBER", r.choice((f"{base[:4]}-{base[4:6]}-{base[6:]}", base)))
        full = corporate_check_digit(base) + base
        t = r.choices((full, f"{full[0]}-{full[1:5]}-{full[5:9]}-{full[9:]}", f"{full[0]} {full[1:5]} {full[5:9]} "
                                                                           f"{full[9:]}"), (75, 18, 7))[0]
        if r.random() < 0.05:
            t = _zen(t)
        return _S("CORPORATE_NUMBER", t, valid=True)

    def card(self) -> _S:
        r = self.r
        brand = r.choices(("jcb", "visa", "master", "amex", "diners"), (30, 32, 24, 9, 5))[0]
        body = {"jcb": lambda: str(r.randint(3528, 3589)) + _digits(r, 11), "visa": lambda: "4" + _digits(r, 14),
                "master": lambda: f"5{r.randint(1, 5)}" + _digits(r, 13),
                "amex": lambda: r.choice(("34", "37")) + _digits(r, 12),
                "diners": lambda: "36" + _digits(r, 11)}[brand]()
        full = body + luhn.calc_check_digit(body)
        if len(full) == 16:
            groups = [full[i:i + 4] for i in range(0, 16, 4)]
        else:
            groups = [full[:4], full[4:10], full[10:]]
        t = r.choices(("-", " ", ""), (45, 35, 20))[0].join(groups)
        if r.random() < 0.05:
            t = _zen(t)
        return _S("CARD", t, valid=True)

    def email(self, domain: str | None = None, role: bool = False, user: str | None = None) -> _S:
        r = self.r
        used: tuple[tuple[str, str], ...] = ()
        if user is None:
            user, used = common.mail_user(r, role, _ROLE_USERS, self.P.users)
        if domain is None:  # a mail provider, a university (or a faculty's), a ministry, a company of the split
            domain = by_cut(r.random(), (0.55, 0.62, 0.67), (
                lambda: r.choice(_PROVIDERS), lambda: r.choice(("", "", "s.", "g.")) + r.choice(_UNIVERSITIES)[1],
                lambda: r.choice(_MINISTRIES)[1], self.domain))()
        if domain in self.P.domains:
            used += (("domains", domain),)
        return _S("EMAIL", f"{user}@{domain}", used=used)

    def domain(self, co: Company | None = None) -> str:
        """`co`'s domain (when this split kept it), else one of the split's company domains."""
        if co is not None and domain_of(co) in self.P.domains:
            return domain_of(co)
        return self.r.choice(self.P.domains)

    def url(self, domain: str | None = None, kind: str | None = None) -> _S:
        r = self.r
        if domain is None:
            domain = r.choice(_CITY_HALLS)[2] if r.random() < 0.25 else self.domain()
        used = (("domains", domain),) if domain in self.P.domains else ()
        if kind == "order":
            path = r.choice((f"/mypage/order/detail?order_id={_digits(r, 10)}",
                             f"/orders/{_digits(r, 8)}?ref=mail&utm_source=order_mail", "/mypage/orders/"))
        elif domain in _HALL_DOMAINS:
            path = r.choice(("/", "/kurashi/", "/kurashi/koseki/mynumber.html", f"/faq/{r.randint(1, 999)}.html",
                             "/shisei/soshiki/shimin/index.html", f"/bosai/info?id={r.randint(1, 9999)}"))
        else:
            path = r.choice(("", "/", "/company/", "/contact/", "/contact/index.html", "/recruit/",
                             f"/news/{r.randint(2019, 2025)}/{r.randint(1, 12):02d}{r.randint(1, 28):02d}.html",
                             f"/products/detail.php?id={r.randint(1, 99999)}",
                             f"/support/faq?category={r.choice(('order', 'payment', 'delivery'))}&page={r.randint(1, 9)}",
                             "/privacy/", "/ja/", "/blog/" + r.choice(("entry-", "post/")) + str(r.randint(1, 9999))))
        text = common.web_address(r, domain, path, ("shop.", "support.", "my."), (72, 18, 10))
        return _S("URL", text, used=used)

    def ip(self) -> _S:
        r = self.r
        k = r.random()
        if k < 0.18:
            groups = [f"{r.choice(('2400', '2404', '240b', '2001', '2409', '240f'))}",
                      f"{r.randint(0, 0xffff):x}"] + [f"{r.randint(0, 0xffff):x}" for _ in range(6)]
            if r.random() < 0.6:
                n = r.randint(2, 4)
                start = r.randint(2, 7 - n)
                return _S("IP", ":".join(groups[:start]) + "::" + ":".join(groups[start + n:]))
            return _S("IP", ":".join(groups))
        return common.ipv4(r, k, (0.38, 0.48, 0.53))

    # -- addresses -----------------------------------------------------------------------------------------------
    def address(self, pref: int | None = None, building: float | None = None, zen: float = 0.12
                ) -> tuple[_S, int]:
        """(an ADDRESS span, the index of its prefecture for a matching postal code)."""
        r, P = self.r, self.P
        if pref is None:
            pref = _TOKYO if r.random() < 0.2 else r.randrange(len(_PREFS))
        pname, _, munis = _PREFS[pref]
        muni = r.choice(munis)
        used: list[tuple[str, str]] = []
        rural = "郡" in muni
        if rural:
            head = pname + muni
        else:
            drop = 0.45 if _DESIGNATED.match(muni) else 0.3 if pref == _TOKYO and muni.endswith("区") else 0.08
            head = muni if r.random() < drop else pname + r.choices(("", " ", "　"), (88, 9, 3))[0] + muni
        town = r.choice(P.towns)
        used.append(("towns", town))
        if muni.startswith("札幌市") and r.random() < 0.5:
            used.pop()
            block = (f"{r.choice('北南')}{r.randint(1, 24)}条{r.choice('東西')}{r.randint(1, 20)}丁目"
                     f"{r.randint(1, 9)}-{r.randint(1, 30)}")
            text = head + block
        elif rural:
            n = r.randint(1, 3999)
            block = r.choice((f"{n}番地", f"{n}番地{r.randint(1, 30)}", f"{n}番地の{r.randint(1, 30)}", f"{n}-{r.randint(1, 30)}"))
            text = head + r.choice(("大字", "大字", "")) + town + block
        else:
            ch, ban, go = r.randint(1, 9), r.randint(1, 40), r.randint(1, 30)
            k = r.random()
            if k < 0.9:  # 住居表示: 丁目 in figures or in kanji, 番 and 号 written out or as hyphens
                kan = _kanji_num(ch)
                block = by_cut(k, (0.3, 0.42, 0.7, 0.82), (f"{ch}丁目{ban}番{go}号", f"{kan}丁目{ban}番{go}号",
                                                         f"{ch}-{ban}-{go}", f"{ch}丁目{ban}-{go}", f"{kan}丁目{ban}-{go}"))
            else:
                n = r.randint(1, 2999)
                block = r.choice((f"{n}番地", f"{n}番地{r.randint(1, 30)}", f"{n}-{r.randint(1, 30)}"))
            text = head + town + block
        if building is None:
            building = 0.15 if rural else 0.45
        if r.random() < building:
            b = r.choice(P.buildings)
            used.append(("buildings", b))
            floor, room = r.randint(1, 15), r.randint(1, 12)
            rm = f"{floor}{room:02d}"
            tail = by_cut(r.random(), (0.25, 0.5, 0.65, 0.8, 0.9),
                          (f" {b} {floor}階", f" {b}{rm}号室", f" {b} {rm}号室", f"　{b} {rm}", f" {b}", f"{b}{rm}"))
            if re.search(r"\d-\d+$", text) and r.random() < 0.3:
                tail = f"-{rm}"
                used.pop()
            text += tail
        if r.random() < zen:
            text = text.translate(str.maketrans("0123456789-", "０１２３４５６７８９－"))
        return _S("ADDRESS", text, used=tuple(used)), pref

    def postal_address(self, sep: str | None = None, mark: float = 0.85, **kw) -> tuple[_Seg, ...]:
        """`〒150-0002 東京都…` (a POSTAL_CODE and an ADDRESS), or the address alone (25 %)."""
        a, pref = self.address(**kw)
        r = self.r
        if r.random() < 0.25:
            return (a,)
        p = self.postal(pref)
        sep = sep if sep is not None else r.choices((" ", "　", "  "), (70, 20, 10))[0]
        m = r.choices(("〒", "〒 ", ""), (70, 10, 20))[0] if r.random() < mark else ""
        return (m, p, sep, a)

    # -- negatives -----------------------------------------------------------------------------------------------
    def plant(self, kind: str, text: str, digits: str = "") -> str:
        self.negatives.append(Negative(kind, text, digits))
        return text

    def bad12(self) -> str:
        """Twelve digits that fail the 個人番号 check."""
        r = self.r
        body = _digits(r, 11)
        ok = my_number_check_digit(body)
        return body + r.choice([d for d in "0123456789" if d != ok])

    def bad13(self) -> str:
        """Thirteen digits that fail the 法人番号 check."""
        r = self.r
        base = _digits(r, 12)
        ok = corporate_check_digit(base)
        return r.choice([d for d in "0123456789" if d != ok]) + base

    def tracking(self) -> str:
        """A 12-digit 伝票番号 (the last digit the first eleven mod 7), re-drawn until it fails the My Number
        check."""
        r = self.r
        while True:
            body = str(r.randint(1, 9)) + _digits(r, 10)
            full = body + str(int(body) % 7)
            if my_number_check_digit(full[:11]) != full[11]:
                return full

    def jan(self) -> str:
        """A JAN (EAN-13, prefix 45/49) code that fails the 法人番号 check."""
        r = self.r
        while True:
            body = r.choice(("45", "49")) + _digits(r, 10)
            full = body + _ean13_check(body)
            if corporate_check_digit(full[1:]) != full[0]:
                return full

    def isbn(self) -> str:
        r = self.r
        while True:
            pub = _digits(r, r.randint(2, 5))
            title = _digits(r, 8 - len(pub))
            body = "9784" + pub + title
            full = body + _ean13_check(body)
            if corporate_check_digit(full[1:]) != full[0]:
                return self.plant("isbn", f"978-4-{pub}-{title}-{full[-1]}", full)

    def day(self, year: int | None = None) -> datetime.date:
        r = self.r
        return datetime.date(year or r.randint(2019, 2025), r.randint(1, 12), r.randint(1, 28))

    def date(self, style: str | None = None, year: int | None = None, when: datetime.date | None = None) -> str:
        d = when or self.day(year)
        style = style or self.r.choice(("ymd", "wareki", "slash", "wareki", "ymd"))
        if style == "wareki":
            return _wareki(d)
        if style == "slash":
            return f"{d.year}/{d.month:02d}/{d.day:02d}"
        if style == "r":
            return _wareki(d, short=True)
        return f"{d.year}年{d.month}月{d.day}日"

    def birth(self, year: int | None = None) -> str:
        r = self.r
        d = datetime.date(year or r.randint(1950, 2004), r.randint(1, 12), r.randint(1, 28))
        return r.choice((_wareki(d), _wareki(d), f"{d.year}年{d.month}月{d.day}日", f"{d.year}/{d.month:02d}/{d.day:02d}"))

    def price(self) -> str:
        r = self.r
        n = r.choice((r.randint(3, 300) * 100 - r.choice((0, 20)), r.randint(1, 90) * 1000))
        man, rest = divmod(n, 10000)
        return r.choice((f"¥{n:,}", f"{n:,}円", f"{n:,}円（税込）", f"￥{n:,}",
                         f"{man}万{rest // 1000}千円" if man and rest and rest % 1000 == 0 else f"{n:,}円"))

    def negative(self) -> str:
        """A sentence with no personal data in it, built to look like it might have some."""
        r = self.r
        k = r.randrange(26)
        if k == 0:
            when = f"{self.date()}（{r.choice(_WEEKDAYS)}）{r.randint(9, 17)}:{r.choice(('00', '30'))}"
            return f"次回の打合せは{when}から本社{r.randint(2, 12)}階会議室で行います。"
        if k == 1:
            return f"ご請求金額は{self.price()}です。お支払期限は{self.date('wareki')}です。"
        if k == 2:
            return f"型番 {r.choice('ABKSTX')}{r.choice('CJNRW')}-{r.randint(10, 99)}{r.choice('ABX')}{r.randint(10, 99)}K の修理を承りました。"
        if k == 3:
            return f"{r.choice(_LAWS)}に基づき、適切に取り扱います。"
        if k == 4:
            return f"参考文献：ISBN{self.isbn()}（{r.randint(2005, 2024)}年刊）、{r.randint(12, 300)}ページ"
        if k == 5:
            n = self.bad12() if r.random() < 0.5 else self.bad13()
            return f"ご注文番号 {self.plant('order', n, n)} のお品物を発送いたしました。"
        if k == 6:
            n = self.bad12()
            return f"お問い合わせ番号：{self.plant('inquiry', f'{n[:4]}-{n[4:8]}-{n[8:]}', n)}"
        if k == 7:
            n = self.tracking()
            t = r.choice((f"{n[:4]}-{n[4:8]}-{n[8:]}", n))
            return f"{r.choice(('ヤマト運輸', '佐川急便', '日本郵便'))} 伝票番号 {self.plant('tracking', t, n)}"
        if k == 8:
            n = self.jan()
            return f"JANコード：{self.plant('jan', n, n)}　{r.choice(_PRODUCTS)[0]}"
        if k == 9:
            return f"{self.date()}の{r.randint(9, 18)}時に{r.choice(_STATIONS)}の{r.choice(_EXITS)}に集合です。"
        if k == 10:
            return f"{r.choice(_POLICE)}は{self.date('ymd')}、詐欺の疑いで男を逮捕したと発表した。"
        if k == 11:
            return f"手続きは{r.choice(_CITY_HALLS)[1]}{r.choice(_DEPTS)}の窓口で受け付けています。"
        if k == 12:
            name, _, _ = self.company()
            return f"{name}は、{r.randint(2019, 2024)}年度の売上高が{r.randint(2, 900)}億{r.randint(1, 9)}千万円になったと発表した。"
        if k == 13:
            return f"詳細は資料{r.randint(1, 9)}の{r.randint(2, 60)}ページ（第{r.randint(1, 8)}章）をご覧ください。"
        if k == 14:
            return f"受付時間：平日 {r.randint(8, 10)}:00～{r.randint(17, 20)}:{r.choice(('00', '30'))}（土日祝・年末年始を除く）"
        if k == 15:
            return f"令和{r.randint(3, 7)}年度第{r.randint(1, 4)}四半期の実績は前年同期比{r.randint(1, 30)}.{r.randint(0, 9)}%増でした。"
        if k == 16:
            return f"{r.choice([p for p, _, _ in _PREFS])}内では{self.date('ymd')}、最高気温{r.randint(20, 38)}.{r.randint(0, 9)}℃を観測した。"
        if k == 17:
            return f"{r.choice(_TRAINS)}{r.randint(1, 299)}号は{r.choice(_STATIONS)}を{r.randint(6, 21)}:{r.randint(0, 59):02d}に発車します。"
        if k == 18:
            return f"会員番号 {_digits(r, 8)} のポイント残高は{r.randint(1, 9999):,}ptです。"
        if k == 19:
            return f"アプリのバージョン {r.randint(1, 12)}.{r.randint(0, 9)}.{r.randint(0, 30)} で不具合を修正しました。"
        if k == 20:
            return f"{r.choice(('東京都', '大阪市', '横浜市', '福岡市', '札幌市'))}の人口は約{r.randint(100, 1400)}万人です。"
        if k == 21:
            return f"事件番号 令和{r.randint(2, 6)}年({r.choice('ワネヨ')})第{r.randint(100, 29999)}号"
        if k == 22:
            return f"宅地建物取引業 {r.choice(('東京都知事', '国土交通大臣', '大阪府知事'))}({r.randint(1, 15)})第{r.randint(1000, 99999)}号"
        if k == 23:
            return f"有効期限：{self.date('slash')}　発行日：{self.date('r')}"
        if k == 24:
            n = self.bad13()
            return f"受付番号 {self.plant('receipt', n, n)}（{self.date('ymd')}受付）"
        return f"{self.date('wareki')}付けで{r.choice(('規程', '要綱', '約款'))}第{r.randint(1, 40)}条を改正しました。"


# ---------------------------------------------------------------------------------------------------------------
# Genres
# ---------------------------------------------------------------------------------------------------------------


def _colon(c: _Ctx) -> str:
    return c.r.choice(("：", "：", ": ", "　", " "))


def _field(c: _Ctx, label: str) -> str:
    """A form label: `氏名：`, `【氏名】`, `■氏名 `, `氏　名　`."""
    r = c.r
    k = r.random()
    if k < 0.5:
        return label + _colon(c)
    if k < 0.65:
        return f"【{label}】"
    if k < 0.8:
        return f"■{label}：" if r.random() < 0.5 else f"・{label}："
    if len(label) == 2:
        return f"{label[0]}　{label[1]}　"
    return label + "　"


def _g_notice(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    city, hall, site, pref, area = r.choice(_CITY_HALLS)
    dept = r.choice(_DEPTS)
    b.add(f"{city[:2]}{r.choice(('市', '税', '保'))}第{r.randint(100, 9999)}号")
    b.add(c.date(r.choice(("wareki", "wareki", "ymd"))))
    b.add(*c.postal_address(building=0.5, pref=_PREF_INDEX[pref]))
    p = c.new_person()
    b.add(c.name(p, r.choices(("full", "sur"), (90, 10))[0]), r.choice(("　様", " 様", "様", " 殿")))
    b.add(f"{city}長" if r.random() < 0.6 else f"{city} {dept}")
    topic = r.choice(("個人番号カード交付通知書", "住民税（特別徴収）税額の決定通知", "国民健康保険料のお知らせ",
                      "児童手当 認定通知書", "個人番号の変更について", "固定資産税 納税通知書", "定額減税 補足給付金のお知らせ"))
    b.add(f"件名：{topic}" if r.random() < 0.5 else topic)
    b.blank()
    b.add(f"{r.choice(_LAWS)}の規定により、下記のとおり通知します。")
    b.add("記")
    b.add("1　対象者　", c.name(p, "full"), "（生年月日 ", c.birth(), "）")
    if r.random() < 0.65:
        b.add("2　個人番号　", c.my_number())
    if r.random() < 0.3:
        b.add("3　世帯主　", c.person("full"), "　個人番号 ", c.my_number(), opt=True)
    b.add(f"{r.choice(('4', '3'))}　金額　{c.price()}（第1期 {c.date('wareki')}）")
    if r.random() < 0.25:
        name, _, kind = c.company()
        b.add("特別徴収義務者　", name, "　法人番号 ", c.corporate_number(kind, registry=0.0), opt=True)
    b.add(f"交付場所：{hall} {dept}（{r.choice(('本庁舎', '第二庁舎'))}{r.randint(1, 8)}階）")
    b.add(c.negative(), opt=True)
    b.add(f"【問い合わせ先】{city} {dept}")
    if r.random() < 0.5:
        b.add(*c.postal_address(building=0.0, pref=_PREF_INDEX[pref]), opt=True)
    row: list[_Seg] = [c.tel_label(), c.phone("fixed", area=area)]
    if r.random() < 0.75:
        row += ["　", c.fax_label(), c.fax(area=area)]
    b.add(*row)
    if r.random() < 0.4:
        b.add("担当：", c.person("sur"), opt=True)
    if r.random() < 0.5:
        b.add("メール：", c.email(domain=site, role=True) if r.random() < 0.6 else c.email(domain=site), opt=True)
    if r.random() < 0.6:
        b.add("ホームページ：", c.url(domain=site), opt=True)
    if r.random() < 0.3:
        b.add(f"不正アクセスの通知：{c.date('ymd')} ", c.ip(), " からの接続を遮断しました。", opt=True)
    return b


def _seal(c: _Ctx) -> str:
    return c.r.choice(("　㊞", " 印", "　（印）", "", "　㊞"))


def _party(c: _Ctx, role: str, phone: bool = True) -> list[tuple[_Seg, ...]]:
    out: list[tuple[_Seg, ...]] = [(f"{role}　住所", _colon(c), *c.postal_address(mark=0.5)),
                                   ("　　　　氏名", _colon(c), c.person("full"), _seal(c))]
    if phone:
        out.append(("　　　　電話", _colon(c), c.phone(c.r.choice(("mobile", "fixed")))))
    return out


def _g_lease(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    b.add(r.choice(("建物賃貸借契約書", "賃貸住宅標準契約書", "定期建物賃貸借契約書")))
    b.add("貸主（以下「甲」という。）と借主（以下「乙」という。）は、下記の物件について賃貸借契約を締結する。")
    b.add("第1条（物件の表示）")
    b.add("所在地", _colon(c), c.address(building=1.0)[0])
    b.add(f"構造：{r.choice(('鉄筋コンクリート造', '木造', '鉄骨造'))}{r.randint(2, 14)}階建　間取り：{r.choice(('1K', '1LDK', '2DK', '2LDK', '3LDK'))}　"
          f"専有面積：{r.randint(18, 90)}.{r.randint(10, 99)}㎡")
    start = c.day(r.randint(2019, 2025)).replace(day=1)
    end = start.replace(year=start.year + 2) - datetime.timedelta(days=1)
    b.add(f"第2条（契約期間）{c.date('wareki', when=start)}から{c.date('wareki', when=end)}までの2年間とする。")
    rent = r.randint(45, 180) * 1000
    b.add(f"第3条（賃料等）賃料 月額{rent:,}円、共益費 {r.randint(2, 15) * 1000:,}円、敷金 {rent * r.randint(1, 2):,}円")
    b.add(f"第4条 乙は、毎月{r.randint(25, 27)}日までに翌月分の賃料を甲の指定する口座に振り込むものとする。", opt=True)
    b.add(c.negative(), opt=True)
    for line in _party(c, "甲（貸主）", phone=r.random() < 0.5):
        b.add(*line)
    for line in _party(c, "乙（借主）"):
        b.add(*line)
    if r.random() < 0.55:
        b.add("連帯保証人　住所", _colon(c), c.address()[0])
        b.add("　　　　　　氏名", _colon(c), c.person("full"), "　電話", _colon(c), c.phone("mobile"))
        if r.random() < 0.3:
            b.add("　　　　　　勤務先電話番号", _colon(c), c.phone("fixed"), opt=True)
    name, _, kind = c.company()
    b.add(f"媒介業者　{name}　宅地建物取引業 {r.choice(('東京都知事', '国土交通大臣', '神奈川県知事'))}({r.randint(1, 12)})"
          f"第{r.randint(1000, 99999)}号")
    if r.random() < 0.75:
        b.add("法人番号", _colon(c), c.corporate_number(kind, registry=0.2))
    row: list[_Seg] = [c.tel_label(), c.phone("fixed")]
    if r.random() < 0.6:
        row += ["　", c.fax_label(), c.fax()]
    b.add(*row)
    if r.random() < 0.5:
        b.add("宅地建物取引士　", c.person("full"), f"（登録番号 東京 第{r.randint(10000, 299999):06d}号）", opt=True)
    b.add(c.date("wareki"))
    return b


_FORMS = ("住民票の写し等交付申請書", "扶養控除等（異動）申告書", "クレジットカード入会申込書", "会員登録申込書",
          "個人番号カード交付申請書", "口座振替依頼書", "転入届")


def _g_application(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    form = r.choice(_FORMS)
    b.add(form)
    b.add(f"申請日{_colon(c)}{c.date(r.choice(('wareki', 'ymd', 'slash')))}")
    p = c.new_person()
    b.add(_field(c, "氏名"), c.name(p, "full"))
    b.add(_field(c, r.choice(("フリガナ", "フリガナ", "ふりがな"))), c.name(p, "kata" if r.random() < 0.75 else "hira"))
    b.add(_field(c, "生年月日"), c.birth(), f"　性別{_colon(c)}{r.choice(('男', '女', '男性', '女性'))}")
    a, pref = c.address()
    if r.random() < 0.6:
        b.add(_field(c, "郵便番号"), c.postal(pref))
        b.add(_field(c, "住所"), a)
    else:
        b.add(_field(c, "住所"), r.choice(("〒", "〒", "")), c.postal(pref), " ", a)
    row: list[_Seg] = [_field(c, "電話番号"), c.phone(r.choice(("fixed", "mobile")))]
    if r.random() < 0.5:
        row += ["　携帯", _colon(c), c.phone("mobile")]
    b.add(*row)
    if r.random() < 0.25:
        b.add(_field(c, "FAX番号"), c.fax(), opt=True)
    if r.random() < 0.7:
        b.add(_field(c, r.choice(("メールアドレス", "E-mail", "メール"))), c.email())
    if form in ("住民票の写し等交付申請書", "扶養控除等（異動）申告書", "個人番号カード交付申請書", "転入届") or r.random() < 0.15:
        b.add(_field(c, r.choice(("個人番号", "マイナンバー", "個人番号（マイナンバー）"))), c.my_number())
    if form == "扶養控除等（異動）申告書":
        name, _, kind = c.company()
        b.add(f"給与の支払者の名称{_colon(c)}{name}")
        b.add("給与の支払者の法人番号", _colon(c), c.corporate_number(kind, registry=0.0))
        for rel in r.sample(("配偶者", "長男", "長女", "次男", "母"), r.randint(1, 3)):
            q = c.new_person({"長男": "m", "次男": "m", "長女": "f", "母": "f"}.get(rel), canonical=0.0)
            q = q._replace(sur=p.sur, used=q.used) if rel != "母" or r.random() < 0.5 else q
            b.add(f"控除対象扶養親族（{rel}）　", c.name(q, r.choice(("full", "full", "given"))), "　個人番号 ",
                  c.my_number())
    if form in ("クレジットカード入会申込書", "口座振替依頼書") or r.random() < 0.12:
        b.add(_field(c, "カード番号"), c.card(), f"　有効期限{_colon(c)}{r.randint(1, 12):02d}/{r.randint(25, 31)}")
    if r.random() < 0.5:
        name, _, _ = c.company()
        b.add(_field(c, "勤務先"), name, "　電話", _colon(c), c.phone("fixed"), opt=True)
    if form in ("住民票の写し等交付申請書", "転入届"):
        b.add(f"本籍・筆頭者の記載{_colon(c)}{r.choice(('要', '不要'))}　必要通数{_colon(c)}{r.randint(1, 3)}通")
        b.add("代理人氏名", _colon(c), c.person("full"), "（続柄：", r.choice(("子", "配偶者", "父", "母")), "）", opt=True)
    b.add(c.negative(), opt=True)
    b.add("上記のとおり申請します。　申請者署名　", c.name(p, r.choice(("full", "full", "sur"))), _seal(c))
    return b


def _signature(c: _Ctx, p: Person, company: str, domain: str) -> list[tuple[_Seg, ...]]:
    r = c.r
    out: list[tuple[_Seg, ...]] = [(r.choice(("--", "――――――――――――――――", "*" * 24, "━━━━━━━━━━━━━━")),)]
    out.append((f"{company}　{r.choice(_CO_DEPTS)}",))
    nm: list[_Seg] = [c.name(p, "full")]
    if r.random() < 0.4:
        nm += ["（", c.name(p, "roman"), "）"]
    elif r.random() < 0.2:
        nm += ["　", r.choice(_TITLES)]
    out.append(tuple(nm))
    if r.random() < 0.8:
        out.append(c.postal_address(mark=0.9, building=0.6))
    row: list[_Seg] = [c.tel_label(), c.phone("fixed")]
    if r.random() < 0.6:
        row += [r.choice(("　", " / ", "  ")), c.fax_label(), c.fax()]
    out.append(tuple(row))
    if r.random() < 0.45:
        out.append((r.choice(("携帯：", "Mobile: ", "携帯 ")), c.phone("mobile")))
    user = r.choice((f"{p.given.roman}.{p.sur.roman}", f"{p.sur.roman}", f"{p.given.roman[0]}-{p.sur.roman}",
                     f"{p.sur.roman}.{p.given.roman}"))
    u = _S("EMAIL", f"{user}@{domain}", used=p.used + (("domains", domain),) if domain in c.P.domains else p.used)
    out.append((r.choice(("E-mail：", "Mail: ", "Email ", "メール：")), u))
    if r.random() < 0.6:
        out.append(("URL：" if r.random() < 0.5 else "", c.url(domain=domain)))
    if r.random() < 0.1:
        out.append(("法人番号：", c.corporate_number(registry=0.0)))
    return out


def _g_business_mail(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    me = c.new_person()
    them = c.new_person()
    my_co, my_pool, _ = c.company()
    dom = c.domain(my_pool)
    their_co, _, _ = c.company()
    b.add("From: ", c.name(me, "full"), " <", c.email(domain=dom), ">")
    b.add("To: ", c.email(), opt=True)
    if r.random() < 0.3:
        b.add("Cc: ", c.email(domain=dom), opt=True)
    topic = r.choice(("お見積りのご送付", "打合せ日程のご相談", "契約書ご返送のお願い", "請求書送付のご案内",
                      "不正ログインの検知について", "採用面接のご案内", "納品日のご連絡"))
    b.add(f"件名: 【{my_pool.name}】{topic}")
    b.blank()
    b.add(their_co)
    b.add(r.choice(_CO_DEPTS), " ", c.name(them, r.choice(("full", "sur"))), r.choice(("様", " 様", "様")))
    b.blank()
    b.add(f"いつも大変お世話になっております。{my_co}の", c.name(me, "sur"), "です。")
    if topic == "不正ログインの検知について":
        b.add(f"{c.date('ymd')} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}頃、IPアドレス ", c.ip(),
              " から貴社アカウントへの不正なログインが試行されました。")
        if r.random() < 0.5:
            b.add("接続元：", c.ip(), f"（{r.randint(2, 50)}回）", opt=True)
    elif topic == "採用面接のご案内":
        b.add(f"面接は{c.date('ymd')} {r.randint(10, 17)}:00より弊社（", *c.postal_address(building=0.8), "）にて行います。")
        b.add("当日のご連絡は担当の", c.person("sur"), "（", c.phone("mobile"), "）までお願いいたします。")
    elif topic == "請求書送付のご案内":
        b.add(f"{c.date('ymd')}締め分の請求書を送付いたします。ご請求金額は{c.price()}です。")
        b.add("適格請求書発行事業者登録番号：T", _S("CORPORATE_NUMBER", _corp13(c), valid=True))
    else:
        b.add(f"{topic}の件、添付のとおりお送りいたします。ご確認のほどよろしくお願いいたします。")
        if r.random() < 0.3:
            b.add("なお、ご不明点は", c.name(them, "sur"), "様から弊社", c.person("sur"), "までお問い合わせください。", opt=True)
    if r.random() < 0.15:
        b.add("お支払いに利用されたカード（", c.card(), "）の名義をご確認ください。", opt=True)
    b.add(c.negative(), opt=True)
    b.add("引き続きよろしくお願いいたします。")
    b.blank()
    for line in _signature(c, me, my_co, dom):
        b.add(*line)
    return b


def _corp13(c: _Ctx) -> str:
    """Thirteen 法人番号 digits in a row (for the T of a 登録番号)."""
    base = c.registry_number(c.r.choice(("株式会社", "株式会社", "合同会社")))
    return corporate_check_digit(base) + base


def _g_chat(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    a, z = c.new_person(), c.new_person()
    na, nz = c.name(a, "nick"), c.name(z, "nick")
    deco = r.choice(("", "", "", "🌸", "⚽", "☆", "🍓"))
    b.add("[LINE] ", nz, "とのトーク履歴")
    b.add(f"保存日時：{c.date('slash')} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}")
    b.blank()
    d = c.day()
    b.add(f"{c.date('slash', when=d)}({_WEEKDAYS[d.weekday()]})")
    msgs: list[tuple[_Seg, ...]] = [("住所送るね！ ", *c.postal_address(mark=0.7)),
                                    ("電話番号変わったよ ", c.phone("mobile", zen=0.2))]
    if r.random() < 0.5:
        msgs.append(("メアドこれ→ ", c.email(domain=r.choice(_PROVIDERS))))
    if r.random() < 0.2:
        msgs.append(("マイナンバーってこれで合ってる？ ", c.my_number()))
    if r.random() < 0.2:
        msgs.append(("カード番号 ", c.card(), " で決済しといて"))
    if r.random() < 0.3:
        msgs.append(("このお店よかった ", c.url()))
    if r.random() < 0.25:
        msgs.append((r.choice(("家のルーターのIP ", "サーバーのIPアドレス ", "接続先 ")), c.ip(),
                     r.choice((" だった", " に変わったって", " で入れる？"))))
    if r.random() < 0.5:
        msgs.append((c.person(r.choice(("sur", "full"))), r.choice(("さんから電話あったよ", "先生に聞いてみる", "くんも来るって")),))
    if r.random() < 0.3:
        q = c.new_person()
        msgs.append((c.name(q, "given"), r.choice(("ちゃん", "くん")), "の連絡先 ", c.phone("mobile")))
    if r.random() < 0.2:
        msgs.append(("会社のFAX ", c.fax(), " に送って"))
    fillers = ["了解！", "ありがとう😊", "今どこ？", f"{r.randint(1, 11)}時ごろ着く", "www", "おけ",
               f"{r.choice(_STATIONS)}の改札ね", f"{c.price()}だった", "明日よろしく〜", "スタンプ", "写真",
               f"{c.date('ymd')}空いてる？"]
    r.shuffle(msgs)
    seq: list[tuple[tuple[_Seg, ...], bool]] = [(m, False) for m in msgs]
    for _ in range(r.randint(2, 5)):
        seq.insert(r.randint(0, len(seq)), ((r.choice(fillers),), True))
    if r.random() < 0.5:
        seq.insert(r.randint(0, len(seq)), ((c.negative(),), True))
    h, mnt = r.randint(7, 21), r.randint(0, 30)
    for i, (m, opt) in enumerate(seq):
        mnt += r.randint(0, 3)
        speaker: tuple[_Seg, ...] = ((na, deco) if deco else (na,)) if i % 2 == 0 else (nz,)
        b.add(f"{h + mnt // 60:02d}:{mnt % 60:02d}\t", *speaker, "\t", *m, opt=opt)
    return b


def _g_judgment(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    y = r.randint(2, 6)
    b.add(f"令和{y}年({r.choice('ワハ')})第{r.randint(100, 29999)}号　{r.choice(('損害賠償請求事件', '貸金返還請求事件', '建物明渡請求事件', '売買代金請求事件'))}")
    b.add(f"口頭弁論終結日　令和{y + 1}年{r.randint(1, 12)}月{r.randint(1, 28)}日")
    b.add("判　　　　決")
    b.add(c.address()[0])
    b.add("原　　　　告　　", c.person("full"))
    b.add("同訴訟代理人弁護士　", c.person("full"))
    defendant_company = r.random() < 0.5
    b.add(c.address(building=0.6 if defendant_company else 0.4)[0])
    if defendant_company:
        name, _, kind = c.company()
        b.add(f"被　　　　告　　{name}")
        b.add("同代表者代表取締役　", c.person("full"))
        if r.random() < 0.4:
            b.add("（法人番号 ", c.corporate_number(kind, registry=0.1), "）", opt=True)
    else:
        b.add("被　　　　告　　", c.person("full"))
    b.add("主　　　　文")
    amount = r.randint(10, 900) * 10000
    b.add(f"1　被告は、原告に対し、{amount // 10000}万円及びこれに対する令和{y - 1}年{r.randint(1, 12)}月{r.randint(1, 28)}日"
          f"から支払済みまで年3分の割合による金員を支払え。")
    b.add("2　訴訟費用は被告の負担とする。")
    b.add("事実及び理由")
    b.add(f"原告は、令和{y - 1}年{r.randint(1, 12)}月頃、{r.choice(_STATIONS)}付近の店舗において被告と面談し、"
          f"{r.choice(_LAWS)}に関する説明を受けた。", opt=True)
    if r.random() < 0.4:
        b.add("原告の連絡先として、電話番号 ", c.phone(), " 及び電子メールアドレス ", c.email(), " が記載されていた。", opt=True)
    b.add(c.negative(), opt=True)
    court = r.choice(("東京地方裁判所民事第", "大阪地方裁判所第", "横浜地方裁判所第", "名古屋地方裁判所民事第", "福岡地方裁判所第"))
    b.add(f"{court}{r.randint(1, 50)}部")
    b.add("裁判官　", c.person("full"))
    return b


def _g_minutes(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    committee = r.choice(("個人情報保護審議会", "情報公開・個人情報保護審査会", "まちづくり推進委員会", "取締役会",
                          "安全衛生委員会", "PTA運営委員会", "自治会役員会"))
    b.add(f"第{r.randint(1, 40)}回 {committee} 議事録")
    d = c.day()
    b.add(f"日時：{c.date('wareki', when=d)}（{_WEEKDAYS[d.weekday()]}）{r.randint(9, 15)}:00～{r.randint(16, 19)}:"
          f"{r.choice(('00', '30'))}")
    b.add(f"場所：{r.choice(_CITY_HALLS)[1]} 本庁舎{r.randint(2, 9)}階 第{r.randint(1, 5)}会議室"
          if r.random() < 0.6 else f"場所：{r.choice(_STATIONS)}前 貸会議室{r.choice('ABC')}")
    members = [c.new_person() for _ in range(r.randint(3, 5))]
    row: list[_Seg] = ["出席者："]
    for i, m in enumerate(members):
        if i:
            row.append("、")
        row += [c.name(m, r.choice(("full", "sur"))), r.choice(("委員長", "委員", "委員", "副委員長", "理事"))
                if i == 0 else r.choice(("委員", "委員", "理事", "氏"))]
    b.add(*row)
    b.add("欠席者：", c.person("full"), "委員", opt=True)
    b.add("事務局：", r.choice(_DEPTS), " ", c.person("full"), "、", c.person("sur"))
    b.add("議事")
    b.add(f"1．前回議事録の確認（資料{r.randint(1, 3)}、{r.randint(1, 30)}ページ）")
    for m in r.sample(members, min(len(members), r.randint(2, 3))):
        said = r.choice(("資料の修正点について説明があった。", "前回の指摘事項について質問があった。",
                         f"令和{r.randint(5, 7)}年度予算案について{r.randint(2, 30)}件の意見が出された。",
                         "異議なく承認された。"))
        b.add("（", c.name(m, "sur"), r.choice(("委員", "委員長", "理事")), "）", said)
    b.add(c.negative(), opt=True)
    if r.random() < 0.5:
        b.add("次回：", c.date("wareki"), opt=True)
    ministry, mdom = r.choice(_MINISTRIES)
    gov = committee.endswith("審議会") or committee.endswith("審査会")
    b.add(f"【事務局連絡先】{ministry + ' ' if gov else ''}", c.tel_label(), c.phone("fixed", area="03" if gov else None),
          "　", r.choice(("メール：", "E-mail: ")), c.email(domain=mdom if gov else None))
    if r.random() < 0.3:
        b.add(c.fax_label(), c.fax(), opt=True)
    if r.random() < 0.25:
        b.add("オンライン参加用URL：", c.url(), opt=True)
    return b


def _g_resume(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    now = c.day()
    b.add(f"履　歴　書　　　　{c.date('wareki', when=now)}現在")
    p = c.new_person()
    b.add("ふりがな　", c.name(p, "hira") if r.random() < 0.8 else c.name(p, "kata"))
    b.add("氏　　名　", c.name(p, "full"))
    age = r.randint(19, 60)
    b.add(f"生年月日　{c.birth(now.year - age - 1)}生（満{age}歳）　{r.choice(('男', '女', ''))}")
    a, pref = c.address()
    b.add("現住所　〒", c.postal(pref))
    b.add("　　　　", a)
    b.add("電話　", c.phone(r.choice(("fixed", "mobile"))), "　携帯　", c.phone("mobile"))
    b.add("E-mail　", c.email())
    if r.random() < 0.3:
        a2, pref2 = c.address()
        b.add("連絡先　〒", c.postal(pref2), "　", a2, opt=True)
    else:
        b.add("連絡先　同上", opt=True)
    b.add("学歴・職歴")
    y = now.year - age + 17 - r.randint(0, 1)
    pname = r.choice(_PREFS)[0]
    b.add(f"{y}年3月　{pname}立{r.choice(('第一', '中央', '東', '西', '南'))}高等学校 卒業")
    uni = r.choice(_UNIVERSITIES)[0]
    b.add(f"{y + 4}年3月　{uni} {r.choice(('経済学部', '工学部', '文学部', '法学部'))} 卒業")
    name, _, _ = c.company()
    b.add(f"{y + 4}年4月　{name} 入社　{r.choice(_CO_DEPTS)}に配属")
    b.add("現在に至る", opt=True)
    b.add("免許・資格")
    b.add(f"{y + 1}年8月　普通自動車第一種運転免許 取得", opt=True)
    b.add(f"{y + 5}年{r.randint(1, 12)}月　TOEIC Listening & Reading {r.randint(50, 99) * 10}点", opt=True)
    if r.random() < 0.3:
        b.add("ポートフォリオ：", c.url(), opt=True)
    b.add(c.negative(), opt=True)
    b.add("本人希望記入欄　貴社の規定に従います。", opt=True)
    return b


def _g_order_mail(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    shop, shop_pool, kind = c.company()
    dom = c.domain(shop_pool)
    order = r.choice((c.bad12(), c.bad13(), f"{_digits(r, 3)}-{_digits(r, 7)}-{_digits(r, 7)}",
                      f"{c.date('ymd')[:4]}{_digits(r, 4)}-{_digits(r, 6)}"))
    if order.isdigit():
        c.plant("order", order, order)
    b.add(f"件名：【{shop_pool.name}】ご注文ありがとうございます（注文番号：{order}）")
    p = c.new_person()
    b.add(c.name(p, r.choice(("full", "full", "sur"))), " 様")
    b.add(f"この度は{shop_pool.name}オンラインストアをご利用いただき、誠にありがとうございます。")
    b.add(f"■ご注文番号：{order}")
    b.add(f"■ご注文日時：{c.date('ymd')} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}")
    b.add("■お届け先")
    a, pref = c.address()
    b.add("〒", c.postal(pref), r.choice(("　", " ", "\u3000")), a)
    b.add(c.name(p, "full") if r.random() < 0.7 else c.person("full"), " 様")
    b.add("電話番号：", c.phone(r.choice(("mobile", "mobile", "fixed"))))
    prod, code, price = r.choice(_PRODUCTS)
    n = c.jan()
    b.add(f"■ご注文商品：{prod}（型番 {code}{r.randint(100, 9999)}）× {r.randint(1, 3)}　¥{price:,}（税込）")
    b.add(f"　JAN：{c.plant('jan', n, n)}", opt=True)
    pay = r.random()
    if pay < 0.6:
        b.add(f"■お支払い方法：クレジットカード（{r.choice(('VISA', 'JCB', 'Mastercard', 'AMEX'))} "
              f"{r.choice(('**** **** **** ', '末尾', '****-****-****-'))}{_digits(r, 4)}）")
    elif pay < 0.75:
        b.add("■お支払い方法：クレジットカード ", c.card())
    else:
        b.add(f"■お支払い方法：{r.choice(('代金引換', 'コンビニ払い', '銀行振込'))}（手数料 {r.choice((0, 330, 440))}円）")
    if r.random() < 0.6:
        t = c.tracking()
        shown = r.choice((t, f"{t[:4]}-{t[4:8]}-{t[8:]}"))
        b.add(f"■配送：{r.choice(('ヤマト運輸', '佐川急便'))}　伝票番号 {c.plant('tracking', shown, t)}")
    b.add("ご注文内容の確認：", c.url(domain=dom, kind="order"))
    if r.random() < 0.15:
        b.add("ご注文時の接続元IPアドレス：", c.ip(), opt=True)
    b.add(c.negative(), opt=True)
    b.add(f"{shop}　カスタマーセンター")
    b.add(c.tel_label(), c.phone(r.choice(("free", "navi", "fixed"))), f"（受付 {r.randint(9, 10)}:00～{r.randint(17, 20)}:00）")
    b.add("メール：", c.email(domain=dom, role=True))
    if r.random() < 0.7:
        b.add("適格請求書発行事業者登録番号：T", _S("CORPORATE_NUMBER", _corp13(c), valid=True))
    if r.random() < 0.4:
        b.add(*c.postal_address(building=0.7), opt=True)
    return b


def _g_html(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    kind = r.choices(("roster", "mynumber", "clients", "log", "payment"), (28, 18, 20, 20, 14))[0]
    title = {"roster": "会員名簿", "mynumber": "個人番号管理台帳", "clients": "取引先一覧", "log": "管理画面 アクセスログ",
             "payment": "決済情報"}[kind]
    b.add(f"<h2>{title}</h2>")
    b.add(r.choice(('<table border="1">', '<table class="list">', "<table>")))
    rows = r.randint(3, 6)
    if kind == "roster":
        b.add("<tr><th>No.</th><th>氏名</th><th>フリガナ</th><th>電話番号</th><th>メールアドレス</th></tr>")
        for i in range(rows):
            p = c.new_person()
            b.add("<tr>", *_td(str(i + 1)), *_td(c.name(p, "full")), *_td(c.name(p, "kata")),
                  *_td(c.phone(r.choices(("mobile", "fixed", "intl"), (70, 25, 5))[0])), *_td(c.email()), "</tr>")
        if r.random() < 0.5:
            b.add("<tr><th>住所</th>", '<td colspan="4">', *c.postal_address(), "</td></tr>", opt=True)
    elif kind == "mynumber":
        b.add("<tr><th>社員番号</th><th>氏名</th><th>個人番号</th><th>取得日</th></tr>")
        for _ in range(rows):
            b.add("<tr>", *_td(f"E{_digits(r, 5)}"), *_td(c.person("full")), *_td(c.my_number()),
                  *_td(c.date("slash")), "</tr>")
    elif kind == "clients":
        b.add("<tr><th>取引先名</th><th>法人番号</th><th>所在地</th><th>電話</th><th>FAX</th></tr>")
        for _ in range(rows - 1):
            name, _, ck = c.company()
            b.add("<tr>", *_td(name), *_td(c.corporate_number(ck)), *_td(c.address(building=0.6)[0]),
                  *_td(c.phone("fixed")), *_td(c.fax()), "</tr>")
    elif kind == "log":
        b.add("<tr><th>日時</th><th>ユーザー</th><th>接続元IP</th><th>操作</th></tr>")
        for _ in range(rows + 1):
            who: _Seg = c.person("full") if r.random() < 0.6 else c.email(domain=c.domain())
            b.add("<tr>", *_td(f"{c.date('slash')} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"),
                  *_td(who), *_td(c.ip()),
                  *_td(r.choice(("ログイン", "ログイン失敗", "CSV出力", "顧客情報閲覧", "パスワード変更"))), "</tr>")
    else:
        b.add("<tr><th>注文ID</th><th>会員名</th><th>カード番号</th><th>金額</th></tr>")
        for _ in range(rows):
            oid = c.bad12()
            b.add("<tr>", *_td(c.plant("order", oid, oid)), *_td(c.person("full")), *_td(c.card()), *_td(c.price()),
                  "</tr>")
    b.add("</table>")
    b.add(f"<p>{c.negative()}</p>", opt=True)
    if r.random() < 0.4:
        b.add('<p>お問い合わせ：<a href="', c.url(), '">サポート窓口</a></p>', opt=True)
    return b


_GENRE_FUNCS = {"notice": _g_notice, "lease": _g_lease, "application": _g_application,
                "business_mail": _g_business_mail, "chat": _g_chat, "judgment": _g_judgment, "minutes": _g_minutes,
                "resume": _g_resume, "order_mail": _g_order_mail, "html_table": _g_html}
_GENRE_WEIGHTS = (11, 10, 12, 11, 11, 8, 8, 9, 10, 11)


# ---------------------------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------------------------


def _generate(n: int, split: str, seed: int = 0) -> Iterator[tuple[dict, list[_S], list[Negative]]]:
    """Records with their spans' generator-side details and the planted negatives."""
    for i, genre, ctx, (text, spans, metas) in common.documents(
            n, split, seed, stream="klue-pipeline/pii-evalgen-ja", pools=pools, genres=_GENRE_FUNCS,
            weights=_GENRE_WEIGHTS, context=_Ctx):
        negs = [neg for neg in ctx.negatives if neg.text in text]  # a dropped optional line takes its negative
        yield ({"id": f"ja-{split}-{seed}-{i:05d}", "genre": genre, "split": split, "text": text, "spans": spans},
               metas, negs)


def generate(n: int, split: str, seed: int = 0) -> Iterator[dict]:
    """`n` documents of `split` ("dev" or "heldout"), deterministic in (split, seed); document i does not
    depend on n, so a shorter run is a prefix of a longer one."""
    for rec, _, _ in _generate(n, split, seed):
        yield rec


write_split = common.split_writer(generate)


label_counts = partial(common.label_counts, labels=LABELS)
