"""The toxicity tagger: BEEP! reading (bad rows name file and line), the model's pickle-free save / load (identical
scores, identical bytes for the same seed), document and sentence scoring, the `toxicity` stage (off by default,
the same bytes with 1 and 2 workers), the drop it hands to `pii` (exactly the documents above the threshold,
reason `toxicity`, funnels that reconcile; `keep` changes no byte), the recipe and runner wiring, the CLI, and
on the shared data (skipped without it) the classifier's dev macro-F1 against both baselines.

Models are trained at test time on the hand-written sample shipped with the package (corpora/toxicity/sample.tsv,
48 comments, 16 per label), in well under a second."""

from __future__ import annotations

import json
import shutil
import types
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import corpora.toxicity
from corpora.pii.spans import spans_name, write_spans
from corpora.shards import Doc, doc_id, iter_docs, list_shards, meta_json, write_docs
from corpora.stages.pii import PiiReplaceParams, PiiReplaceStage
from corpora.stages.toxicity import ToxicityParams, ToxicityStage
from corpora.toxicity.baselines import keyword_label, majority_label
from corpora.toxicity.data import LABELS, read_background, read_beep
from corpora.toxicity.model import MODEL_FILE, WEIGHTS_FILE, ToxicityModel, TrainConfig, train
from corpora.toxicity.scores import DROP_FILE, read_scores, scores_name
from corpora.toxicity.tagger import score_documents
from pipeline import io
from pipeline.cli import main
from pipeline.recipe import RecipeError, load_recipe
from pipeline.runner import Runner
from pipeline.stage import Funnel, Stage, StageContext, StageInput, StageParams, StageResult
from pipeline.stages import stage_registry

SAMPLE = Path(corpora.toxicity.__file__).parent / "sample.tsv"
RECIPE = types.SimpleNamespace(seed=42, sources=[])
HEADER = "comments\tcontain_gender_bias\tbias\thate\n"

# documents of a small corpus: plain, insulting, group-hating, mixed, empty, not Korean
TEXTS = {
    "web": ["오늘은 날씨가 맑고 기온은 23도였다. 가족들과 공원에 다녀왔다.",
            "이 새끼 진짜 바보 같다. 연기 진짜 못하네.",
            "새 앨범 노래가 너무 좋아요 계속 듣게 되네요",
            "", "The quick brown fox jumps over the lazy dog.", "2024 1234 5678",
            "배우님 연기 최고예요 응원합니다.\n병신 같은 소리 하고 있네 지랄하지 마라.",
            "여자들은 다 저렇게 돈만 밝힌다 김치녀 특징"],
    "news": ["정부는 내년 예산안을 국회에 제출했다고 밝혔다.", "한남충들은 하는 짓이 다 똑같다",
             "기사 잘 읽었습니다 좋은 정보 감사합니다", "씨발 이게 기사냐 기자 수준 보소"],
}


@pytest.fixture(scope="module")
def sample() -> list:
    return read_beep(SAMPLE)


@pytest.fixture(scope="module")
def model(sample) -> ToxicityModel:
    return train(sample, seed=7)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """A decontaminate output: three shards (the last one empty), two sources."""
    d = tmp_path_factory.mktemp("decontaminate")
    docs = [Doc(doc_id(src, "f.txt", i), t, src, meta_json({"i": i}))
            for src, texts in TEXTS.items() for i, t in enumerate(texts)]
    write_docs(d / "shard-00000.parquet", docs[:7])
    write_docs(d / "shard-00001.parquet", docs[7:])
    write_docs(d / "shard-00002.parquet", [])
    return d


@pytest.fixture(scope="module")
def no_spans(corpus, tmp_path_factory) -> Path:
    """A pii_detect output without any span (the PII engine is not what is tested here)."""
    d = tmp_path_factory.mktemp("pii_detect")
    for s in list_shards(corpus):
        write_spans(d / spans_name(s), [[], [], [], [], [], []])
    return d


def ctx(out: Path, params: StageParams, inputs: dict[str, Path], workers: int = 1) -> StageContext:
    out.mkdir(parents=True, exist_ok=True)
    return StageContext(out_dir=out, params=params, recipe=RECIPE, workers=workers,
                        inputs={k: StageInput(k, p, {"meta": {}}) for k, p in inputs.items()})


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def all_docs(folder: Path) -> list[Doc]:
    return [d for s in list_shards(folder) for d in iter_docs(s)]


