"""Japanese: kana/kanji script test, MeCab (UniDic) words, rule-based sentences, web boilerplate, thresholds.

Normalization: NFKC. Japanese web text writes the same letters in several widths: full-width Latin letters
and digits (ＰＣ, ２０２０) next to ASCII ones, half-width katakana (ｶﾀｶﾅ) next to full-width ones, and
compatibility characters such as ㈱ or ①. NFKC folds each of these to one form, so that the character-shingle
dedup, the decontamination n-grams (NFKC-folded already in `corpora.decontaminate`), MeCab's dictionary (UniDic
has full-width katakana entries only: ｶﾀｶﾅ is an unknown word, カタカナ is 片仮名) and the tokenizer's vocabulary
all see one spelling per word. Japanese BERT tokenizers do the same (transformers' `BertJapaneseTokenizer` word
tokenizers apply NFKC by default, `normalize_text=True`). FineWeb-2 does not normalize: its final FTFYFormatter
keeps `normalization=None` and `fix_character_width=False` (datatrove `pipeline/formatters/ftfy.py`, whose
comment says the width fix "enforces the WRONG punctuation for chinese and japanese"), i.e. it keeps the page's
own characters. The price of NFKC here: full-width ！？（）：become ASCII and … becomes "...", so the sentence
rules and the checks below accept both forms. 。、「」 have no compatibility mapping and stay as they are.

Words: FineWeb-2 splits Japanese with spaCy's blank "ja" pipeline (datatrove `assets/tokenizer_assignment.csv`,
row `jpn,ja,Jpan,Japanese,Japonic,SpaCyTokenizer,ja`), i.e. SudachiPy with SudachiDict-core in split mode A
(datatrove `utils/japanese_tokenizer.py`: `split_mode = null`, which is A), whitespace tokens dropped. Here
words come from MeCab (mecab-python3, already a dependency for Korean) with the `unidic-lite` dictionary (UniDic
2.1.2): UniDic short units, which Sudachi's mode A is defined to follow ("the shortest units equivalent to the
UniDic short unit", Sudachi's README), without SudachiPy's extra native package and dictionary. On real text
the two agree closely (WORDS_PER_SUDACHI_WORD), so FineWeb-2's thresholds are used as they are (see DEFAULTS).

Sentences: hand-written regex rules (JAPANESE_SENTENCE_RULES). Why no library: `bunkai` runs the pure-Python
Janome analyzer on every text (slow on the corpus path), pulls in emoji, spans, dataclasses-json and toml, and
its last release (1.5.7, 2023) declares Python <3.12 while this project supports 3.10-3.13.
`ja_sentence_segmenter` is light (pure Python, no dependencies, maintained) but returns strings, not the
character spans `sentence_spans` must give (the decontamination stage cuts sentences by offset); it deletes
every U+222F of the input (its escape sentinel), protects only 「」 and () and at any length, leaves a closing
bracket after 。/！ to the next sentence and has no rule for the period; wrapping it would take more code than
the rules below.
"""

from __future__ import annotations

import bisect
import os
import re
import unicodedata
from collections.abc import Sequence
from typing import Any, ClassVar

from corpora.lang.base import Language, PackFacts, append_stripped

# ---- script -------------------------------------------------------------------------------------------------
# Every assigned code point listed is a Unicode letter (L* or Nl), so `Language.letter_count` counts it too and
# the script ratio stays <= 1 (tests check this over the whole class). Left out on purpose: the voiced-sound
# marks U+3099-309C (Mn/Sk, not letters), ゠ U+30A0 and the middle dots ・ U+30FB and ･ U+FF65 (punctuation).
HIRAGANA = "\u3041-\u3096\u309d-\u309f"  # ぁ-ゖ, ゝゞゟ
KATAKANA = "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff"  # ァ-ヺ (with ヵヶ), the prolonged sound mark ー, ヽヾヿ, ㇰ-ㇿ
HALFWIDTH_KATAKANA = "\uff66-\uff9f"  # ｦ-ﾝ, ｰ, ﾞﾟ (NFKC folds them into the full-width block)
KANA_SUPPLEMENT = "\U0001b000-\U0001b16f"  # hentaigana, historic and small kana
# 々〆〇, the vertical kana repeat marks 〱-〵, 〻; CJK unified ideographs, extension A, the compatibility
# ideographs, and extensions B-H with the compatibility supplement (U+20000-323AF).
KANJI = "\u3005-\u3007\u3031-\u3035\u303b\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U000323af"
JAPANESE_CHARS = HIRAGANA + KATAKANA + HALFWIDTH_KATAKANA + KANA_SUPPLEMENT + KANJI
_NON_JAPANESE = re.compile(f"[^{JAPANESE_CHARS}]+")
# Kana proper (not ー or the iteration marks, which say little alone): what tells Japanese from Chinese.
_WORD_CHAR = re.compile(r"\w")
_KANA = re.compile("[\u3041-\u3096\u30a1-\u30fa\uff66-\uff6f\uff71-\uff9d\U0001b000-\U0001b16f]")

