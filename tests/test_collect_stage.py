"""The collect stage as a whole: shard layout and order, worker-count independence, determinism, max_docs,
the cache fingerprint, and a bounded read of every source of the shared corpus."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from corpora.shards import iter_docs, list_shards
from corpora.sources import SourceSpec
from corpora.stages.collect import CollectParams, CollectStage
from pipeline.stage import StageContext
from pipeline.stages import STAGES

REPO = Path(__file__).resolve().parents[1]


def make_ctx(out: Path, sources: list, workers: int = 1, **params) -> StageContext:
    out.mkdir(parents=True, exist_ok=True)
    specs = [s if isinstance(s, SourceSpec) else SourceSpec(**s) for s in sources]
    return StageContext(out_dir=out, params=CollectParams(**params), inputs={},
                        recipe=SimpleNamespace(seed=7, sources=specs), workers=workers)


def tree_digest(folder: Path) -> dict[str, str]:
    """Every file under `folder` -> sha256 of its bytes."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def mixed_sources(tmp_path: Path) -> list[dict]:
    """Three sources, several files each, some damage: exercises ordering and quarantine merging."""
    raw = tmp_path / "raw"
    (raw / "lines").mkdir(parents=True)
    for i in range(4):
        body = "".join(f"파일{i} 줄{j}\n" for j in range(7 + i))
        if i == 2:
            body += "깨진 \udcff 줄\n".encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")
        (raw / "lines" / f"f{i}.txt").write_bytes(body.encode("utf-8", "surrogateescape"))
    rows = [{"text": f"청원 {k}"} for k in range(9)] + [{"no": "text"}]
    (raw / "p.jsonl.gz").write_bytes(gzip.compress("".join(json.dumps(r, ensure_ascii=False) + "\n"
                                                           for r in rows).encode(), mtime=0))
    (raw / "qa.csv").write_text("Q,A\n" + "".join(f"질문{k},답{k}\n" for k in range(5)) + "남는,필드,하나\n",
                                encoding="utf-8")
    return [
        {"name": "lines", "path": str(raw / "lines"), "format": "text"},
        {"name": "pet", "path": str(raw / "p.jsonl.gz"), "format": "jsonl"},
        {"name": "qa", "path": str(raw / "qa.csv"), "format": "csv", "text_columns": ["Q", "A"]},
    ]


def test_registry_points_at_this_stage():
    assert STAGES.get("collect") is CollectStage
    assert CollectStage.sources_model is SourceSpec and CollectStage.params_model is CollectParams


def test_shards_follow_source_file_chunk_order_and_never_span_files(tmp_path, mixed_sources):
    ctx = make_ctx(tmp_path / "out", mixed_sources, shard_docs=4)
    res = CollectStage().run(ctx)
    shards = list_shards(ctx.out_dir)
    per_shard = [[(d.source, d.meta_dict()["file"], d.meta_dict().get("line")) for d in iter_docs(s)]
                 for s in shards]
    assert all(len(s) <= 4 and len({(src, f) for src, f, _ in s}) == 1 for s in per_shard)
    flat = [x for s in per_shard for x in s]
    assert flat == sorted(flat, key=lambda x: ([m["name"] for m in mixed_sources].index(x[0]), x[1], x[2]))
    # f0..f3 hold 7, 8, 9(+1 bad), 10 lines: chunks of 4 -> 2+2+3+3 shards; 9 petitions -> 3; 5 rows -> 2
    assert len(shards) == 15 and res.meta["shards"] == 15
    assert res.meta["sources"]["lines"]["shards"] == [0, 10]
    assert res.meta["sources"]["qa"]["shards"] == [13, 15]
    ids = [d.id for s in shards for d in iter_docs(s)]
    assert len(ids) == len(set(ids)) == res.funnel.docs_kept == 34 + 9 + 5
    assert res.by_source["lines"].quarantined == res.by_source["pet"].quarantined == 1
    assert res.by_source["qa"].quarantined == 1 and res.funnel.quarantined == 3
    assert sorted(p.name for p in (ctx.out_dir / "quarantine").iterdir()) == ["lines.jsonl", "pet.jsonl",
                                                                           "qa.jsonl"]
    assert not (ctx.out_dir / "_work").exists()
    assert not [p for p in ctx.out_dir.iterdir() if p.name.startswith(".")]  # no part or temp files left


def test_output_bytes_do_not_depend_on_worker_count(tmp_path, mixed_sources):
    a = make_ctx(tmp_path / "w1", mixed_sources, workers=1, shard_docs=4)
    b = make_ctx(tmp_path / "w2", mixed_sources, workers=2, shard_docs=4)
    ra, rb = CollectStage().run(a), CollectStage().run(b)
    assert tree_digest(a.out_dir) == tree_digest(b.out_dir)
    assert ra.funnel.to_json() == rb.funnel.to_json() and ra.meta == rb.meta


