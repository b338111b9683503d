"""Benchmark text extraction (KLUE layouts), n-gram decontamination in its three modes, and the
filter -> dedup -> decontaminate chain on a bounded sample of the real corpus (shared data)."""

from __future__ import annotations

import itertools
import json
import os
import types

import pytest
from pydantic import ValidationError

from corpora.benchmarks import BenchmarkFormatError, detect_format, iter_texts
from corpora.decontaminate import BenchmarkIndex, word_hashes
from corpora.lang import get_language
from corpora.shards import Doc, doc_id, meta_json
from corpora.sources import SourceSpec
from corpora.stages.decontaminate import DecontaminateParams, DecontaminateStage
from corpora.stages.dedup import DedupStage
from corpora.stages.filter import FilterStage
from testkit.curation import docs_of, read_all, run_stage, write_shards

PREMISE = "우리 동네 도서관은 매주 월요일마다 문을 닫고 화요일 아침 아홉 시에 다시 문을 엽니다."
FILLER = "이번 주말에는 가족과 함께 근처 공원으로 소풍을 다녀올 계획이다. 날씨가 맑다면 자전거도 탈 생각이다."

KO = get_language("ko")


FORMATS = [
    ("nli_mini.json", "nli", PREMISE),
    ("sts_mini.json", "sts", "숙소 주인분이 공항까지 직접 차로 데려다 주셔서 정말 편했습니다."),
    ("ynat_mini.json", "ynat", "기상청 내일 전국 곳곳 강한 비 예보 산간 지역 주의"),
    ("re_mini.json", "re", "김철수 교수는 2015년부터 한빛대학교 물리학과에서 학생들을 가르치고 있다."),
    ("ner_mini.tsv", "ner", "김씨는 서울에서 오랫동안 작은 빵집을 운영하며 이웃들과 정을 나누었다."),
    ("dp_mini.tsv", "dp", "어머니께서 시장에서 싱싱한 생선을 사 오셨다."),
    ("squad_mini.json", "squad", "한빛시는 강을 따라 길게 뻗은 도시로 조선 후기부터 상업 중심지로 성장하였으며 지금은 인구 삼십만 명이 "
                                 "사는 지역 거점 도시가 되었다."),
    ("wos_mini.json", "wos", "서울 북쪽에 있는 경치 좋은 관광지를 하나 추천해 주실 수 있을까요?"),
]


@pytest.mark.parametrize("name, fmt, first", FORMATS, ids=[f[1] for f in FORMATS])
def test_benchmark_formats_detected_and_read(fixtures_dir, name, fmt, first):
    path = fixtures_dir / "corpora" / name
    assert detect_format(path) == fmt
    assert next(iter(iter_texts(path))) == first


def test_benchmark_texts_cover_every_field(fixtures_dir):
    d = fixtures_dir / "corpora"
    assert len(list(iter_texts(d / "nli_mini.json"))) == 4  # premise + hypothesis of two pairs
    assert list(iter_texts(d / "ner_mini.tsv"))[1] == "두 번째 문장이다."
    assert list(iter_texts(d / "squad_mini.json"))[1].endswith("언제인가?")


def test_unknown_layouts_are_clear_errors(tmp_path):
    onto = tmp_path / "ontology.json"
    onto.write_text(json.dumps({"관광-이름": ["none", "북한산"]}, ensure_ascii=False))
    with pytest.raises(BenchmarkFormatError, match="ontology.json.*ontology or label list"):
        detect_format(onto)
    recs = tmp_path / "other.json"
    recs.write_text(json.dumps([{"question_text": "x"}]))
    with pytest.raises(BenchmarkFormatError, match=r"keys \['question_text'\]"):
        list(iter_texts(recs))
    tsv = tmp_path / "plain.tsv"
    tsv.write_text("a\tb\n")
    with pytest.raises(BenchmarkFormatError, match="plain.tsv"):
        detect_format(tsv)
    with pytest.raises(FileNotFoundError, match="missing.json"):
        list(iter_texts(tmp_path / "missing.json"))