# ---- words --------------------------------------------------------------------------------------------------
# MeCab + unidic-lite tokens per FineWeb-2 token (datatrove SpaCyTokenizer("ja"), i.e. Sudachi mode A), measured
# on the first 2,000 paragraphs of ja/corpus/wiki/jawiki_jaquad_paragraphs.jsonl (shared data; 791,260
# characters; datatrove 0.10.1, SudachiPy 0.7.0, SudachiDict-core 20261015, mecab-python3 1.0.12, unidic-lite
# 1.0.8) and, in brackets, on 250 files of ja/corpus/reviews (78,919 characters of informal text):
#   all tokens (the unit of new_line_ratio, of the '#' and ellipsis ratios and of the repetition n-grams):
#     1.005 (0.998); 98.1 % of the two tokenizers' word boundaries coincide; 0.603 MeCab tokens per character;
# The Gopher quality filter takes these tokens as its words and leaves out the all-punctuation ones from the
# word count and mean length, as datatrove does, so its thresholds are FineWeb-2's as well.
WORDS_PER_SUDACHI_WORD = 1.005

# MeCab builds a lattice over its whole input: a line of a million characters took 1.2 GB (measured). Lines are
# analysed one at a time (a newline is a word boundary anyway), and a line longer than this is cut after the
# last sentence end, comma or space before the limit (at the limit when there is none in its second half).
MAX_PARSE_CHARS = 4096
_CUTS = "。｡！？!?、，, \t"

_TAGGER: tuple[int, Any] | None = None  # (pid, MeCab.Tagger): one per process, made on first use


def _tagger() -> Any:
    """This process's MeCab tagger, made on first use and made again in a forked child (the stages fork worker
    processes). Nothing is loaded at import: validating a recipe imports this module."""
    global _TAGGER
    pid = os.getpid()
    if _TAGGER is None or _TAGGER[0] != pid:
        import MeCab

        # -Owakati: surfaces separated by spaces, the cheapest output.
        _TAGGER = (pid, MeCab.Tagger(f"{unidic_args()} -Owakati"))
    return _TAGGER[1]


def unidic_args() -> str:
    """MeCab's arguments for unidic-lite's dictionary, with the dictionary's own (empty) mecabrc, so that no
    /etc/mecabrc or MECABRC picks another dictionary. Shared with the PII name recognizer's tagger."""
    try:
        import unidic_lite
    except ModuleNotFoundError:
        raise ModuleNotFoundError("language 'ja' needs MeCab's UniDic dictionary: pip install "
                                  "'klue-pipeline[ja]' (unidic-lite)") from None
    d = unidic_lite.DICDIR
    return f'-r "{os.path.join(d, "mecabrc")}" -d "{d}"'


def line_pieces(line: str) -> list[tuple[int, str]]:
    """(offset, piece) parts of `line` of at most MAX_PARSE_CHARS characters each, cut after the last sentence
    end, comma or space before the limit (at the limit when there is none in the second half). Shared with the
    Japanese PII name recognizer (`corpora.lang.ja.pii.names`), which needs the offsets."""
    out = []
    pos = 0
    while len(line) - pos > MAX_PARSE_CHARS:
        cut = max(line.rfind(c, pos, pos + MAX_PARSE_CHARS) for c in _CUTS) + 1
        if cut <= pos + MAX_PARSE_CHARS // 2:
            cut = pos + MAX_PARSE_CHARS
        out.append((pos, line[pos:cut]))
        pos = cut
    out.append((pos, line[pos:]))
    return out