def all_scores(folder: Path) -> dict:
    out: dict = {}
    for p in sorted(folder.glob("scores-*.parquet")):
        out.update(read_scores(p))
    return out


# ------------------------------------------------------------------------------------------ data and model
def test_sample_reads_with_every_label_and_line_numbers(sample):
    assert len(sample) == 48 and [e.line for e in sample] == list(range(2, 50))
    assert {lab: sum(e.label == lab for e in sample) for lab in LABELS} == dict.fromkeys(LABELS, 16)


@pytest.mark.parametrize("body, where, what", [
    ("좋은 글이네요\tFalse\tnone\n", ":2:", "expected 4 tab-separated fields"),
    ("좋은 글이네요\tFalse\tnone\tnone\n나쁜 말\tFalse\tnone\tbad\n", ":3:", "label 'bad'"),
    ("좋은 글이네요\tFalse\tnone\tnone\n\tFalse\tnone\tnone\n", ":3:", "empty comment"),
])
def test_a_malformed_row_names_file_and_line(tmp_path, body, where, what):
    p = tmp_path / "beep_train.tsv"
    p.write_text(HEADER + body, encoding="utf-8")
    with pytest.raises(ValueError) as e:
        read_beep(p)
    assert str(e.value).startswith(f"{p}{where}") and what in str(e.value), str(e.value)


def test_a_bad_header_and_bad_bytes_name_file_and_line(tmp_path):
    p = tmp_path / "x.tsv"
    p.write_text("text\tlabel\n좋다\tnone\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{p}:1: header .* lacks column\(s\) \['comments', 'hate'\]"):
        read_beep(p)
    p.write_bytes(HEADER.encode() + "좋다\tFalse\tnone\tnone\n".encode() + b"\xff\xfe\tFalse\tnone\tnone\n")
    with pytest.raises(ValueError, match=rf"^{p}:3: not UTF-8"):
        read_beep(p)