def test_index_matches_13_grams_and_whole_short_texts():
    long_text = " ".join(f"단어{i}" for i in range(20))
    idx = BenchmarkIndex.build([("a", [long_text]), ("b", ["다섯 단어로 된 짧은 제목", "너무 짧다"])], n=13, min_words=5,
                              lang=KO)
    assert idx.stats["a"] == {"texts": 1, "ngrams": 8, "short_whole": 0, "too_short": 0}
    assert idx.stats["b"] == {"texts": 2, "ngrams": 1, "short_whole": 1, "too_short": 1}
    window = " ".join(f"단어{i}" for i in range(3, 16))  # exactly 13 words of the long text
    assert idx.benchmark_names(idx.matches(word_hashes("앞 " + window + " 뒤", KO))[0]) == ["a"]
    assert idx.matches(word_hashes(" ".join(f"단어{i}" for i in range(3, 15)), KO))[0] == 0  # 12 words: no
    # punctuation and case do not hide a match; the whole short title is needed
    assert idx.benchmark_names(idx.matches(word_hashes("속보: 다섯 단어로 된, 짧은 제목!", KO))[0]) == ["b"]
    assert idx.matches(word_hashes("다섯 단어로 된 짧은", KO))[0] == 0
    assert idx.matches(word_hashes("너무 짧다", KO))[0] == 0


def _bench(fixtures_dir, *names):
    return [{"path": str(fixtures_dir / "corpora" / n)} for n in names]


def _contaminated_input(tmp_path):
    docs = docs_of([
        FILLER,
        "도서관 소식입니다. " + PREMISE + " 방문 전에 꼭 확인하세요.",
        "오늘의 뉴스. 기상청 내일 전국 곳곳 강한 비 예보 산간 지역 주의. 자세한 내용은 아래와 같다.",
        FILLER + " " + FILLER,
    ])
    return docs, write_shards(tmp_path / "in", [docs[:2], docs[2:]])


def test_drop_mode_counts_per_benchmark(tmp_path, fixtures_dir):
    docs, up = _contaminated_input(tmp_path)
    params = {"benchmarks": _bench(fixtures_dir, "nli_mini.json", "ynat_mini.json", "dp_mini.tsv")}
    res = run_stage(DecontaminateStage(), params, "dedup", up, tmp_path / "out")
    assert dict(res.funnel.dropped) == {"contaminated": 2}
    assert [d.id for d in read_all(tmp_path / "out")] == [docs[0].id, docs[3].id]
    bench = res.meta["report"]["benchmarks"]
    assert bench["nli_mini"]["docs"] == 1 and bench["ynat_mini"]["docs"] == 1 and bench["dp_mini"]["docs"] == 0
    audit = [json.loads(x) for x in (tmp_path / "out" / "dropped-00000.jsonl").read_text().splitlines()]
    assert audit == [{"benchmarks": ["nli_mini"], "id": docs[1].id, "reason": "contaminated", "source": "web"}]


def test_flag_mode_keeps_and_marks(tmp_path, fixtures_dir):
    docs, up = _contaminated_input(tmp_path)
    params = {"benchmarks": _bench(fixtures_dir, "nli_mini.json", "ynat_mini.json"), "mode": "flag"}
    res = run_stage(DecontaminateStage(), params, "dedup", up, tmp_path / "out")
    assert res.funnel.docs_kept == 4 and not res.funnel.dropped
    flags = [d.meta_dict().get("contamination") for d in read_all(tmp_path / "out")]
    assert flags == [None, ["nli_mini"], ["ynat_mini"], None]


def test_sentences_mode_removes_only_offending_sentences(tmp_path, fixtures_dir):
    docs, up = _contaminated_input(tmp_path)
    params = {"benchmarks": _bench(fixtures_dir, "nli_mini.json"), "mode": "sentences"}
    res = run_stage(DecontaminateStage(), params, "dedup", up, tmp_path / "out")
    out = read_all(tmp_path / "out")
    assert out[1].text == "도서관 소식입니다.\n방문 전에 꼭 확인하세요."
    assert res.funnel.chars_dropped["contaminated_sentences"] == len(docs[1].text) - len(out[1].text)
    assert res.meta["report"]["edited_docs"] == 1