# ---- sentences ----------------------------------------------------------------------------------------------
JAPANESE_SENTENCE_RULES = """
1. A newline always ends a sentence; sentences are stripped of surrounding whitespace.
2. 。 and ｡ end a sentence; so do ！？!? and the period (．, or . as NFKC writes it), except that
   - a period or ! ? right after an ASCII or full-width letter or digit ends a sentence only when whitespace
     or the end of the line follows (3.5, ver.2, example.com, Yahoo!ニュース stay whole);
   - a period after a line-initial number (1. はじめに) is a list marker;
   - two or more periods (... ．．) are an ellipsis, not an end.
   A run of terminal punctuation (！？, 。。) is one end.
3. Closing brackets and quotes 」』）】〕〉》”’)］ right after the terminal punctuation stay with the sentence.
4. Inside a bracket pair 「」『』（）()【】“”｢｣ that closes on the same line within 200 characters nothing
   splits: 「はい。行きます。」と言った。 is one sentence. A longer or unclosed bracket protects nothing: web
   text has stray and truncated brackets, and one of them must not merge a whole page into one sentence.
5. After a closing bracket, or after ！？!?, the sentence goes on when the next character is と, っ, の or a
   comma (「行こう！」と言った, 本当？って聞いた, 「頑張れ！」の声): a Japanese sentence does not begin with
   these particles. A plain 。 always ends a sentence outside brackets.
"""

_TERMINALS = "。｡！？!?．."
_CLOSERS = "」』）】〕〉》”’)］]｣"
_BOUNDARY = re.compile(f"(?:[{re.escape(_TERMINALS)}]+[{re.escape(_CLOSERS)}]*)+")
_PAIRS = {"「": "」", "『": "』", "（": "）", "(": ")", "【": "】", "“": "”", "｢": "｣"}
_OPENING_OF = {c: o for o, c in _PAIRS.items()}
_BRACKET = re.compile(f"[{re.escape(''.join(_PAIRS) + ''.join(_OPENING_OF))}]")
_MAX_QUOTE = 200
_ALNUM = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                   "０１２３４５６７８９ａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ"
                   "ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺ")
_PERIODS = ".．"
_CONTINUATION = frozenset("とっの、，,")
_LIST_NUMBER = re.compile(r"\s*[0-9０-９]{1,3}")


def _protected(line: str) -> list[tuple[int, int]]:
    """Disjoint, sorted (open, close) offsets of the bracket pairs inside which no sentence ends (rule 4)."""
    if _BRACKET.search(line) is None:
        return []
    stack: list[tuple[str, int]] = []  # (opening character, offset)
    spans: list[tuple[int, int]] = []
    for m in _BRACKET.finditer(line):
        c, i = m.group(), m.start()
        if c in _PAIRS:
            stack.append((c, i))
            continue
        opener = _OPENING_OF[c]
        for k in range(len(stack) - 1, -1, -1):  # the nearest matching opener; unclosed ones inside it go
            if stack[k][0] == opener:
                o = stack[k][1]
                del stack[k:]
                if i - o <= _MAX_QUOTE:
                    spans.append((o, i))
                break
    spans.sort()
    merged: list[tuple[int, int]] = []
    for o, e in spans:  # a protected pair inside another one adds nothing
        if merged and o < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((o, e))
    return merged


