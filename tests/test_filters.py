"""The filter families (each at its threshold boundary), boilerplate and sentence edits, params validation,
and the filter stage's funnel, per-source overrides, audit files and worker independence."""

from __future__ import annotations

import json
import random
import re
from collections import Counter

import pytest
from pydantic import ValidationError

from corpora.filters import FilterChain
from corpora.filters.base import DocView
from corpora.filters.boilerplate import BoilerplateFilter
from corpora.filters.fineweb_quality import FineWebQualityFilter
from corpora.filters.gopher_quality import _PUNCT, GopherQualityFilter, no_letter_words, symbol_words
from corpora.filters.gopher_repetition import GopherRepetitionFilter, duplicated_ngram_chars
from corpora.filters.length import LengthFilter
from corpora.filters.params import Thresholds
from corpora.filters.script import ScriptFilter
from corpora.filters.sentences import SentenceFilter
from corpora.lang import get_language
from corpora.sources import SourceSpec
from corpora.stages.filter import FilterParams, FilterStage
from testkit.curation import docs_of, folder_bytes, read_all, run_stage, write_shards

KO = get_language("ko")

GOOD = (
    "서울시는 올해 하반기부터 시내버스 노선을 대폭 개편한다고 밝혔다. 시는 출퇴근 시간에 혼잡한 구간을 중심으로 "
    "배차 간격을 줄이고, 이용객이 적은 노선은 통합할 계획이다. 이번 개편은 지난 2년 동안 수집한 교통카드 자료를 "
    "분석한 결과에 따른 것이다. 시 관계자는 시민들의 의견을 충분히 듣고 최종안을 확정하겠다고 말했다."
)


def only(**kw) -> Thresholds:
    """Thresholds with every check off except the given ones."""
    off = {k: None for k, f in Thresholds.model_fields.items() if not f.is_required() and k != "short_line_length"}
    return Thresholds.model_validate({**off, "top_ngram_fracs": {}, "dup_ngram_fracs": {}, **kw})


def check(filter_cls, text: str, **kw) -> str | None:
    return filter_cls(only(**kw), KO).check(DocView(text, KO))


def test_good_korean_paragraph_passes_every_default_filter():
    out = FilterChain(FilterParams(language="ko"))(GOOD)
    assert out.reason is None and out.fails == []
    assert out.text == GOOD


# ---- length ---------------------------------------------------------------------------------------------
def test_length_boundaries():
    text = "가" * 30
    assert check(LengthFilter, text, min_chars=30) is None
    assert check(LengthFilter, text, min_chars=31) == "too_few_chars"
    assert check(LengthFilter, text, max_chars=30) is None
    assert check(LengthFilter, text, max_chars=29) == "too_many_chars"
    words = "하나 둘 셋 넷 다섯"
    assert check(LengthFilter, words, min_words=5) is None
    assert check(LengthFilter, words, min_words=6) == "too_few_words"
    assert check(LengthFilter, words, max_words=4) == "too_many_words"


# ---- script -----------------------------------------------------------------------------------------------
def test_script_ratio_boundary():
    text = "한국어 문장 abcdef"  # 5 Hangul of 11 letters
    assert check(ScriptFilter, text, min_script_ratio=5 / 11) is None
    assert check(ScriptFilter, text, min_script_ratio=0.5) == "low_script_ratio"
    assert check(ScriptFilter, "This is an English sentence only.", min_script_ratio=0.5) == "low_script_ratio"
    assert check(ScriptFilter, "12345 67890 !!!", min_script_ratio=0.5) == "no_letters"


# ---- Gopher repetition --------------------------------------------------------------------------------------
def test_duplicate_line_fraction_boundary():
    lines = ["오늘은 맑음", "내일은 비", "모레는 흐림", "오늘은 맑음", "주말은 눈", "오늘은 맑음", "다음 주는 바람", "끝"]
    text = "\n".join(lines)  # 2 duplicate lines of 8 = 0.25
    assert check(GopherRepetitionFilter, text, dup_line_frac=0.25) is None
    assert check(GopherRepetitionFilter, text, dup_line_frac=0.24) == "dup_line_frac"


