"""Japanese person names: MeCab with UniDic (unidic-lite) tags, anchored by a given name or an honorific.

UniDic gives person names the part of speech 名詞-固有名詞-人名 with a fourth level: 姓 (surname), 名 (given
name) or 一般 (a name it cannot split, mostly foreign ones: ジョン, スミス). The rules:

- a 姓 right before a 名 (山田太郎, 田中 花子) is a full name;
- a 姓, a 名 or a full name right before an honorific (様, さま, さん, 氏, 君, くん, ちゃん, 先生, 殿; a space
  between is allowed, as letters print `山田 様`) is a name; the honorific stays outside the span;
- foreign names (一般) joined by the middle dot (ジョン・スミス) are a full name; a lone 一般 only before an
  honorific (トムさん);
- a lone 姓 or 名 is not a name: most surnames are also place names (中村, 松本, 吉田) or words (林, 森, 原),
  and UniDic tags them 姓 by default. Measured on the first 2,000 jawiki paragraphs: lone 姓 tokens outnumber
  full names several times over, and most of them are towns, stations, rivers and companies;
- a full name glued to a place or facility suffix (松本城, 山田町, 田中駅) is a place, not a person;
- a one-character stem that is a common word before 様 (王様, 神様) is no name.

Why MeCab over the whole line, unlike the Korean pack's candidate-first scan: Japanese has no spaces and no
closed set of surname syllables to look for, so only the analyser finds where a name starts; MeCab with
unidic-lite analyses ~1 MB/s per core, a small share of the pipeline's time.

The tagger prints a feature format (`%M`: the surface with the white space before it, so offsets add up; the
first four POS levels), one per process, made lazily and made again after a fork, like `corpora.lang.ja`'s.
"""

from __future__ import annotations

import os
import re
from typing import Any

from presidio_analyzer import EntityRecognizer, RecognizerResult

from corpora.lang.ja import line_pieces, unidic_args
from corpora.lang.ja.pii.patterns import LANG, fold

HONORIFICS = frozenset(("様", "さま", "さん", "氏", "君", "くん", "ちゃん", "先生", "殿", "どの"))
# After a full name these make a place, a facility or a work named after a person, not the person.
PLACE_SUFFIXES = frozenset(("駅", "城", "町", "村", "市", "区", "郡", "県", "寺", "神社", "宮", "橋", "線", "通り", "通",
                            "公園", "賞", "杯", "記念館", "小学校", "中学校", "高校", "高等学校", "大学", "病院", "島",
                            "川", "山", "峠", "湖", "池", "港", "家", "流", "派", "邸", "屋", "丸", "号", "墓"))
# Stems UniDic tags 人名 that before 様/さん are ordinary words (王様 king, 神様 god, 仲居さん a maid).
NOT_NAME_STEMS = frozenset(("王", "神", "殿", "姫", "仏", "奥", "皆", "客", "仲居"))
# One-character tails of given names that UniDic leaves outside the 名 token (二階堂清|寿, 市川壽|海, 真島襄一|郎):
# absorbed after a full name, so that the span does not stop inside the name.
# A surname reading of a word that opens a sentence far more often as an adverb (今禎子: 今 + 禎子).
NOT_SURNAMES = frozenset(("今",))
_KANJI_WORD = re.compile("[々〆ヶ\u3400-\u4dbf\u4e00-\u9fff]+")
_HIRAGANA_WORD = re.compile("[\u3041-\u309f]+")
GIVEN_TAILS = frozenset("郎吾寿馬海尹子美夫雄男助介蔵吉平彦江代枝恵乃輔哉也之ヨ")
_KATAKANA = re.compile("[\u30a1-\u30fa\u30fc]")
# katakana words joined by ・, initials (F, F.) allowed inside, a katakana word last; bounded (at most six
# parts of 20 letters), so that a page of ・-joined katakana costs a constant per token, not its length
_KANA_PART = "[\u30a1-\u30fa\u30fc]{1,20}"
_DOTTED_NAME = re.compile(f"{_KANA_PART}(?:・(?:{_KANA_PART}|[A-Z]\\.?)){{0,4}}・{_KANA_PART}(?![\u30a1-\u30fa\u30fc])")

_TAGGER: tuple[int, Any] | None = None


def tagger() -> Any:
    """This process's MeCab tagger with UniDic (unidic-lite) and a feature output format, made on first use
    (and again in a forked child: a tagger is not fork-safe)."""
    global _TAGGER
    pid = os.getpid()
    if _TAGGER is None or _TAGGER[0] != pid:
        import MeCab

        # `-O ""`: not the dictionary's own `unidic` output format, so that -F/-U apply; the doubled
        # backslashes reach MeCab as \t and \n (mecab-python3 unescapes its argument string once).
        fmt = r"%M\\t%f[0],%f[1],%f[2],%f[3]\\n"
        _TAGGER = (pid, MeCab.Tagger(f'{unidic_args()} -O "" -F{fmt} -U{fmt} ' r"-E\\n"))
    return _TAGGER[1]