def test_two_runs_give_identical_bytes(tmp_path, mixed_sources):
    digests = []
    for k in range(2):
        ctx = make_ctx(tmp_path / f"run{k}", mixed_sources)
        CollectStage().run(ctx)
        digests.append(tree_digest(ctx.out_dir))
    assert digests[0] == digests[1] and any(k.startswith("shard-") for k in digests[0])


def test_max_docs_reads_the_first_documents_in_file_order(tmp_path, mixed_sources):
    spec = {**mixed_sources[0], "max_docs": 12}
    res = CollectStage().run(make_ctx(tmp_path / "out", [spec], workers=2))
    docs = [d for s in list_shards(tmp_path / "out") for d in iter_docs(s)]
    assert [d.text for d in docs] == [f"파일0 줄{j}" for j in range(7)] + [f"파일1 줄{j}" for j in range(5)]
    assert res.meta["sources"]["lines"]["max_docs_reached"] is True
    assert res.funnel.docs_in == res.funnel.docs_kept == 12


def test_fingerprint_follows_content_and_new_files_not_mtimes_or_location(tmp_path, mixed_sources):
    stage = CollectStage()
    ctx = make_ctx(tmp_path / "out", mixed_sources)
    fp = stage.fingerprint(ctx)
    assert stage.fingerprint(ctx) == fp
    assert [row[0] for row in fp["files"]["lines"]] == ["f0.txt", "f1.txt", "f2.txt", "f3.txt"]
    src = Path(mixed_sources[0]["path"])
    f0 = src / "f0.txt"
    st = f0.stat()
    os.utime(f0, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # touched, same bytes: same key
    assert stage.fingerprint(ctx) == fp
    moved = tmp_path / "elsewhere"
    shutil.copytree(src, moved)  # the corpus copied to another folder: new paths and mtimes, same key
    assert stage.fingerprint(make_ctx(tmp_path / "out", [{**mixed_sources[0], "path": str(moved)},
                                                          *mixed_sources[1:]])) == fp
    text = f0.read_text(encoding="utf-8")
    f0.write_text(text.replace("줄0", "줄9", 1), encoding="utf-8")  # same size, other bytes
    os.utime(f0, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the old mtime put back
    fp2 = stage.fingerprint(ctx)
    assert fp2 != fp and fp2["files"]["lines"][0][1] == fp["files"]["lines"][0][1]
    (src / "f9.txt").write_text("새 파일", encoding="utf-8")
    fp3 = stage.fingerprint(ctx)
    assert fp3 != fp2 and len(fp3["files"]["lines"]) == 5


def test_duplicate_source_names_are_rejected(tmp_path, mixed_sources):
    ctx = make_ctx(tmp_path / "out", [mixed_sources[0], {**mixed_sources[1], "name": "lines"}])
    with pytest.raises(ValueError, match=r"unique.*'lines'"):
        CollectStage().run(ctx)


@pytest.mark.shared_data
def test_every_shared_corpus_source_reads_cleanly(tmp_path, shared_data, monkeypatch):
    """The recipe's sources, `max_docs` each: no quarantine, and each format's text looks as expected."""
    import yaml

    monkeypatch.setenv("KLUE_DATA_DIR", str(shared_data))
    raw = yaml.safe_load((REPO / "recipes" / "klue-tiny-cpu.yaml").read_text(encoding="utf-8"))
    specs = [SourceSpec(**{**s, "max_docs": 40}) for s in raw["sources"]]
    ctx = make_ctx(tmp_path / "out", specs, workers=2, **raw["stages"]["collect"])
    stage = CollectStage()
    assert set(stage.fingerprint(ctx)["files"]) == {s.name for s in specs}
    res = stage.run(ctx)
    docs: dict[str, list] = {}
    for shard in list_shards(ctx.out_dir):
        for d in iter_docs(shard):
            docs.setdefault(d.source, []).append(d)
    assert res.funnel.quarantined == 0 and not (ctx.out_dir / "quarantine").exists()
    expected = {s.name: 40 for s in specs} | {"law": 11}  # law: one document per file, 11 files
    assert {k: len(v) for k, v in docs.items()} == expected
    assert docs["kowiki"][0].text.split("\n")[0] == "코리아와이드터미널"  # a block starts with its title line
    assert all("\n" not in d.text for d in docs["nsmc"] + docs["news_comments"] + docs["parallel_ko"])
    assert docs["chatbot_qa"][0].text == "12시 땡!\n하루가 또 가네요."
    assert set(docs["petitions"][0].meta_dict()["fields"]) == {"title", "category"}
    assert "\r" not in "".join(d.text for d in docs["law"])  # the constitution file has CRLF line ends
    assert {d.meta_dict()["license"] for d in docs["nsmc"]} == {"CC0"}