def test_top_ngram_needs_repetition_and_fires_above_threshold():
    text = "광고 문의 광고 문의 광고 문의 환영 합니다 여기로 연락 주세요"
    # top 2-gram "광고 문의" (5 chars with the space) x 3 = 15 chars of 32
    frac = 15 / len(text)
    assert check(GopherRepetitionFilter, text, top_ngram_fracs={2: frac}) is None
    assert check(GopherRepetitionFilter, text, top_ngram_fracs={2: frac - 0.01}) == "top_2_gram"
    # an n-gram seen once is not repetition, however short the document
    assert check(GopherRepetitionFilter, "짧은 글 하나", top_ngram_fracs={2: 0.01}) is None


def test_duplicated_ngram_chars_skips_past_each_repeat():
    words = "가 나 다 라 마 가 나 다 라 마 가 나 다 라 마".split()
    assert duplicated_ngram_chars(words, 5) == 10  # the two repeats of the 5-gram, 5 chars each
    text = " ".join(words)
    assert check(GopherRepetitionFilter, text, dup_ngram_fracs={5: 10 / len(text)}) is None
    assert check(GopherRepetitionFilter, text, dup_ngram_fracs={5: 10 / len(text) - 0.01}) == "dup_5_gram"
    assert check(GopherRepetitionFilter, GOOD, dup_ngram_fracs={5: 0.0}) is None  # no repeated 5-gram at all


def _repetition_oracle(text: str, top: dict[int, float], dup: dict[int, float]) -> str | None:
    """The n-gram tests with no shortcut: every n-gram counted, every fraction computed (as before issue 49)."""
    words = text.split()
    for n, frac in sorted(top.items()):
        if len(words) < n:
            continue
        gram, count = Counter(zip(*[words[i:] for i in range(n)], strict=False)).most_common(1)[0]
        if count > 1 and (sum(map(len, gram)) + n - 1) * count / len(text) > frac:
            return f"top_{n}_gram"
        if count == 1:
            return None
    for n, frac in sorted(dup.items()):
        if duplicated_ngram_chars(words, n) / len(text) > frac:
            return f"dup_{n}_gram"
    return None


@pytest.mark.parametrize("seed", range(4))
def test_repetition_shortcuts_give_the_verdicts_of_counting_everything(seed):
    """The bounds that skip n-gram counts (module docstring of gopher_repetition) skip only tests that cannot
    fail: on texts of few distinct words (so n-grams repeat at every size), the reason is the oracle's."""
    rng = random.Random(seed)
    th = KO.default_thresholds
    top, dup = th["top_ngram_fracs"], th["dup_ngram_fracs"]
    f = GopherRepetitionFilter(only(top_ngram_fracs=top, dup_ngram_fracs=dup), KO)
    reasons = Counter()
    for _ in range(400):
        if rng.random() < 0.4:  # passages of k distinct words, each seen twice or more, among words seen once:
            k = rng.randint(4, 11)  # runs of exactly k, where only the sum over many passages may fail a test
            passages = [["나" * rng.randint(1, 6) + f"{p}_{i}" for i in range(k)] for p in range(rng.randint(1, 6))]
            words = []
            for j, passage in enumerate(passages * rng.randint(2, 3)):
                words += [f"다{j}_{i}" for i in range(rng.randint(1, 12))] + passage
        else:
            vocab = ["가" * rng.randint(1, 9) + str(i) for i in range(rng.randint(2, 60))]
            words = [rng.choice(vocab) for _ in range(rng.randint(1, 120))]
            if rng.random() < 0.5:  # a repeated passage, so the long n-gram tests have something to count
                k = rng.randint(5, 12)
                at = rng.randint(0, len(words))
                words[at:at] = words[:k] * rng.randint(1, 3)
        text = " ".join(words)
        want = _repetition_oracle(text, top, dup)
        assert f.check(DocView(text, KO)) == want, text
        reasons[want] += 1
    assert len(reasons) >= 4  # passes, and fails of several tests, were all exercised


# The whole-text patterns `symbol_words` and `no_letter_words` replaced (issue 49), kept here as their oracle.
_SYMBOL_WORD = re.compile(f"(?<!\\S)[{re.escape(_PUNCT)}]+(?!\\S)")
_NO_LETTER_WORD = re.compile(r"(?<!\S)(?:[\d_]|[^\w\s])+(?!\S)")