Token = tuple[int, int, str, str]  # start, end, surface, "pos1,pos2,pos3,pos4"


def tokens(text: str) -> list[Token]:
    """MeCab tokens of `text` with character offsets, line by line (white space is never a token)."""
    parse = tagger().parse
    out: list[Token] = []
    line_start = 0
    for line in text.split("\n"):
        if line and not line.isspace():
            # a tab would read as the field separator, NUL ends MeCab's C string: both become spaces (same length)
            clean = line.replace("\t", " ").replace("\x00", " ")
            for off, piece in line_pieces(clean):
                pos = line_start + off
                for row in parse(piece).split("\n"):
                    surface, tab, feat = row.partition("\t")
                    if not tab:
                        continue
                    body = surface.lstrip()  # %M: the white space MeCab skipped before the token, then the token
                    start = pos + len(surface) - len(body)
                    pos += len(surface)
                    if body:
                        out.append((start, pos, body, feat))
        line_start += len(line) + 1
    return out


def _kind(feat: str) -> str:
    """'姓', '名', '一般' for a person-name token, '' otherwise."""
    if feat.startswith("名詞,固有名詞,人名,"):
        return feat[len("名詞,固有名詞,人名,"):]
    return ""


def _full_name(sei: Token, mei: Token) -> bool:
    """A 姓 token then a 名 token make a full name when the surname is written in kanji (not 高い|へい, an
    adjective misread), is not an adverb (今), and a one-kanji surname is not followed by a kana given name
    (its okurigana, more likely)."""
    if _kind(sei[3]) != "姓" or _kind(mei[3]) != "名":
        return False
    if not _KANJI_WORD.fullmatch(sei[2]) or sei[2] in NOT_SURNAMES:
        return False
    return not (len(sei[2]) == 1 and _HIRAGANA_WORD.fullmatch(mei[2]))


def find_names(text: str) -> list[tuple[int, int, float]]:
    """(start, end, score) of the person names in `text` (rules: module docstring)."""
    toks = tokens(text)
    found: list[tuple[int, int, float]] = []
    i, n = 0, len(toks)
    while i < n:
        kind = _kind(toks[i][3])
        if not kind:
            i += 1
            continue
        # a run of name tokens: 姓 名, 姓 + space + 名, adjacent pieces of one unknown name (ヒュー|バート)
        j = i
        kinds = [kind]
        while j + 1 < n:
            nxt = toks[j + 1]
            k2 = _kind(nxt[3])
            gap = text[toks[j][1]:nxt[0]]
            if k2 and (gap == "" or (gap in (" ", "\u3000") and kinds[-1] == "姓" and k2 == "名")):
                kinds.append(k2)
                j += 1
                continue
            break
        # a foreign name written in katakana with middle dots, from its first name on: the whole written
        # name, whatever UniDic makes of its other parts (ジョン・F・ケネディ, アンドレア・デル・サルト)
        dotted = False
        first = toks[i]
        if kind == "一般" and (first[0] == 0 or not _KATAKANA.match(text, first[0] - 1)):
            m = _DOTTED_NAME.match(text, first[0])
            if m and m.end() > toks[j][1]:
                k = j
                while k + 1 < n and toks[k + 1][1] <= m.end():
                    k += 1
                # two of its dot-separated parts must hold a UniDic name (not ディズニー・シー)
                parts = {text.count("・", first[0], t[0]) for t in toks[i:k + 1] if _kind(t[3])}
                if toks[k][1] == m.end() and len(parts) >= 2:
                    j, dotted = k, True
        run = toks[i:i + len(kinds)]
        full = any(_full_name(a, b) for a, b in zip(run, run[1:], strict=False))
        if (full and j + 1 < n and toks[j + 1][0] == toks[j][1] and len(toks[j + 1][2]) == 1
                and toks[j + 1][2] in GIVEN_TAILS):
            j += 1
        start, end = toks[i][0], toks[j][1]
        after = toks[j + 1] if j + 1 < n else None
        gap = text[end:after[0]] if after else ""
        honorific = after is not None and after[2] in HONORIFICS and gap in ("", " ", "\u3000")
        foreign = dotted
        glued_place = after is not None and gap == "" and after[2] in PLACE_SUFFIXES
        if honorific and text[start:end] not in NOT_NAME_STEMS:
            found.append((start, end, 0.85))
        elif full and not glued_place:
            found.append((start, end, 0.85))
        elif foreign and not glued_place:
            found.append((start, end, 0.6))
        i = j + 1
    return found


