"""Normalization and the Korean language module (script ratio, sentence splitting, stop words)."""

from __future__ import annotations

import unicodedata

import pytest

from corpora.lang import get_language
from corpora.normalize import Normalizer, normalize

KO = get_language("ko")


def test_nfc_composes_decomposed_hangul():
    decomposed = unicodedata.normalize("NFD", "한국어 문장")
    assert len(decomposed) > len("한국어 문장")
    assert normalize(decomposed) == "한국어 문장"


def test_nfkc_is_an_option_and_nfc_keeps_compatibility_forms():
    text = "ＫＬＵＥ ㈜한빛 ①번"
    assert normalize(text, form="NFKC") == "KLUE (주)한빛 1번"
    assert normalize(text, form="NFC") == text


def test_terminal_escapes_controls_and_nul_removed():
    text = "\x1b[1;31m경고\x1b[0m: 파일\x00이 \x1b]0;window title\x07없습니다\x07.\x7f"
    assert normalize(text) == "경고: 파일이 없습니다."


def test_crlf_trailing_spaces_and_whitespace_runs():
    assert normalize("첫 줄   입니다  \r\n둘째\t\t줄\r셋째 줄 ") == "첫 줄 입니다\n둘째 줄\n셋째 줄"


def test_blank_line_runs_capped():
    text = "문단 하나\n\n\n\n\n문단 둘\n \n\n문단 셋"
    assert normalize(text) == "문단 하나\n\n문단 둘\n\n문단 셋"
    assert Normalizer(max_blank_lines=0)(text) == "문단 하나\n문단 둘\n문단 셋"
    assert Normalizer(max_blank_lines=2)(text) == "문단 하나\n\n\n문단 둘\n\n\n문단 셋"


def test_zero_width_and_special_spaces():
    # ZWSP and BOM vanish (they split words invisibly); NBSP and ideographic space become plain spaces;
    # ZWJ stays because it joins emoji sequences.
    text = "\ufeff서\u200b울\u00a0특별시\u3000종로구 👩\u200d💻"
    assert normalize(text) == "서울 특별시 종로구 👩\u200d💻"


def test_normalize_is_idempotent():
    text = "\x1b[2J  가나다 \r\n\n\n\n라마\u200b바  "
    once = normalize(text)
    assert normalize(once) == once


@pytest.mark.parametrize(
    "text, expected",
    [
        ("비가 온다. 우산을 챙겼다.", ["비가 온다.", "우산을 챙겼다."]),
        ("정말요? 네! 그렇죠. 알겠습니다…", ["정말요?", "네!", "그렇죠.", "알겠습니다…"]),
        ("가격은 3.5% 올랐다. 환율은 1,234.5원이다.", ["가격은 3.5% 올랐다.", "환율은 1,234.5원이다."]),
        ('그는 "밥 먹었니? 나는 먹었어."라고 물었다. 대답은 없었다.',
         ['그는 "밥 먹었니? 나는 먹었어."라고 물었다.', "대답은 없었다."]),
        ("그녀는 “좋아요. 갑시다.”라고 말했다. 우리는 떠났다.", ["그녀는 “좋아요. 갑시다.”라고 말했다.", "우리는 떠났다."]),
        ("Mr. Kim은 U.S. 대사관에 갔다. J. K. 롤링도 왔다.", ["Mr. Kim은 U.S. 대사관에 갔다.", "J. K. 롤링도 왔다."]),
        ("2019. 3. 1. 기준으로 집계했다. 다음 달에 발표한다.", ["2019. 3. 1. 기준으로 집계했다.", "다음 달에 발표한다."]),
        ("1. 서론\n연구의 목적은 다음과 같다.", ["1. 서론", "연구의 목적은 다음과 같다."]),
        ("줄바꿈도 경계다\n마침표가 없어도", ["줄바꿈도 경계다", "마침표가 없어도"]),
    ],
)
def test_sentence_splitter(text, expected):
    assert KO.split_sentences(text) == expected


def test_sentence_spans_point_into_the_text():
    text = "첫 문장이다.  두 번째다!\n 세 번째?"
    spans = KO.sentence_spans(text)
    assert [text[a:b] for a, b in spans] == ["첫 문장이다.", "두 번째다!", "세 번째?"]


def test_unbalanced_quote_does_not_swallow_the_rest():
    # a quote still open 300 characters later is taken as unbalanced: splitting resumes after it
    text = '그가 "말했다. ' + "이어지는 문장이다. " * 40 + "끝이다."
    assert KO.split_sentences(text)[-10:] == ["이어지는 문장이다."] * 9 + ["끝이다."]


def test_script_ratio_counts_hangul_among_letters_only():
    assert KO.script_ratio("한국어 123 !!!") == 1.0
    assert KO.script_ratio("한국 ab") == pytest.approx(0.5)
    assert KO.script_ratio("漢字와 한글") == pytest.approx(3 / 5)
    assert KO.script_ratio("12345") == 1.0  # no letters: nothing foreign


def test_stop_words_found_at_eojeol_edges():
    assert KO.stop_word_hits("나는 학교에 갔다".split(), 5) == 3  # 는, 에, 다
    assert KO.stop_word_hits("있었다".split(), 5) == 2  # 있 (stem), 다 (ending)
    assert KO.stop_word_hits("apple banana cherry".split(), 2) == 0


def test_unknown_language_is_a_clear_error():
    with pytest.raises(ValueError, match=r"unknown language 'xx' \(known: ko, ja\)"):
        get_language("xx")