def test_symbol_and_letter_words_count_as_the_whole_text_patterns_did():
    """`symbol_words` / `no_letter_words` against the regexes they replace, on every class of token."""
    pool = ["...", "…", "—", "##", "#", "12", "_", "a_b", "①", "²", "½", "Ⅻ", "٣", "한국어", "abc.", "(1)", "*",
            "「」", "x", "-", "\\", "’'", "1.5%", "$$", "►", "가.", "@_@", "ㅋㅋ", "漢字", "🙂", "e\u0301"]
    rng = random.Random(0)
    for _ in range(300):
        tokens = [rng.choice(pool) + rng.choice(["", "", rng.choice(pool)]) for _ in range(rng.randint(1, 12))]
        joined = " ".join(tokens)
        assert symbol_words(tokens) == _SYMBOL_WORD.findall(joined), tokens
        assert no_letter_words(tokens) == len(_NO_LETTER_WORD.findall(joined)), tokens


# ---- Gopher quality -----------------------------------------------------------------------------------------
def test_gopher_word_count_counts_eojeols_without_symbol_words():
    text = " ".join(["단어"] * 23) + " - ! …"
    assert check(GopherQualityFilter, text, gopher_min_words=23) is None
    assert check(GopherQualityFilter, text, gopher_min_words=24) == "too_few_words"


def test_gopher_mean_word_length():
    assert check(GopherQualityFilter, "가나다라마바사아자차카타파하 가나다라마바사아자차카타파하",
                 max_avg_word_length=13) == "long_words"
    assert check(GopherQualityFilter, "가 나 다 라", min_avg_word_length=2) == "short_words"
    assert check(GopherQualityFilter, "가나 다라 마바", min_avg_word_length=2, max_avg_word_length=2) is None


def test_gopher_symbols_bullets_ellipsis_alpha_and_stop_words():
    assert check(GopherQualityFilter, "좋아요… 정말… 최고… 그래서", max_symbol_word_ratio=0.5) == "too_many_ellipsis"
    assert check(GopherQualityFilter, "#맛집 #서울 #여행 사진", max_symbol_word_ratio=0.5) == "too_many_hashes"
    bullets = "- 사과를 샀다\n- 배를 샀다\n- 감을 샀다\n정리하면 과일을 샀다"
    assert check(GopherQualityFilter, bullets, max_bullet_lines_ratio=0.75) is None
    assert check(GopherQualityFilter, bullets, max_bullet_lines_ratio=0.7) == "too_many_bullets"
    ell = "그래서...\n그런데...\n결국 끝났다"
    assert check(GopherQualityFilter, ell, max_ellipsis_lines_ratio=0.5) == "too_many_end_ellipsis"
    assert check(GopherQualityFilter, "2024 12 31 가격 10000", min_alpha_words_ratio=0.5) == "few_alpha_words"
    assert check(GopherQualityFilter, "2024 12 가격 품목 상품", min_alpha_words_ratio=0.6) is None
    assert check(GopherQualityFilter, "사과 배 감 귤 포도", min_stop_words=2) == "few_stop_words"
    assert check(GopherQualityFilter, "나는 사과를 먹었다", min_stop_words=2) is None


# ---- FineWeb quality ----------------------------------------------------------------------------------------
def test_fineweb_line_punctuation_ratio():
    text = "\n".join(["제목 줄"] * 15 + ['그는 "알겠다."'])  # 1 of 16 lines ends in punctuation (quote stripped)
    assert check(FineWebQualityFilter, text, line_punct_thr=1 / 16) is None
    assert check(FineWebQualityFilter, text, line_punct_thr=0.07) == "line_punct_ratio"


def test_fineweb_char_duplicates_and_newline_ratio():
    text = "반복되는 줄입니다.\n반복되는 줄입니다.\n다른 내용의 줄입니다."
    dup = len("반복되는 줄입니다.") / (len(text) - 2)
    assert check(FineWebQualityFilter, text, char_dup_ratio=dup) is None
    assert check(FineWebQualityFilter, text, char_dup_ratio=dup - 0.01) == "char_dup_ratio"
    listy = "사과\n배\n감\n귤 포도"  # 3 newlines / 5 words
    assert check(FineWebQualityFilter, listy, new_line_ratio=0.6) is None
    assert check(FineWebQualityFilter, listy, new_line_ratio=0.59) == "list_ratio"


