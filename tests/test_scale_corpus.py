"""The scale corpus (`python -m datagen.scale`, issue 49's input for bench/scale.py): deterministic by seed, in
the sources' formats, and its manifest names the documents the pipeline's funnel must find, by the ids the
collect stage gives them: a real `klue run --until pii_detect` of a 3 MB corpus removes exactly the planted
junk and duplicates and finds every planted PII type (about 25 s on 2 cores). Needs the shared corpus."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from corpora.shards import iter_docs, list_shards
from datagen.scale import check_funnel, generate, stage_folder

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]


def digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def corpus(shared_data, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("scale") / "c"
    generate(out, 0.003, shared_data, seed=1, file_mb=0.5)
    return out


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_text(corpus, shared_data, tmp_path):
    generate(tmp_path / "again", 0.003, shared_data, seed=1, file_mb=0.5)
    generate(tmp_path / "other", 0.003, shared_data, seed=2, file_mb=0.5)
    same, other = digest(corpus), digest(tmp_path / "again")
    assert {k: v for k, v in same.items() if k != "recipe.yaml"} == \
        {k: v for k, v in other.items() if k != "recipe.yaml"}
    kowiki = sorted((corpus / "kowiki").iterdir())
    assert len(kowiki) >= 2  # files of at most file_mb
    assert kowiki[0].read_bytes() != (tmp_path / "other" / "kowiki" / kowiki[0].name).read_bytes()


def test_the_funnel_removes_and_finds_exactly_what_was_planted(corpus):
    wd = corpus.parent / "wd"
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", "run", str(corpus / "recipe.yaml"), "--workdir",
                           str(wd), "--until", "pii_detect", "--workers", "1"], cwd=REPO, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    m = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    collected = {d.id for s in list_shards(stage_folder(wd, "collect")) for d in iter_docs(s)}
    planted = [i for s in m["sources"].values() for k in ("exact", "near") for pair in s["ids"][k] for i in pair]
    planted += [i for s in m["sources"].values() for k in ("junk", "pii") for i in s["ids"][k]]
    assert len(collected) == m["docs"] and set(planted) <= collected  # the manifest's ids are collect's
    f = check_funnel(wd, m)
    assert f["junk"]["planted"] > 10 and f["junk"]["left_after_filter"] == 0
    assert f["exact"]["removed"] == f["exact"]["planted_after_filter"] > 10
    assert f["near"]["removed"] == f["near"]["planted_after_filter"] > 10
    assert f["pii"]["found"] == f["pii"]["planted_pairs"] > 50
    assert f["ok"]
    # bench/scale.py's measure of what collect read when the corpus has no manifest (the shared corpus): the UTF-8
    # of the collected documents, which is what the scale corpus's manifest counts, so both count alike
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_scale", REPO / "bench" / "scale.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    texts = [d.text for s in list_shards(stage_folder(wd, "collect")) for d in iter_docs(s)]
    utf8 = sum(len(t.encode()) for t in texts)
    assert bench.collected_bytes(wd) == utf8 == m["bytes"]
    assert bench.input_mb(wd, "filter", {"gb": "real"}) == pytest.approx(bench.input_mb(wd, "filter", m))