def test_the_cli_reports_a_malformed_row_with_file_and_line(tmp_path):
    (tmp_path / "beep_train.tsv").write_text(HEADER + "좋은 글\tFalse\tnone\tnone\n나쁜 글\tFalse\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["toxicity", "train", "--data", str(tmp_path), "--out", str(tmp_path / "m")])
    assert res.exit_code == 1 and f"{tmp_path / 'beep_train.tsv'}:3: expected 4 tab-separated fields" in res.output
    assert not (tmp_path / "m").exists()


def test_saved_and_loaded_model_gives_identical_scores(model, sample, tmp_path):
    model.save(tmp_path / "m")
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == [MODEL_FILE, WEIGHTS_FILE]
    loaded = ToxicityModel.load(tmp_path / "m")
    texts = [e.text for e in sample] + ["처음 보는 문장입니다 ㅋㅋ", "hello", "", "ㅄ"]
    p1, k1 = model.proba(texts)
    p2, k2 = loaded.proba(texts)
    assert np.array_equal(p1, p2) and np.array_equal(k1, k2)  # bit for bit, not approximately
    assert np.array_equal(model.toxic_scores(texts), loaded.toxic_scores(texts))
    assert model.predict(texts) == loaded.predict(texts)
    docs = [t for ts in TEXTS.values() for t in ts]
    for level in ("sentence", "document"):
        assert score_documents(model, docs, level, language="ko") == score_documents(loaded, docs, level, language="ko")
    # and the scikit-learn objects' own answer is what the model reports
    raw = model.classifier.predict_proba(model.vectorizer.transform(texts))
    assert np.array_equal(raw[:, [list(model.classifier.classes_).index(lab) for lab in LABELS]], p1)
    # no pickle anywhere: a JSON document and a safetensors file
    assert json.loads((tmp_path / "m" / MODEL_FILE).read_text(encoding="utf-8"))["format"].startswith("klue-toxicity")


def test_same_data_and_seed_give_the_same_bytes(sample, tmp_path):
    train(sample, seed=3).save(tmp_path / "a")
    train(list(sample), seed=3).save(tmp_path / "b")
    assert folder_bytes(tmp_path / "a") == folder_bytes(tmp_path / "b")
    train(sample[:-1], seed=3).save(tmp_path / "c")  # one comment fewer: another model
    assert folder_bytes(tmp_path / "c")[MODEL_FILE] != folder_bytes(tmp_path / "a")[MODEL_FILE]
    doc = json.loads((tmp_path / "a" / MODEL_FILE).read_text(encoding="utf-8"))
    assert doc["seed"] == 3 and doc["training"]["examples"] == 48 and doc["training"]["converged"]
    assert str(tmp_path) not in (tmp_path / "a" / MODEL_FILE).read_text(encoding="utf-8")


def test_a_damaged_or_foreign_model_folder_is_refused(model, tmp_path):
    model.save(tmp_path / "m")
    w = tmp_path / "m" / WEIGHTS_FILE
    w.write_bytes(w.read_bytes()[:-8] + b"\0" * 8)
    with pytest.raises(ValueError, match=r"weights.safetensors: sha256 differs"):
        ToxicityModel.load(tmp_path / "m")
    w.unlink()
    with pytest.raises(ValueError, match=r"not a toxicity model folder .*weights.safetensors is missing"):
        ToxicityModel.load(tmp_path / "m")
    with pytest.raises(ValueError, match="every label"):
        train([e for e in read_beep(SAMPLE) if e.label != "hate"])
    with pytest.raises(ValueError, match="ngram_min=3 > ngram_max=2"):
        train(read_beep(SAMPLE), TrainConfig(ngram_min=3, ngram_max=2))


def test_text_without_korean_evidence_scores_zero_and_insults_score_high(model):
    s = model.toxic_scores(["", "hello world", "2024 1234", "이 새끼 또 사고 쳤네 지겹다", "사진 너무 예쁘게 나왔어요"])
    assert s[:3].tolist() == [0.0, 0.0, 0.0]
    assert s[3] > 0.5 > s[4]


def test_sentence_level_keeps_the_most_toxic_sentence_and_its_span(model):
    good, bad = "배우님 연기 최고예요 응원합니다.", "병신 같은 소리 하고 있네 지랄하지 마라."
    text = f"{good}\n{bad}"
    (sent,) = score_documents(model, [text], "sentence", language="ko")
    (alone,) = score_documents(model, [bad], "document", language="ko")
    assert text[sent.start:sent.end] == bad and sent.score == alone.score and sent.hate == alone.hate
    (doc,) = score_documents(model, [text], "document", language="ko")
    assert (doc.start, doc.end) == (0, len(text)) and doc.score < sent.score
    assert score_documents(model, ["", "  \n "], "sentence", language="ko")[0].score == 0.0
    # batches of any size give the same scores
    docs = [t for ts in TEXTS.values() for t in ts]
    assert score_documents(model, docs, "sentence", batch_chars=1, language="ko") == score_documents(model, docs, "sentence", language="ko")


def test_baselines():
    assert keyword_label("김치녀 특징") == "hate" and keyword_label("이 새끼 뭐냐") == "offensive"
    assert keyword_label("좋은 하루 보내세요") == "none"
    assert majority_label(["none", "hate", "none", "offensive"]) == "none"
    assert majority_label(["hate", "none"]) == "hate"  # a tie: the first in sorted order


BACKGROUND = ("대한민국은 동아시아의 한반도 남부에 위치한 민주공화국이다. 수도는 서울특별시이다.\n"
              "헌법은 국가의 기본 질서를 정한 최고 법규범이다.\n짧다.\n"
              "한강은 서울을 가로질러 서해로 흘러가는 강이다. 조선 시대에는 수운의 중심이었다.\n")


def test_background_prose_is_read_in_order_and_trained_as_none(sample, tmp_path):
    p = tmp_path / "bg.txt"
    p.write_text(BACKGROUND, encoding="utf-8")
    bg = read_background(p, 3, language="ko")
    assert bg == ["대한민국은 동아시아의 한반도 남부에 위치한 민주공화국이다.", "수도는 서울특별시이다.",
                  "헌법은 국가의 기본 질서를 정한 최고 법규범이다."]
    assert len(read_background(p, 100, language="ko")) == 5  # every sentence of at least 10 characters ("짧다." is not)
    m = train(sample, seed=1, background=read_background(p, 100, language="ko"))
    assert m.training["background"] == 5 and m.training["examples"] == 48
    assert m.training["data_sha256"] != train(sample, seed=1).training["data_sha256"]
    p.write_bytes(BACKGROUND.encode() + b"\xff\n")
    with pytest.raises(ValueError, match=rf"^{p}:5: not UTF-8"):
        read_background(p, 100, language="ko")


# ------------------------------------------------------------------------------------------------ the stage
def test_the_stage_is_off_by_default_and_then_writes_nothing(corpus, tmp_path):
    res = ToxicityStage().run(ctx(tmp_path / "t", ToxicityParams(language="ko"), {"decontaminate": corpus}))
    assert res.funnel is None and res.meta == {"report": {"enabled": False}}
    assert list((tmp_path / "t").iterdir()) == []
    assert ToxicityStage().fingerprint(ctx(tmp_path / "t", ToxicityParams(language="ko"), {})) == {}


@pytest.mark.parametrize("params, msg", [
    ({"action": "drop"}, "action: drop needs enabled: true"),
    ({"enabled": True}, "set exactly one of `model`"),
    ({"enabled": True, "model": "m", "train_data": "t.tsv"}, "set exactly one of `model`"),
    ({"enabled": True, "model": "m", "threshold": 1.0}, "less than 1"),
    ({"enabled": True, "model": "m", "language": "xx"}, "xx"),
    ({"enabled": True, "model": "m", "background_data": "bg.txt"}, "background_data is training data"),
])
def test_params_are_checked(params, msg):
    with pytest.raises(ValueError, match=msg):
        ToxicityParams(**{"language": "ko", **params})


def test_the_stage_scores_every_document_with_the_same_bytes_for_1_and_2_workers(corpus, tmp_path):
    params = ToxicityParams(language="ko", enabled=True, train_data=str(SAMPLE), action="drop", threshold=0.5)
    r1 = ToxicityStage().run(ctx(tmp_path / "w1", params, {"decontaminate": corpus}, workers=1))
    r2 = ToxicityStage().run(ctx(tmp_path / "w2", params, {"decontaminate": corpus}, workers=2))
    b1, b2 = folder_bytes(tmp_path / "w1"), folder_bytes(tmp_path / "w2")
    assert b1 == b2 and r1.meta == r2.meta and r1.funnel == r2.funnel
    assert sorted(b1) == [DROP_FILE, "model/" + MODEL_FILE, "model/" + WEIGHTS_FILE, "samples.jsonl",
                          "scores-00000.parquet", "scores-00001.parquet", "scores-00002.parquet"]
    # one row per document, in document order, with the columns of the stand-off format
    for s in list_shards(corpus):
        t = pq.read_table(tmp_path / "w1" / scores_name(s))
        assert t.column_names == ["id", "score", "hate", "offensive", "start", "end"]
        assert t.column("id").to_pylist() == [d.id for d in iter_docs(s)]
    # a pass-through accounting: every document kept here (the drop is booked by `pii`)
    n_docs = sum(len(v) for v in TEXTS.values())
    assert r1.funnel.docs_in == r1.funnel.docs_kept == n_docs and r1.funnel.problems() == []
    assert set(r1.by_source) == set(TEXTS) and all(f.problems() == [] for f in r1.by_source.values())
    # the in-stage model is the model the sample trains with the recipe seed, and it scored the corpus
    loaded = ToxicityModel.load(tmp_path / "w1" / "model")
    assert loaded.seed == RECIPE.seed and loaded.training["examples"] == 48
    scores = all_scores(tmp_path / "w1")
    docs = all_docs(corpus)
    expect = score_documents(loaded, [d.text for d in docs], "sentence", language="ko")
    assert [scores[d.id].score for d in docs] == [float(np.float32(e.score)) for e in expect]
    rep = r1.meta["report"]
    above = sorted(i for i, s in scores.items() if s.score > 0.5)
    assert rep["docs_above"] == len(above) == rep["docs_to_drop"] and 0 < len(above) < n_docs
    assert json.loads((tmp_path / "w1" / DROP_FILE).read_text(encoding="utf-8")) == above
    assert sum(rep["score_histogram"].values()) == n_docs
    by_text = {d.text: d.id for d in docs}
    for t in ("", "The quick brown fox jumps over the lazy dog.", "2024 1234 5678"):
        assert scores[by_text[t]].score == 0.0
    for t in ("이 새끼 진짜 바보 같다. 연기 진짜 못하네.", "씨발 이게 기사냐 기자 수준 보소"):
        assert by_text[t] in above


@pytest.fixture(scope="module")
def dropped(corpus, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("toxicity-drop")
    ToxicityStage().run(ctx(out, ToxicityParams(language="ko", enabled=True, train_data=str(SAMPLE), action="drop",
                                                threshold=0.6), {"decontaminate": corpus}))
    return out


@pytest.mark.parametrize("enabled", [True, False])
def test_the_threshold_drops_exactly_the_documents_above_it(corpus, no_spans, dropped, tmp_path, enabled):
    inputs = {"decontaminate": corpus, "pii_detect": no_spans, "toxicity": dropped}
    res = PiiReplaceStage().run(ctx(tmp_path / "pii", PiiReplaceParams(language="ko", enabled=enabled), inputs))
    scores = all_scores(dropped)
    above = {i for i, s in scores.items() if s.score > 0.6}
    assert above == set(json.loads((dropped / DROP_FILE).read_text(encoding="utf-8")))
    assert 0 < len(above) < len(scores)
    docs = all_docs(corpus)
    # the same shards, the other documents in their order, unchanged
    assert [p.name for p in list_shards(tmp_path / "pii")] == [p.name for p in list_shards(corpus)]
    assert [(d.id, d.text) for d in all_docs(tmp_path / "pii")] == [(d.id, d.text) for d in docs
                                                                    if d.id not in above]
    f = res.funnel
    assert f.problems() == [] and dict(f.dropped) == {"toxicity": len(above)} and f.docs_in == len(docs)
    assert f.chars_dropped["toxicity"] == sum(len(d.text) for d in docs if d.id in above)
    assert f.chars_in == sum(len(d.text) for d in docs) and f.quarantined == 0
    total = Funnel()
    for src, sf in res.by_source.items():
        assert sf.problems() == []
        assert sf.dropped["toxicity"] == sum(1 for d in docs if d.source == src and d.id in above)
        total.add(sf)
    assert total == f


def test_a_background_file_enters_the_model_and_the_key(corpus, tmp_path):
    bg = tmp_path / "bg.txt"
    bg.write_text(BACKGROUND, encoding="utf-8")
    params = ToxicityParams(language="ko", enabled=True, train_data=str(SAMPLE), background_data=str(bg), background_sentences=4)
    res = ToxicityStage().run(ctx(tmp_path / "t", params, {"decontaminate": corpus}))
    assert res.meta["report"]["model"]["background_sentences"] == 4
    assert ToxicityModel.load(tmp_path / "t" / "model").training["background"] == 4
    fp = ToxicityStage().fingerprint(ctx(tmp_path / "probe", params, {}))
    bg.write_text(BACKGROUND + "새로 더한 문장 하나가 여기에 있습니다.\n", encoding="utf-8")
    assert ToxicityStage().fingerprint(ctx(tmp_path / "probe", params, {})) != fp


def test_sources_limit_the_drop_and_every_document_is_still_scored(corpus, dropped, tmp_path):
    out = tmp_path / "t"
    res = ToxicityStage().run(ctx(out, ToxicityParams(language="ko", enabled=True, train_data=str(SAMPLE), action="drop",
                                                      threshold=0.6, sources=["news"]), {"decontaminate": corpus}))
    assert all_scores(out) == all_scores(dropped)
    src = {d.id: d.source for d in all_docs(corpus)}
    everywhere = json.loads((dropped / DROP_FILE).read_text(encoding="utf-8"))
    only_news = json.loads((out / DROP_FILE).read_text(encoding="utf-8"))
    assert only_news == [i for i in everywhere if src[i] == "news"] and 0 < len(only_news) < len(everywhere)
    rep = res.meta["report"]
    assert rep["docs_to_drop"] == len(only_news) and rep["docs_above"] == len(everywhere)


@pytest.mark.parametrize("enabled", [True, False])
def test_keep_and_off_leave_the_pii_output_byte_identical(corpus, no_spans, tmp_path, enabled):
    keep = tmp_path / "keep"
    ToxicityStage().run(ctx(keep, ToxicityParams(language="ko", enabled=True, train_data=str(SAMPLE)), {"decontaminate": corpus}))
    off = tmp_path / "off"
    ToxicityStage().run(ctx(off, ToxicityParams(language="ko"), {"decontaminate": corpus}))
    assert not (keep / DROP_FILE).exists() and list(keep.glob("scores-*.parquet"))
    outs = {}
    for name, inputs in {"none": {}, "keep": {"toxicity": keep}, "off": {"toxicity": off}}.items():
        res = PiiReplaceStage().run(ctx(tmp_path / f"pii-{name}", PiiReplaceParams(language="ko", enabled=enabled),
                                        {"decontaminate": corpus, "pii_detect": no_spans, **inputs}))
        outs[name] = (folder_bytes(tmp_path / f"pii-{name}"), res.funnel.to_json(), res.meta)
    assert outs["keep"] == outs["none"] == outs["off"]
    if not enabled:  # the off arm still byte-copies its input shards
        assert all((tmp_path / "pii-keep" / s.name).read_bytes() == s.read_bytes() for s in list_shards(corpus))


# ---------------------------------------------------------------------------------- recipe and runner
class CorpusParams(StageParams):
    folder: str


class CorpusStage(Stage[CorpusParams]):
    """Stands in for decontaminate: the fixture shards, byte for byte."""

    name = "decontaminate"

    def run(self, ctx: StageContext[CorpusParams]) -> StageResult:
        funnel, by_source = Funnel(), {}
        for s in list_shards(Path(ctx.params.folder)):
            with io.atomic_path(ctx.out_dir / s.name) as tmp:
                shutil.copyfile(s, tmp)
            for d in iter_docs(s):
                funnel.keep(len(d.text))
                by_source.setdefault(d.source, Funnel()).keep(len(d.text))
        return StageResult(funnel=funnel, by_source=by_source)


class NoSpansStage(Stage[StageParams]):
    """Stands in for pii_detect: no span in any document."""

    name = "pii_detect"
    inputs = ("decontaminate",)

    def run(self, ctx: StageContext[StageParams]) -> StageResult:
        for s in list_shards(ctx.inputs["decontaminate"].path):
            write_spans(ctx.out_dir / spans_name(s), [[], [], [], [], [], []])
        return StageResult()


REG = stage_registry({"decontaminate": CorpusStage, "pii_detect": NoSpansStage,
                      "toxicity": "corpora.stages.toxicity:ToxicityStage", "pii": "corpora.stages.pii:PiiReplaceStage"})


def test_a_recipe_ablation_keep_vs_drop_shares_the_corpus_and_reconciles(corpus, tmp_path):
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"""name: tox
stages:
  decontaminate: {{folder: {corpus}}}
  toxicity: {{enabled: true, train_data: {SAMPLE}, threshold: 0.6}}
variants:
  toxicity: [keep, drop]
""", encoding="utf-8")
    rec = Runner(load_recipe(recipe, registry=REG), tmp_path / "wd", REG, workers=2).run()
    assert [a["name"] for a in rec["arms"]] == ["toxicity=keep", "toxicity=drop"]
    keys = {a["name"]: {s["stage"]: s["key"] for s in a["stages"]} for a in rec["arms"]}
    assert keys["toxicity=keep"]["decontaminate"] == keys["toxicity=drop"]["decontaminate"]
    assert keys["toxicity=keep"]["pii_detect"] == keys["toxicity=drop"]["pii_detect"]
    assert keys["toxicity=keep"]["pii"] != keys["toxicity=drop"]["pii"]
    wd = tmp_path / "wd"
    manifests = {a: {st: json.loads((wd / "arms" / a / st / "manifest.json").read_text(encoding="utf-8"))
                     for st in ("toxicity", "pii")} for a in keys}
    drop_ids = json.loads((wd / "arms/toxicity=drop/toxicity" / DROP_FILE).read_text(encoding="utf-8"))
    assert drop_ids and manifests["toxicity=drop"]["toxicity"]["meta"]["report"]["docs_to_drop"] == len(drop_ids)
    assert manifests["toxicity=drop"]["pii"]["funnel"]["dropped"] == {"toxicity": len(drop_ids)}
    assert manifests["toxicity=keep"]["pii"]["funnel"]["dropped"] == {}
    n = sum(len(v) for v in TEXTS.values())
    for a in keys:
        f = Funnel.from_json(manifests[a]["pii"]["funnel"])
        assert f.problems() == [] and f.docs_in == n
        assert manifests[a]["toxicity"]["funnel"]["docs_in"] == n
    # the two arms score alike: the same model (trained in the stage with the recipe seed), the same scores
    tk, td = wd / "arms/toxicity=keep/toxicity", wd / "arms/toxicity=drop/toxicity"
    assert {p: b for p, b in folder_bytes(tk).items() if p != "manifest.json"} == \
        {p: b for p, b in folder_bytes(td).items() if p not in ("manifest.json", DROP_FILE)}
    kept = {d.id for d in all_docs(wd / "arms/toxicity=drop/pii")}
    assert kept == {d.id for d in all_docs(corpus)} - set(drop_ids)


def test_recipe_errors_name_the_toxicity_keys(corpus, tmp_path):
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"name: tox\nstages:\n  decontaminate: {{folder: {corpus}}}\n  toxicity: {{action: drop}}\n",
                      encoding="utf-8")
    with pytest.raises(RecipeError, match=r"stages\.toxicity: .*action: drop needs enabled: true"):
        load_recipe(recipe, registry=REG)
    recipe.write_text(f"name: tox\nstages:\n  decontaminate: {{folder: {corpus}}}\n"
                      "  toxicity: {enabled: true, model: no/such/folder}\n", encoding="utf-8")
    rec = load_recipe(recipe, registry=REG)
    assert rec.params("toxicity").model == str(tmp_path / "no/such/folder")  # relative to the recipe
    with pytest.raises(Exception, match=r"toxicity.model: file not found: .*no/such/folder/model.json"):
        Runner(rec, tmp_path / "wd", REG).run()