# ---- boilerplate ---------------------------------------------------------------------------------------------
def test_boilerplate_lines_removed():
    text = "\n".join([
        GOOD,
        "홍길동 기자 gildong@example.co.kr",
        "<저작권자 © 한빛일보, 무단 전재 및 재배포 금지>",
        "▶ 관련 기사 더 보기",
        "구독 좋아요 댓글",
        "로그인 | 회원가입",
        "메인 화면 바로가기",
    ])
    out, code = BoilerplateFilter(only(max_boilerplate_frac=0.9), KO).apply(text)
    assert out == GOOD and code is None


def test_boilerplate_keeps_ordinary_lines_that_mention_the_words():
    text = "이 영상은 구독자 수가 백만 명을 넘었다.\n그는 댓글에서 팬들에게 감사 인사를 전했다."
    assert BoilerplateFilter(only(max_boilerplate_frac=0.5), KO).apply(text) == (text, None)


def test_mostly_boilerplate_document_fails():
    text = "짧은 본문이다.\n" + "\n".join(["무단 전재 및 재배포 금지"] * 3)
    out, code = BoilerplateFilter(only(max_boilerplate_frac=0.5), KO).apply(text)
    assert out == "짧은 본문이다." and code == "mostly_boilerplate"


# ---- sentences (KLUE's minimum sentence length) -----------------------------------------------------------
def test_min_sentence_chars_keeps_long_sentences_only():
    text = "좋다. 이 영화는 배우들의 연기가 훌륭하고 이야기도 탄탄했다. 별로. 다시 보고 싶은 작품이다!"
    f = SentenceFilter(only(), KO, source_min=12)
    assert f.apply(text) == ("이 영화는 배우들의 연기가 훌륭하고 이야기도 탄탄했다.\n다시 보고 싶은 작품이다!", None)
    assert SentenceFilter(only(), KO, source_min=100).apply(text) == ("", "no_long_sentence")
    assert not SentenceFilter(only(), KO, source_min=None).enabled()
    # a per-source threshold wins over the source's own setting
    assert SentenceFilter(only(min_sentence_chars=3), KO, source_min=100).apply("좋다. 별로.")[0] == "좋다.\n별로."


# ---- params ----------------------------------------------------------------------------------------------------
def test_bad_thresholds_are_recipe_errors():
    with pytest.raises(ValidationError, match="min_script_ratio"):
        FilterParams(language="ko", min_script_ratio=1.5)
    with pytest.raises(ValidationError, match="min_chars=100 is larger than max_chars=10"):
        FilterParams(language="ko", min_chars=100, max_chars=10)
    with pytest.raises(ValidationError, match="unknown filter"):
        FilterParams(language="ko", order=("length", "perplexity"))
    with pytest.raises(ValidationError, match="unknown threshold"):
        FilterParams(language="ko", per_source={"nsmc": {"min_charz": 10}})
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        FilterParams(language="ko", per_source={"nsmc": {"min_chars": -1}})
    with pytest.raises(ValidationError, match="Extra inputs"):
        FilterParams(language="ko", min_hangul=0.3)


def test_per_source_overrides_only_that_source():
    p = FilterParams(language="ko", min_chars=40, per_source={"nsmc": {"min_chars": 10, "gopher_min_words": None}})
    assert p.thresholds_for("nsmc").min_chars == 10 and p.thresholds_for("nsmc").gopher_min_words is None
    assert p.thresholds_for("kowiki").min_chars == 40 and p.thresholds_for("kowiki").gopher_min_words == 23


# ---- the stage -------------------------------------------------------------------------------------------------
def _stage_input(tmp_path):
    web = docs_of([
        GOOD,                                                   # kept
        "English only text that has no Hangul letters at all, repeated enough to be long.",  # script
        "너무 짧다",                                             # length
        "\n".join(["같은 줄이 반복된다."] * 6 + [GOOD]),          # gopher_repetition
        GOOD + "\n무단 전재 및 재배포 금지",                       # kept, boilerplate line removed
        "\x00\x1b[31m   \x1b[0m",                              # empty after normalization
    ], source="web")
    reviews = docs_of(["재밌어요 강추합니다", "최악", GOOD], source="nsmc", start=100)
    return write_shards(tmp_path / "in", [web, reviews, []])