@pytest.mark.parametrize("mode", ["drop", "flag", "sentences"])
def test_each_mode_writes_what_write_docs_writes_across_batches_and_row_groups(tmp_path, fixtures_dir, mode):
    """The clean documents move as Arrow rows and the contaminated ones as `Doc`s: over 9,000 documents (18 match
    batches, three row groups) with contaminated ones spread through them, the shard holds exactly the clean
    documents untouched and the contaminated ones as the mode makes them (dropped, flagged, cut), in order, in
    the bytes `write_docs` writes for those documents; the funnel books every character."""
    import numpy as np

    from corpora.shards import iter_docs, list_shards, write_docs

    bad, _ = _contaminated_input(tmp_path / "x")
    rng = np.random.default_rng(3)
    words = ["가방", "하늘", "바다", "나무", "기차", "사과", "마을", "노래", "편지", "구름", "강물", "모래"]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(5, 25)))) + "." for _ in range(9000)]
    dirty = {0, 511, 512, 4095, 4096, 4097, 7000, 8999} | set(range(100, 9000, 613))
    for i in dirty:
        texts[i] = bad[2 - i % 2].text  # odd rows: the PREMISE of nli_mini inside a sentence; even: a ynat_mini title
    docs = docs_of(texts, source="web")
    docs = [Doc(d.id, d.text, "news" if i % 4 == 0 else "web", d.meta) for i, d in enumerate(docs)]
    up = write_shards(tmp_path / "in", [docs])
    params = {"benchmarks": _bench(fixtures_dir, "nli_mini.json", "ynat_mini.json"), "mode": mode}
    res = run_stage(DecontaminateStage(), params, "dedup", up, tmp_path / "out")
    out = list(iter_docs(list_shards(tmp_path / "out")[0]))
    write_docs(tmp_path / "want.parquet", out)
    assert list_shards(tmp_path / "out")[0].read_bytes() == (tmp_path / "want.parquet").read_bytes()
    by_id = {d.id: d for d in out}
    dirty_ids = {docs[i].id for i in dirty}
    clean = [d for i, d in enumerate(docs) if i not in dirty]
    assert [by_id.get(d.id) for d in clean] == clean == [d for d in out if d.id not in dirty_ids]  # untouched
    kept_dirty = [by_id[docs[i].id] for i in sorted(dirty) if docs[i].id in by_id]
    if mode == "drop":
        assert not kept_dirty and res.funnel.dropped["contaminated"] == len(dirty)
    elif mode == "flag":
        assert len(kept_dirty) == len(dirty) and all(d.meta_dict()["contamination"] for d in kept_dirty)
        assert all(d.text == docs[i].text for d, i in zip(kept_dirty, sorted(dirty), strict=True))
    else:  # each cut to its sentences that hold no match, one per line
        assert len(kept_dirty) == len(dirty) and not res.funnel.dropped
        for i, d in zip(sorted(dirty), kept_dirty, strict=True):
            lines = d.text.split("\n")
            assert len(d.text) < len(docs[i].text) and all(ln in docs[i].text for ln in lines)
            if i % 2 == 1:
                assert lines == ["도서관 소식입니다.", "방문 전에 꼭 확인하세요."]
    assert res.funnel.docs_kept == len(out) and res.funnel.chars_kept == sum(len(d.text) for d in out)
    assert res.funnel.chars_in == sum(len(d.text) for d in docs)
    assert {s: f.docs_kept for s, f in res.by_source.items()} == {s: sum(d.source == s for d in out)
                                                                  for s in ("news", "web")}


def test_params_and_fingerprint(tmp_path, fixtures_dir, monkeypatch):
    with pytest.raises(ValidationError, match="names must be unique"):
        DecontaminateParams(language="ko", benchmarks=[{"path": "a/x.json"}, {"path": "b/x.json"}])
    with pytest.raises(ValidationError, match="min_words=20 is larger than n=13"):
        DecontaminateParams(language="ko", min_words=20)
    bench = tmp_path / "b.json"
    bench.write_text(json.dumps([{"title": "제목 하나 둘 셋 넷 다섯"}], ensure_ascii=False))
    monkeypatch.setenv("BENCH_DIR", str(tmp_path))
    params = DecontaminateParams(language="ko", benchmarks=[{"path": "${BENCH_DIR}/b.json"}])
    ctx = types.SimpleNamespace(params=params)
    fp1 = DecontaminateStage().fingerprint(ctx)
    bench.write_text(json.dumps([{"title": "제목 하나 둘 셋 넷 다섯 여섯"}], ensure_ascii=False))
    assert DecontaminateStage().fingerprint(ctx) != fp1
    monkeypatch.delenv("BENCH_DIR")
    with pytest.raises(ValueError, match="environment variable not set"):
        DecontaminateStage().fingerprint(ctx)