# -------------------------------------------------------------------------------------------------- CLI
def test_cli_train_eval_and_score(tmp_path):
    data = tmp_path / "beep"
    data.mkdir()
    shutil.copyfile(SAMPLE, data / "beep_train.tsv")
    shutil.copyfile(SAMPLE, data / "beep_dev.tsv")
    r = CliRunner().invoke(main, ["toxicity", "train", "--data", str(data), "--out", str(tmp_path / "m"), "--seed", "5"])
    assert r.exit_code == 0, r.output
    assert ToxicityModel.load(tmp_path / "m").seed == 5
    r = CliRunner().invoke(main, ["toxicity", "eval", "--data", str(data), "--model", str(tmp_path / "m"),
                                  "--format", "json"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.output)
    assert set(res["systems"]) == {"majority", "keywords", "classifier"} and res["dev"]["examples"] == 48
    assert res["systems"]["classifier"]["macro_f1"] > res["systems"]["majority"]["macro_f1"]
    r = CliRunner().invoke(main, ["toxicity", "eval", "--data", str(data)])
    assert r.exit_code == 0 and "| keyword stems |" in r.output and "| threshold |" in r.output, r.output
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in TEXTS["news"]),
                    encoding="utf-8")
    r = CliRunner().invoke(main, ["toxicity", "score", str(docs), "--model", str(tmp_path / "m"),
                                  "-o", str(tmp_path / "out.jsonl")])
    assert r.exit_code == 0, r.output
    out = [json.loads(ln) for ln in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [o["text"] for o in out] == TEXTS["news"] and all(0 <= o["toxicity"]["score"] <= 1 for o in out)
    docs.write_text('{"text": "좋다"}\n{"body": 1}\n', encoding="utf-8")
    r = CliRunner().invoke(main, ["toxicity", "score", str(docs), "--model", str(tmp_path / "m"),
                                  "-o", str(tmp_path / "bad.jsonl")])
    assert r.exit_code == 1 and f"{docs}:2: record has no string field 'text'" in r.output


# ------------------------------------------------------------------------------------------ shared data
@pytest.mark.shared_data
def test_on_beep_dev_the_classifier_beats_both_baselines(shared_data):
    from corpora.toxicity.evaluate import evaluate

    d = shared_data / "toxicity"  # the shared data has it (its README): a missing file is a failure, not a skip
    train_ex, dev_ex = read_beep(d / "beep_train.tsv"), read_beep(d / "beep_dev.tsv")
    assert (len(train_ex), len(dev_ex)) == (7896, 471)
    res = evaluate(train(train_ex, seed=42), train_ex, dev_ex)
    s = res["systems"]
    assert res["majority_label"] == "none"
    for base in ("majority", "keywords"):
        assert s["classifier"]["macro_f1"] > s[base]["macro_f1"] + 0.2, s
        assert s["classifier"]["binary_macro_f1"] > s[base]["binary_macro_f1"] + 0.2, s
    assert s["classifier"]["macro_f1"] > 0.55 and s["classifier"]["roc_auc"] > 0.8, s
