"""The pii_detect and pii stages, run by hand (no runner): stand-off spans, on/off arms that differ only
inside detected spans, determinism across worker counts, drop mode, and quarantine on time-outs."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from corpora.pii.replace import placeholder_substitute, replace_spans, surrogate_substitute
from corpora.pii.spans import read_spans
from corpora.pii.surrogates import DocSurrogates
from corpora.shards import Doc, doc_id, iter_docs, list_shards, meta_json, write_docs
from corpora.stages.pii import PiiReplaceParams, PiiReplaceStage
from corpora.stages.pii_detect import PiiDetectParams, PiiDetectStage
from datagen.pii.synth import generate
from pipeline.stage import StageContext, StageInput

RECIPE = types.SimpleNamespace(seed=42, sources=[])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """Two shards of synthetic documents (with and without PII) as a decontaminate output."""
    d = tmp_path_factory.mktemp("decontaminate")
    recs = list(generate(24, seed=11))
    plain = ["오늘은 날씨가 맑고 기온은 23도였다.", "2024년 5월 12일 총 1,234명이 참가했다.", ""]
    docs = [Doc(doc_id("synth", "a.jsonl", i), r["text"], "synth", meta_json({"i": i})) for i, r in enumerate(recs)]
    docs += [Doc(doc_id("plain", "b.txt", i), t, "plain", meta_json({"i": i})) for i, t in enumerate(plain)]
    write_docs(d / "shard-00000.parquet", docs[:14])
    write_docs(d / "shard-00001.parquet", docs[14:])
    return d


def ctx(out: Path, params, inputs: dict[str, Path], workers: int = 1) -> StageContext:
    out.mkdir(parents=True, exist_ok=True)
    return StageContext(out_dir=out, params=params, recipe=RECIPE, workers=workers,
                        inputs={k: StageInput(k, p, {"meta": {}}) for k, p in inputs.items()})


@pytest.fixture(scope="module")
def detected(corpus, tmp_path_factory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("pii_detect")
    res = PiiDetectStage().run(ctx(out, PiiDetectParams(language="ko"), {"decontaminate": corpus}))
    return out, res


def texts(folder: Path) -> list[tuple[str, str, str]]:
    return [(s.name, d.id, d.text) for s in list_shards(folder) for d in iter_docs(s)]


def test_detect_writes_standoff_spans(corpus, detected):
    out, res = detected
    assert res.funnel.problems() == [] and res.funnel.docs_in == 27 and res.funnel.docs_kept == 27
    assert sorted(p.name for p in out.glob("spans-*.parquet")) == ["spans-00000.parquet", "spans-00001.parquet"]
    cols = pq.read_schema(out / "spans-00000.parquet").names
    assert cols == ["id", "start", "end", "type", "score", "recognizer"]
    report = res.meta["report"]
    n_spans = sum(len(v) for p in out.glob("spans-*.parquet") for v in read_spans(p).values())
    assert report["spans"] == n_spans == sum(report["spans_per_type"].values()) > 24
    assert {"PERSON", "PHONE", "RRN"} <= set(report["spans_per_type"])
    assert report["docs_with_pii"] == 24  # every synthetic doc, none of the plain ones
    # spans point at real text
    by_id = {i: t for _, i, t in texts(corpus)}
    for p in out.glob("spans-*.parquet"):
        for i, spans in read_spans(p).items():
            assert all(0 <= s.start < s.end <= len(by_id[i]) for s in spans)


@pytest.mark.parametrize("mode", ["placeholder", "surrogate"])
def test_on_off_arms_differ_only_inside_spans(corpus, detected, tmp_path, mode):
    det_out, _ = detected
    inputs = {"decontaminate": corpus, "pii_detect": det_out}
    on = PiiReplaceStage().run(ctx(tmp_path / "on", PiiReplaceParams(language="ko", mode=mode), inputs))
    off = PiiReplaceStage().run(ctx(tmp_path / "off", PiiReplaceParams(language="ko", enabled=False), inputs))
    t_on, t_off = texts(tmp_path / "on"), texts(tmp_path / "off")
    # same shards, same ids, same order
    assert [(s, i) for s, i, _ in t_on] == [(s, i) for s, i, _ in t_off] == [(s, i) for s, i, _ in texts(corpus)]
    # the off arm is the input, byte for byte
    for s in list_shards(corpus):
        assert (tmp_path / "off" / s.name).read_bytes() == s.read_bytes()
    # the on arm is exactly the off arm with the detected spans replaced: nothing else changed
    spans = {}
    for p in det_out.glob("spans-*.parquet"):
        spans.update(read_spans(p))
    changed = 0
    for (_, i, a), (_, _, b) in zip(t_on, t_off, strict=True):
        sub = placeholder_substitute if mode == "placeholder" else surrogate_substitute(DocSurrogates(42, i, language="ko"))
        assert a == replace_spans(b, spans.get(i, []), sub)
        changed += a != b
    assert changed == on.meta["report"]["docs_changed"] == 24
    assert off.meta["report"]["docs_changed"] == 0 and off.meta["placeholder_tokens"] == []
    assert on.funnel.problems() == [] and on.funnel.docs_kept == 27
    diff = json.loads((tmp_path / "on" / "diff.json").read_text())
    assert diff["spans_changed"] == sum(len(v) for v in spans.values())
    if mode == "placeholder":
        assert "[PHONE]" in on.meta["placeholder_tokens"] and "[PERSON]" in on.meta["placeholder_tokens"]
    else:
        assert on.meta["placeholder_tokens"] == []


def test_types_subset_and_workers_do_not_change_output(corpus, detected, tmp_path):
    det_out, _ = detected
    # detection with 2 workers: byte-identical span files
    PiiDetectStage().run(ctx(tmp_path / "det2", PiiDetectParams(language="ko"), {"decontaminate": corpus}, workers=2))
    for p in det_out.glob("spans-*.parquet"):
        assert (tmp_path / "det2" / p.name).read_bytes() == p.read_bytes()
    inputs = {"decontaminate": corpus, "pii_detect": det_out}
    params = PiiReplaceParams(language="ko", mode="surrogate", types=["PHONE", "EMAIL"])
    r1 = PiiReplaceStage().run(ctx(tmp_path / "w1", params, inputs, workers=1))
    PiiReplaceStage().run(ctx(tmp_path / "w2", params, inputs, workers=2))
    for s in list_shards(corpus):
        assert (tmp_path / "w1" / s.name).read_bytes() == (tmp_path / "w2" / s.name).read_bytes()
    assert set(r1.meta["report"]["per_type"]) <= {"PHONE", "EMAIL"}
    with pytest.raises(ValueError, match="unknown PII types"):
        PiiReplaceParams(language="ko", types=["PHONE", "SHOE_SIZE"])


def test_drop_mode_drops_dense_documents(corpus, detected, tmp_path):
    det_out, _ = detected
    res = PiiReplaceStage().run(ctx(tmp_path / "drop", PiiReplaceParams(language="ko", mode="drop", drop_density=0.05),
                                    {"decontaminate": corpus, "pii_detect": det_out}))
    assert res.funnel.problems() == []
    dropped = res.funnel.dropped["pii_density"]
    assert 0 < dropped <= 24 and res.funnel.docs_kept == 27 - dropped
    kept = texts(tmp_path / "drop")
    assert len(kept) == 27 - dropped
    originals = {i: t for _, i, t in texts(corpus)}
    assert all(originals[i] == t for _, i, t in kept)  # kept documents are unchanged in drop mode


def test_timeout_quarantines_and_both_arms_leave_it_out(corpus, tmp_path):
    det = tmp_path / "det"
    res = PiiDetectStage().run(ctx(det, PiiDetectParams(language="ko", doc_timeout_s=1e-9), {"decontaminate": corpus}))
    assert res.funnel.problems() == [] and res.funnel.quarantined > 0
    failed = json.loads((det / "failed_ids.json").read_text())
    assert len(failed) == res.funnel.quarantined
    q = [json.loads(x) for x in (det / "quarantine" / "pii_detect.jsonl").read_text().splitlines()]
    assert len(q) == len(failed) and q[0]["reason"] == "pii_timeout" and q[0]["file"].startswith("shard-")
    inputs = {"decontaminate": corpus, "pii_detect": det}
    for name, params in [("on", PiiReplaceParams(language="ko")), ("off", PiiReplaceParams(language="ko", enabled=False))]:
        r = PiiReplaceStage().run(ctx(tmp_path / name, params, inputs))
        assert r.funnel.quarantined == len(failed) and r.funnel.problems() == []
        assert not {i for _, i, _ in texts(tmp_path / name)} & set(failed)


def test_optional_types_flow_from_detection_to_placeholders(tmp_path):
    """`pii_detect: {optional_types: [AGE]}` detects ages; `pii` then reserves and writes [AGE], and the
    default detection leaves them alone."""
    src = tmp_path / "decontaminate"
    docs = [Doc(doc_id("s", "a.txt", 0), "신청인 김민수 (만 34세) 은 2024년 5월 12일에 접수했다.", "s", meta_json({}))]
    write_docs(src / "shard-00000.parquet", docs)
    outs = {}
    for name, params in (("default", PiiDetectParams(language="ko")), ("age", PiiDetectParams(language="ko", optional_types=["AGE"]))):
        det = PiiDetectStage().run(ctx(tmp_path / name / "det", params, {"decontaminate": src}))
        assert ("AGE" in det.meta["report"]["types"]) is (name == "age")
        rep_ctx = ctx(tmp_path / name / "pii", PiiReplaceParams(language="ko"), {"decontaminate": src})
        rep_ctx.inputs["pii_detect"] = StageInput("pii_detect", tmp_path / name / "det", {"meta": det.meta})
        res = PiiReplaceStage().run(rep_ctx)
        outs[name] = (texts(tmp_path / name / "pii")[0][2], res.meta["placeholder_tokens"])
    assert outs["default"] == ("신청인 [PERSON] (만 34세) 은 2024년 5월 12일에 접수했다.", outs["default"][1])
    assert "[AGE]" not in outs["default"][1]
    assert outs["age"][0] == "신청인 [PERSON] ([AGE]) 은 2024년 5월 12일에 접수했다."
    assert "[AGE]" in outs["age"][1] and set(outs["age"][1]) - set(outs["default"][1]) == {"[AGE]"}
    with pytest.raises(ValueError, match="optional_types"):
        PiiDetectParams(language="ko", optional_types=["SHOE_SIZE"])