# ---- shared data ----------------------------------------------------------------------------------------------
@pytest.mark.shared_data
def test_curation_chain_on_real_corpus(shared_data, tmp_path):
    corpus = shared_data / "corpus"
    nli_dev = shared_data / "klue" / "nli" / "klue-nli-v1.1_dev.json"
    premise = next(r["premise"] for r in json.loads(nli_dev.read_text(encoding="utf-8"))
                   if len(r["premise"].split()) >= 13)

    def lines(name, n):
        with open(corpus / name, encoding="utf-8") as f:
            return [ln.rstrip("\n") for ln in itertools.islice(f, n) if ln.strip()]

    with open(corpus / "kowiki_sections.txt", encoding="utf-8") as f:
        wiki = "".join(itertools.islice(f, 6000)).split("\n\n")
    planted = Doc(doc_id("news", "planted", 0), f"{wiki[3]}\n{premise}\n{wiki[5]}", "news", meta_json({}))
    shards = [
        docs_of(wiki, source="kowiki"),
        docs_of(lines("news_comments.txt", 1500) + lines("news_comments.txt", 200), source="news") + [planted],
        docs_of(lines("nsmc_reviews.txt", 1500), source="nsmc"),
    ]
    up = write_shards(tmp_path / "collect", shards)
    light = {"min_chars": 10, "gopher_min_words": None, "line_punct_thr": None, "min_stop_words": None}
    sources = [SourceSpec(name="news", path="x", format="text", min_sentence_chars=10)]
    f = run_stage(FilterStage(), {"per_source": {"nsmc": light, "news": light}}, "collect", up,
                  tmp_path / "filter", workers=2, sources=sources)
    d = run_stage(DedupStage(), {}, "filter", tmp_path / "filter", tmp_path / "dedup", workers=2)
    klue = shared_data / "klue"
    bench = [{"path": str(p)} for p in (nli_dev, klue / "ynat" / "ynat-v1_dev.json",
                                        klue / "ner" / "klue-ner-v1.1_dev.tsv", klue / "sts" / "klue-sts-v1.1_dev.json")]
    c = run_stage(DecontaminateStage(), {"benchmarks": bench}, "dedup", tmp_path / "dedup",
                  tmp_path / "decon", workers=2)
    n_in = sum(len(s) for s in shards)
    assert f.funnel.docs_in == n_in and d.funnel.docs_in == f.funnel.docs_kept
    assert c.funnel.docs_in == d.funnel.docs_kept == c.funnel.docs_kept + sum(c.funnel.dropped.values())
    assert d.funnel.dropped["exact_duplicate"] >= 150  # the 200 repeated news comments, less those filtered
    assert planted.id in {d.id for d in read_all(tmp_path / "dedup")}
    assert planted.id not in {d.id for d in read_all(tmp_path / "decon")}
    assert c.meta["report"]["benchmarks"]["klue-nli-v1.1_dev"]["docs"] >= 1
    assert os.listdir(tmp_path / "decon").count("samples.jsonl") == 1


# ---- Japanese: MeCab tokens as the words (language: ja) -------------------------------------------------------
JA_CAPTION = "赤い服を着た女の子が公園のベンチに座って本を読んでいます。"  # a JSTS-style caption, written here
JA_FILLER = "今日は朝から雨が降っていたので、午後は家で映画を見て過ごしました。"