def _line_sentences(line: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    spans = _protected(line)
    opens = [o for o, _ in spans]
    start = 0
    n = len(line)
    for m in _BOUNDARY.finditer(line):
        a, b = m.span()
        if spans:  # is the run's last character strictly inside a protected pair? (its closer is not)
            k = bisect.bisect_left(opens, b - 1) - 1
            if k >= 0 and b - 1 < spans[k][1]:
                continue
        run = m.group()
        core = run.rstrip(_CLOSERS)
        nxt = line[b] if b < n else ""
        if len(core) > 1 and all(ch in _PERIODS for ch in core):
            continue  # an ellipsis
        if len(core) == 1 and core in ".．!?" and a > 0 and line[a - 1] in _ALNUM:
            if nxt and not nxt.isspace():
                continue  # 3.5, ver.2, Yahoo!ニュース
            if core in _PERIODS and _LIST_NUMBER.fullmatch(line, start, a):
                continue  # 1. はじめに
        if nxt in _CONTINUATION and (len(core) < len(run) or core[-1] not in "。｡．."):
            continue  # 「行こう！」と言った, 本当？って
        append_stripped(out, line, start, b)
        start = b
    append_stripped(out, line, start, n)
    return out


# ---- boilerplate --------------------------------------------------------------------------------------------
_I = re.IGNORECASE
# Navigation, share and account buttons and footer links: a line made only of these is a menu.
_UI_WORDS = (
    r"ログイン|ログアウト|新規(?:会員)?登録|会員登録|無料登録|マイページ|シェア(?:する)?|ツイート(?:する)?|"
    r"ポスト|いいね|ブックマーク|はてな(?:ブックマーク|ブログ)?|はてブ|LINEで送る|LINE|Pocket|Facebook|"
    r"Twitter|Instagram|YouTube|RSS|フォロー(?:する)?|共有(?:する)?|印刷(?:する)?|メール|お問い?合わせ|"
    r"サイトマップ|利用規約|プライバシー\s*ポリシー|個人情報(?:保護方針|の取り?扱い)|サイトポリシー|"
    r"免責事項|会社概要|運営会社|特定商取引法に基づく表記|ヘルプ|よくある(?:ご)?質問|FAQ|ホーム|トップ|"
    r"TOP|HOME|(?:この)?ページ(?:の)?(?:先頭|トップ|上)へ(?:戻る)?|(?:先頭|トップ|TOP)(?:に|へ)戻る|"
    r"前へ|次へ|戻る|前の(?:記事|ページ)|次の(?:記事|ページ)|(?:記事)?一覧(?:へ|に戻る)?|もっと見る|"
    r"続きを読む|詳しくはこちら|詳細はこちら|こちら|検索|メニュー|閉じる|コメント(?:\s*\d+\s*件?)?|\d+\s*件"
)
BOILERPLATE = (
    # copyright footers: "Copyright © 2020 ...", "© ...", "All Rights Reserved", 著作権は…に帰属します
    re.compile(r"^\W*(?:[©ⓒ]|\(c\)|copyright\b)|all\s+rights\s+reserved", _I),
    re.compile(r"著作権(?:は|者)?.{0,30}(?:帰属|所有|保有)"),
    re.compile(r"無断(?:で)?(?:転載|転用|複製|複写|使用|引用|掲載)(?:・[^\s、。]{1,4})*(?:を|は)?"
               r"(?:禁|固く禁|ご遠慮|お断り)|転載禁止"),
    # share buttons with a target: この記事をシェアする, Twitterでツイート, LINEで送る
    re.compile(r"^\W*(?:この(?:記事|ページ)を)?(?:\w{1,12}で)?(?:シェア|ツイート|共有|ブックマーク|送る)"
               r"(?:する|しよう|しましょう)?\W*$"),
    # blog and news sidebar headings
    re.compile(r"^\W*(?:関連(?:する)?記事|人気(?:の)?記事|おすすめ(?:の)?記事|新着(?:記事|情報)|"
               r"最近の(?:投稿|記事|コメント)|最新(?:の)?記事|アーカイブ|カテゴリー?|タグ(?:一覧)?|"
               r"スポンサー(?:リンク|ドリンク)|広告|PR)\W*$", _I),
    # article metadata: 投稿日：2020年…, 最終更新日: …
    re.compile(r"^\W*(?:投稿日|更新日|公開日|最終更新日|掲載日)(?:時)?\s*[:：]"),
    re.compile(r"JavaScript.{0,10}(?:有効|無効|オン|オフ)", _I),
    re.compile(r"ログイン(?:して|する|が必要|後)"),
    # a line of UI words only. Each separator run is taken once (after a word), so that a long line of
    # punctuation cannot make the regex backtrack exponentially.
    re.compile(rf"^[\W_]*(?:(?:{_UI_WORDS})[\W_]*)+$", _I),
)

# ---- thresholds ---------------------------------------------------------------------------------------------
# FineWeb-2 configs/jpn_Jpan.yml and fineweb-2-pipeline.py (huggingface/fineweb-2), cited per key; values in
# FineWeb-2's words (Sudachi mode A) are rescaled by the ratios measured above where our unit differs.
# These are the knobs without a default in their filter (corpora/filters/); length, boilerplate, the checks the
# pipeline disables, ... are the same for every language and declared there. Script: most letters must be kana or
# kanji, in a text that has kana (the script filter's 0.5; FineWeb-2's GlotLID score >= 0.886 in jpn_Jpan.yml).
DEFAULTS: dict[str, Any] = {
    # Gopher repetition: jpn_Jpan.yml dup_line_frac, top_n_grams, dup_n_grams. They are character fractions of
    # word n-grams, and our words are FineWeb-2's within 1 % (WORDS_PER_SUDACHI_WORD): kept as they are.
    "dup_line_frac": 0.375,
    "top_ngram_fracs": {2: 0.121, 3: 0.129, 4: 0.145},
    "dup_ngram_fracs": {5: 0.307, 6: 0.283, 7: 0.264, 8: 0.248, 9: 0.234, 10: 0.223},
    # Gopher quality, on the MeCab tokens (WORDS_PER_SUDACHI_WORD: FineWeb-2's within 1 %), all-punctuation
    # tokens left out of the word count and mean length as in datatrove: min_doc_words 50 (datatrove's default,
    # kept by the pipeline), jpn_Jpan.yml min/max_avg_word_length 1 / 5 (the minimum never fails: no word is
    # shorter than one character), max_symbol_word_ratio 0.1 (datatrove default), max_non_alpha_words_ratio
    # 0.759 (jpn_Jpan.yml; really a minimum share of words with a letter).
    "gopher_min_words": 50,
    "min_avg_word_length": 1.0,
    "max_avg_word_length": 5.0,
    "max_symbol_word_ratio": 0.1,
    "min_alpha_words_ratio": 0.759,
    # FineWeb quality: line_punct_thr 0.167 (jpn_Jpan.yml); new_line_ratio 0.162 newlines per word (jpn_Jpan.yml),
    # our words being FineWeb-2's within 1 %: kept.
    "line_punct_thr": 0.167,
    "new_line_ratio": 0.162,
}

# FineWeb-2 configs/jpn_Jpan.yml `stopwords` (Sudachi mode A surfaces), which UniDic short units cut the same:
# particles の に を は が と で, auxiliaries た れ, て, する's し and さ, 年 and 月 after numbers, the middle dot ・.
STOP_WORDS = ("の", "に", "を", "は", "た", "て", "が", "と", "で", "年", "し", "・", "月", "れ", "さ")

# The Japanese part of datatrove's TERMINAL_PUNCTUATION (FineWeb-2's line-ending check), where … is not an end.
TERMINAL_PUNCTUATION = ("。", "｡", "！", "？", "!", "?", "．", ".")


# ---- PII (the pack: corpora/lang/ja/pii/) ---------------------------------------------------------------------
# The types shared with Korean where the thing is the same (a phone number, an address, a name), and two of its
# own: MY_NUMBER (個人番号, 12 digits with a check digit; it encodes nothing, unlike a resident registration
# number, and the law gives it its own category, 特定個人情報) and CORPORATE_NUMBER (法人番号, 13 digits, the tax
# agency's number of a legal entity, and 会社法人等番号, the commercial registry's 12 digits). Postal codes are on
# by default here: seven digits name a block of streets (a Korean postal code names a district), and `〒` marks
# them unambiguously.
PII_TYPES = ("PERSON", "PHONE", "FAX", "MY_NUMBER", "CORPORATE_NUMBER", "POSTAL_CODE", "CARD", "EMAIL", "URL", "IP",
             "ADDRESS")
# The structured identifiers of the evaluation's `structured` row (postal codes are left out, as in Korean).
PII_STRUCTURED_TYPES = ("PHONE", "FAX", "MY_NUMBER", "CORPORATE_NUMBER", "CARD", "EMAIL", "URL", "IP")
# Its names need the `ja` extra (unidic-lite); importing the pack does not load MeCab.
PII = PackFacts(pack="corpora.lang.ja.pii:JAPANESE", types=PII_TYPES, faker_locale="ja_JP", presidio_region="JP",
                structured=PII_STRUCTURED_TYPES, surrogates="corpora.lang.ja.surrogates:surrogate",
                key_packages=("mecab-python3", "unidic-lite", "python-stdnum"))


class Japanese(Language):
    code: ClassVar[str] = "ja"
    name: ClassVar[str] = "Japanese"
    normalization_form = "NFKC"
    non_script_re: ClassVar[re.Pattern[str]] = _NON_JAPANESE
    terminal_punctuation: ClassVar[tuple[str, ...]] = TERMINAL_PUNCTUATION
    boilerplate_patterns: ClassVar[Sequence[re.Pattern[str]]] = BOILERPLATE
    stop_words: ClassVar[tuple[str, ...]] = STOP_WORDS
    default_thresholds: ClassVar[dict[str, Any]] = DEFAULTS
    whitespace_words: ClassVar[bool] = False  # MeCab tokens, not spaces

    # `letter_count` is the base one (any Unicode letter: kana, kanji, ー and 々 included, Latin, Hangul, ...;
    # not digits, punctuation or symbols), so the script ratio is the Japanese share of all letters.

    def script_count(self, text: str) -> int:
        """Kana and kanji, but none in a text without kana: kanji alone are as much Chinese as Japanese, and the
        script test stands in for language ID. (A Japanese text of 30 characters or more without any kana is a
        list of names or a table, not prose.)"""
        if _KANA.search(text) is None:
            return 0
        return len(_NON_JAPANESE.sub("", text))

    def split_words(self, text: str) -> list[str]:
        """MeCab (UniDic short unit) surfaces, line by line; whitespace is never a word, punctuation tokens are
        words (as in FineWeb-2's tokenizer)."""
        if "\x00" in text:  # MeCab reads a C string; the normalizer removes NUL, a caller may not normalize
            text = text.replace("\x00", " ")
        parse = _tagger().parse
        words: list[str] = []
        for line in text.split("\n"):
            if len(line) <= MAX_PARSE_CHARS:
                if line and not line.isspace():
                    words += parse(line).split()
            else:
                for _, piece in line_pieces(line):
                    words += parse(piece).split()
        return words

    mecab_dictionary: ClassVar[str | None] = "unidic-lite"
    pii: ClassVar[PackFacts | None] = PII
    card_example: ClassVar[str | None] = "日本の首都は{mask}です。"
    evaluation_suite: ClassVar[str | None] = "jglue"

    def morphemes(self, chunk: str) -> list[str]:
        """The MeCab tokens of `split_words` (UniDic short units): pre-tokenization's morphemes."""
        return self.split_words(chunk)

    def match_words(self, text: str) -> list[str]:
        """MeCab tokens of the NFKC-folded, case-folded text that hold a word character: a `\\w+` run is a whole
        clause in Japanese (a JSTS caption is one or two of them), so n-grams of runs would never match."""
        return [w for w in self.split_words(unicodedata.normalize("NFKC", text).casefold()) if _WORD_CHAR.search(w)]

    def match_word_spans(self, text: str) -> list[tuple[str, tuple[int, int]]]:
        """The tokens of `text` itself with their spans, each then folded as in `match_words`. The corpus is
        NFKC already (`normalization_form`), so its tokens are those of `match_words`."""
        out, pos = [], 0
        for w in self.split_words(text):
            a = text.index(w, pos)
            pos = a + len(w)
            if _WORD_CHAR.search(w):
                out.append((unicodedata.normalize("NFKC", w).casefold(), (a, pos)))
        return out

    def line_sentence_spans(self, line: str) -> list[tuple[int, int]]:
        """(start, end) of each sentence of one line, stripped (JAPANESE_SENTENCE_RULES)."""
        return _line_sentences(line)


JAPANESE = Japanese()