def test_filter_stage_funnel_reasons_and_audit(tmp_path):
    up = _stage_input(tmp_path)
    params = {"per_source": {"nsmc": {"min_chars": 5, "gopher_min_words": None, "line_punct_thr": None,
                                      "min_stop_words": None}}}
    res = run_stage(FilterStage(), params, "collect", up, tmp_path / "out")
    f = res.funnel
    assert f.docs_in == 9 and f.docs_kept == 4
    assert dict(f.dropped) == {"script": 1, "length": 2, "gopher_repetition": 1, "empty": 1}
    # nsmc: the 9-character review passes its lowered min_chars; "최악" (2 chars) does not
    assert res.by_source["nsmc"].docs_kept == 2 and dict(res.by_source["nsmc"].dropped) == {"length": 1}
    assert f.chars_dropped["boilerplate_edit"] == len("\n무단 전재 및 재배포 금지")
    kept = read_all(tmp_path / "out")
    assert [d.text for d in kept] == [GOOD, GOOD, "재밌어요 강추합니다", GOOD]
    # would-fail stats count every failing filter, not just the first
    report = res.meta["report"]
    assert report["would_fail"]["length"] >= 2 and report["first_fail"]["script.low_script_ratio"] == 1
    audit = [json.loads(x) for x in (tmp_path / "out" / "dropped-00000.jsonl").read_text().splitlines()]
    assert sorted(a["reason"] for a in audit) == ["empty", "gopher_repetition", "length", "script"]
    assert (tmp_path / "out" / "shard-00002.parquet").exists()  # one output shard per input shard, even empty
    samples = [json.loads(x) for x in (tmp_path / "out" / "samples.jsonl").read_text().splitlines()]
    assert {s["reason"] for s in samples} == set(f.dropped)


def test_filter_stage_source_min_sentence_chars(tmp_path):
    up = write_shards(tmp_path / "in", [docs_of(["짧다. " + GOOD, "아주 짧다. 그렇다."], source="news")])
    src = SourceSpec(name="news", path="x", format="text", min_sentence_chars=20)
    res = run_stage(FilterStage(), {"min_chars": 1, "gopher_min_words": None}, "collect", up, tmp_path / "out",
                    sources=[src])
    assert dict(res.funnel.dropped) == {"short_sentences": 1}
    (kept,) = read_all(tmp_path / "out")
    assert kept.text == "\n".join(KO.split_sentences(GOOD))
    assert res.funnel.chars_dropped["short_sentences_edit"] == len("짧다. " + GOOD) - len(kept.text)
    assert FilterStage().fingerprint(type("C", (), {"recipe": type("R", (), {"sources": [src]})})()) == \
        {"min_sentence_chars": {"news": 20}}


def test_filter_stage_is_independent_of_workers(tmp_path):
    up = _stage_input(tmp_path)
    run_stage(FilterStage(), {}, "collect", up, tmp_path / "w1", workers=1)
    run_stage(FilterStage(), {}, "collect", up, tmp_path / "w2", workers=2)
    assert folder_bytes(tmp_path / "w1") == folder_bytes(tmp_path / "w2")


def test_normalization_form_follows_params_or_language():
    text = "ＫＬＵＥ 벤치마크는 ① 여덟 개의 과제로 이루어져 있다."
    assert FilterChain(FilterParams(language="ko", min_chars=1))(text).text == text  # Korean default: NFC
    assert FilterChain(FilterParams(language="ko", min_chars=1, normalization="NFKC"))(text).text == \
        "KLUE 벤치마크는 1 여덟 개의 과제로 이루어져 있다."


def test_the_threshold_field_defaults_are_the_korean_packs():
    """`FilterParams.thresholds_for` lays the language's defaults over the fields for every language, Korean
    included: that is a no-op for Korean only because the fields' defaults are Korean's."""
    from corpora.lang.ko import DEFAULTS as KO
    from corpora.stages.filter import FilterParams

    p = FilterParams(language="ko")
    assert {k: getattr(p, k) for k in KO} == KO
    assert p.thresholds_for(None) == FilterParams(language="ko").thresholds_for(None)
    ja = FilterParams(language="ja", min_chars=7).thresholds_for(None)
    assert ja.min_chars == 7 and ja.dup_line_frac == 0.375  # a recipe key wins over the language's default