def test_japanese_benchmark_sentences_match_on_mecab_tokens():
    pytest.importorskip("unidic_lite", reason="the `ja` extra is not installed (pip install -e '.[ja]')")
    from corpora.lang import get_language

    ja, ko = get_language("ja"), get_language("ko")
    # as `\w+` runs the caption is one word (its only punctuation is the final 。): under min_words, never matched
    assert ko.match_words(JA_CAPTION) == [JA_CAPTION[:-1]]
    assert BenchmarkIndex.build([("jsts", [JA_CAPTION])], n=13, min_words=5, lang=ko).stats["jsts"]["too_short"] == 1
    words = ja.match_words(JA_CAPTION)
    assert words == ["赤い", "服", "を", "着", "た", "女の子", "が", "公園", "の", "ベンチ", "に", "座っ", "て", "本", "を",
                     "読ん", "で", "い", "ます"]  # UniDic short units; the 。 is left out
    idx = BenchmarkIndex.build([("jsts", [JA_CAPTION])], n=13, min_words=5, lang=ja)
    assert idx.stats["jsts"] == {"texts": 1, "ngrams": len(words) - 12, "short_whole": 0, "too_short": 0}
    doc = f"{JA_FILLER}\n{JA_CAPTION}\n{JA_FILLER}"
    assert idx.benchmark_names(idx.matches(word_hashes(doc, ja))[0]) == ["jsts"]
    assert idx.matches(word_hashes(JA_FILLER * 3, ja))[0] == 0
    # full-width letters and case fold on both sides, as for Korean
    assert ja.match_words("ＡＢＣ社の本") == ja.match_words("abc社の本")
    # the spans locate the caption in the document, token by token
    from corpora.decontaminate import word_spans

    hashes, spans = word_spans(doc, ja)
    assert list(hashes) == list(word_hashes(doc, ja))
    (i, m), = idx.matches(hashes)[1][:1]
    assert doc[spans[i][0]:spans[i + m - 1][1]] in JA_CAPTION


def test_the_decontaminate_stage_with_language_ja_drops_a_planted_caption(tmp_path):
    pytest.importorskip("unidic_lite", reason="the `ja` extra is not installed (pip install -e '.[ja]')")
    bench = tmp_path / "jsts-valid.json"  # JSON lines in a .json file, as JGLUE ships them
    bench.write_text("\n".join(json.dumps({"sentence_pair_id": str(i), "sentence1": s, "sentence2": JA_FILLER,
                                           "label": 3.0}, ensure_ascii=False)
                               for i, s in enumerate([JA_CAPTION, "犬が走っています。"])) + "\n", encoding="utf-8")
    assert detect_format(bench) == "sts"
    assert list(iter_texts(bench)) == [JA_CAPTION, JA_FILLER, "犬が走っています。", JA_FILLER]
    clean = "駅前の新しいパン屋さんは、朝七時から開いていて、焼きたてのクロワッサンがとても人気です。"
    up = write_shards(tmp_path / "dedup", [docs_of([f"{clean}\n{JA_CAPTION}", clean + "毎日通っています。"],
                                                  source="web")])
    res = run_stage(DecontaminateStage(), {"benchmarks": [{"path": str(bench)}], "language": "ja",
                                           "mode": "sentences"}, "dedup", up, tmp_path / "out")
    assert res.funnel.docs_in == 2 and res.funnel.docs_kept == 2  # one cut to its clean sentence
    assert [d.text for d in read_all(tmp_path / "out")] == [clean, clean + "毎日通っています。"]
    # JA_FILLER (the second sentence of both pairs) would match any document holding it: drop mode
    res = run_stage(DecontaminateStage(), {"benchmarks": [{"path": str(bench)}], "language": "ja"}, "dedup",
                    write_shards(tmp_path / "d2", [docs_of([f"前置き。{JA_FILLER}", clean], source="web")]),
                    tmp_path / "out2")
    assert dict(res.funnel.dropped) == {"contaminated": 1} and res.funnel.docs_kept == 1


@pytest.mark.shared_data
def test_jglue_files_are_read_in_their_own_formats(shared_data):
    jglue = shared_data / "ja" / "jglue"
    if not jglue.is_dir():
        pytest.skip(f"the shared data has no JGLUE folder: {jglue}")
    got = {}
    for task, fmt in (("jsts", "sts"), ("jnli", "sts"), ("jcommonsenseqa", "mcqa"), ("jsquad", "squad")):
        path = jglue / f"{task}-v1.3" / "valid-v1.3.json"
        assert detect_format(path) == fmt, path
        got[task] = list(iter_texts(path))
    assert len(got["jsts"]) == 2 * 1457 and len(got["jnli"]) == 2 * 2434
    assert len(got["jcommonsenseqa"]) == 6 * 1119
    squad = json.loads((jglue / "jsquad-v1.3" / "valid-v1.3.json").read_text(encoding="utf-8"))
    n_ctx = sum(len(a["paragraphs"]) for a in squad["data"])
    assert (n_ctx, len(got["jsquad"]) - n_ctx) == (1145, 4442)
    assert not any(" [SEP] " in t for t in got["jsquad"])  # the "<title> [SEP] " prefix is gone
    assert squad["data"][0]["paragraphs"][0]["context"].endswith(got["jsquad"][0])