# Names the layout of a document marks, where the analyser sees a lone 姓 or 名 (which it may not count) or
# nothing (a chat nickname in kana). Format rules only, written against the development split of the
# evaluation set (`klue pii gen --language ja`); none lists a name.
_NAME_CHARS = "[々〆ヶ㐀-䶿一-鿿ぁ-ゖァ-ヺー]"
_NAME_RUN = f"{_NAME_CHARS}{{1,8}}(?:[ 　]{_NAME_CHARS}{{1,8}})?"
_PARTICLES = frozenset("はがをにのともへでや")
_ORG_SUFFIXES = frozenset("部課室係社所局院署店")
_HONORIFIC_TAIL = re.compile("(?:" + "|".join(sorted(HONORIFICS, key=len, reverse=True)) + ")$")
# a form's or a judgment's label of a person (not 担当 or 宛先, which as often name a department)
_FIELD = re.compile(
    r"(?:^|(?<=[\s　|｜:：者同【・]))(?:氏[ 　]*名|お名前|名前|ふりがな|フリガナ|原[ 　]*告|被[ 　]*告人?|"
    "代表取締役(?:社長)?|申請者|申込者|契約者|借[ 　]*主|貸[ 　]*主|連帯保証人|保証人|差出人)"
    f"】?[ 　]*[:：]?[ 　]*【?({_NAME_RUN})(?!{_NAME_CHARS})", re.M)
# a chat export's speaker column (LINE: `HH:MM<TAB>name<TAB>message`) and its header line
_CHAT_SPEAKER = re.compile(f"^\\d{{1,2}}:\\d{{2}}\t({_NAME_CHARS}{{1,12}})[^\t\n]{{0,4}}\t", re.M)
_CHAT_HEADER = re.compile(rf"^\[LINE\] ({_NAME_CHARS}{{1,12}})とのトーク履歴", re.M)
# an e-mail header's display name (RFC 5322 `From: Name <addr>`)
_MAIL_FROM = re.compile(f"^(?:From|差出人|送信者)[:：][ 　]*\"?({_NAME_RUN})\"?[ 　]*<", re.M)
# a self-introduction after an organisation: 〇〇株式会社の山口です / 営業部の西村と申します
_INTRO = re.compile(f"(?:(?:株式|合同|有限)会社[^\\s、。の]{{1,20}}|会社|社|部|課|室|係|センター|事務所|事務局)の"
                    f"({_NAME_RUN})(?=です|と申します|でございます)")


# a surname in kanji before a committee's or an office's title, after a list separator (出席者：安藤委員長、斉藤理事)
_TITLED = re.compile("(?:^|(?<=[\\s　、，,:：（(・]))([々一-鿿]{1,4})(?=(?:副?委員長|委員|理事長|理事|議長|"
                     "部長|課長|係長|社長|会長|教授|弁護士|税理士|司法書士|行政書士)(?:[、，,）)\\s　]|$))", re.M)
# an addressee line: a name alone before 様 or 殿 (letters, forms)
_NOT_HONORIFIC = f"(?:(?!様|殿){_NAME_CHARS})"
_ADDRESSEE = re.compile(f"^[ 　]*({_NOT_HONORIFIC}{{1,8}}(?:[ 　]{_NOT_HONORIFIC}{{1,8}})?)[ 　]*(?:様|殿)"
                        "[ 　]*$", re.M)


def anchored_names(text: str) -> list[tuple[int, int, float]]:
    """(start, end, score) of names the document's layout marks (the patterns above); honorifics stay out."""
    out = []
    for rx in (_FIELD, _CHAT_SPEAKER, _CHAT_HEADER, _MAIL_FROM, _INTRO, _TITLED, _ADDRESSEE):
        for m in rx.finditer(text):
            start, end = m.span(1)
            tail = _HONORIFIC_TAIL.search(text, start, end)
            if tail is not None and tail.start() > start:
                end = tail.start()
            end = start + len(text[start:end].rstrip(" 　"))
            # a department the run took before the name (品質保証部 岡本様): the name is the part after it
            head, sep, rest = text[start:end].replace("\u3000", " ").partition(" ")
            if sep and rest and head[-1] in _ORG_SUFFIXES:
                start += len(head) + 1
            # a particle the run took after a name in kanji (山田太郎は): not part of the name
            if end - start > 2 and text[end - 1] in _PARTICLES and _KANJI_WORD.fullmatch(text[end - 2]):
                end -= 1
            if end > start and text[start:end] not in NOT_NAME_STEMS:
                out.append((start, end, 0.6))
    return sorted(out)


class JaPersonRecognizer(EntityRecognizer):
    """PERSON from UniDic's 人名 tags, anchored by a given name, an honorific or a middle dot."""

    def __init__(self) -> None:
        super().__init__(supported_entities=["PERSON"], name="ja_person_mecab", supported_language=LANG,
                         context=[])

    def load(self) -> None:
        tagger()

    def analyze(self, text, entities, nlp_artifacts=None):  # noqa: D102
        text = fold(text)
        return [RecognizerResult("PERSON", s, e, score,
                                 recognition_metadata={RecognizerResult.RECOGNIZER_NAME_KEY: self.name,
                                                       RecognizerResult.RECOGNIZER_IDENTIFIER_KEY: self.id,
                                                       RecognizerResult.IS_SCORE_ENHANCED_BY_CONTEXT_KEY: True})
                for s, e, score in find_names(text) + anchored_names(text)]
