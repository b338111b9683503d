"""Exact and MinHash near-duplicate removal: survivors, thresholds, audit files, worker independence."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import ValidationError

from corpora.dedup import (
    component_roots,
    doc_keys,
    exact_key,
    hash_ranges,
    minhash,
    optimal_bands,
    partition_edges,
    shingle_hashes,
    sorted_columns,
)
from corpora.stages.dedup import DedupParams, DedupStage
from testkit.curation import docs_of, folder_bytes, read_all, run_stage, write_shards

BASE = (
    "한빛시는 강을 따라 길게 뻗은 도시로, 조선 후기부터 상업의 중심지로 성장하였다. 근대에 들어서는 철도가 놓이면서 "
    "물류 거점이 되었고, 지금은 인구 삼십만 명이 사는 지역 거점 도시다. 매년 가을에는 강변에서 등불 축제가 열려 "
    "전국에서 관광객이 찾아온다. 시는 최근 구도심 재생 사업을 시작해 오래된 시장 골목을 새롭게 단장하고 있다."
)
OTHER = (
    "푸른숲 국립공원은 해발 천 미터가 넘는 봉우리 여러 개를 품고 있어 사계절 내내 등산객이 많다. 봄에는 철쭉이, "
    "가을에는 단풍이 산을 붉게 물들인다. 공원 관리소는 탐방로 훼손을 막기 위해 일부 구간의 출입을 제한하고 있다."
)


def shingles(text: str, n: int = 5) -> set[str]:
    t = " ".join(text.split())
    return {t[i : i + n] for i in range(len(t) - n + 1)}


def jaccard(a: str, b: str) -> float:
    x, y = shingles(a), shingles(b)
    return len(x & y) / len(x | y)


NEAR = BASE.replace("삼십만", "삼십일만")          # one small edit
FAR = BASE[: len(BASE) // 2] + " " + OTHER       # shares only half


def test_premises_of_the_near_duplicate_cases():
    assert jaccard(BASE, NEAR) > 0.9
    assert jaccard(BASE, FAR) < 0.5


def test_minhash_estimates_jaccard():
    a = minhash(shingle_hashes(BASE, 5), 256, seed=1)
    b = minhash(shingle_hashes(NEAR, 5), 256, seed=1)
    c = minhash(shingle_hashes(FAR, 5), 256, seed=1)
    assert abs((a == b).mean() - jaccard(BASE, NEAR)) < 0.08
    assert abs((a == c).mean() - jaccard(BASE, FAR)) < 0.08
    assert not np.array_equal(a, minhash(shingle_hashes(BASE, 5), 256, seed=2))


def test_optimal_bands_match_the_datasketch_choice():
    assert optimal_bands(0.8, 128) == (9, 13)
    b, r = optimal_bands(0.5, 128)
    assert b * r <= 128 and b > 9  # a lower threshold needs more, shorter bands


def test_exact_key_ignores_case_whitespace_and_punctuation():
    assert exact_key("Hello,  세계!\n좋은 날.") == exact_key("hello 세계 좋은날")
    assert exact_key("좋은 날") != exact_key("좋은 밤")
    h, r = sorted_columns(np.array([5, 7, 5, 9, 7], dtype=np.uint64))
    first, member = partition_edges([(0, h[0], r[0])], 0, 1 << 64)
    assert dict(zip(member.tolist(), first.tolist(), strict=True)) == {2: 0, 4: 1}  # each run: its first survives


def roots_of(band_mat: np.ndarray, partitions: int, exclude: list[int] | None = None) -> list[int]:
    """Component roots of one shard's docs x bands matrix through the partitioned merge."""
    h, r = sorted_columns(band_mat)
    ex = np.array(sorted(exclude or []), dtype=np.uint64)
    edges = [partition_edges([(0, h[b], r[b])], lo, hi, ex) for b in range(band_mat.shape[1])
             for lo, hi in hash_ranges(partitions)]
    nodes, roots = component_roots(np.concatenate([e[0] for e in edges]), np.concatenate([e[1] for e in edges]))
    out = list(range(len(band_mat)))
    for n, rt in zip(nodes.tolist(), roots.tolist(), strict=True):
        out[n] = rt
    return out


def test_components_are_first_occurrences_and_transitive():
    bands = np.array([[1, 10], [2, 20], [3, 10], [4, 30], [3, 40]], dtype=np.uint64)
    # 0~2 share band 1; 2~4 share band 0 -> one cluster {0, 2, 4} rooted at 0
    assert roots_of(bands, 1) == [0, 1, 0, 3, 0]
    assert roots_of(bands, 5) == [0, 1, 0, 3, 0]
    assert roots_of(bands, 1, exclude=[2]) == [0, 1, 2, 3, 4]  # an exact duplicate takes no part


def reference_roots(band_mat: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """The global step as it was before partitioning (one process, every band hash in memory, union-find
    rooted at the smallest index): the oracle for the partitioned one."""
    n = len(band_mat)
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    idx = np.flatnonzero(candidates)
    for j in range(band_mat.shape[1]):
        first: dict[int, int] = {}
        for i in idx.tolist():
            f = first.setdefault(int(band_mat[i, j]), i)
            a, b = find(f), find(i)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return np.array([find(i) for i in range(n)])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_partitioned_merge_equals_the_in_memory_union_find(seed):
    """Random band hashes with planted collisions (and huge hash values near 2^64) over three shards: the same
    roots as the in-memory union-find, whatever the number of hash ranges."""
    rng = np.random.default_rng(seed)
    sizes = [40, 0, 55, 30]
    n, bands = sum(sizes), 6
    mat = rng.integers(0, 1 << 63, size=(n, bands), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    for _ in range(60):  # copy one band of a random doc into another: a chain of collisions
        a, b, j = rng.integers(0, n), rng.integers(0, n), rng.integers(0, bands)
        mat[b, j] = mat[a, j]
    mat[rng.integers(0, n, 5), 0] = np.uint64((1 << 64) - 1)  # the very top of the hash space
    excluded = rng.choice(n, 8, replace=False)
    cand = np.ones(n, dtype=bool)
    cand[excluded] = False
    want = reference_roots(mat, cand)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    key_of = np.concatenate([doc_keys(si, np.arange(k)) for si, k in enumerate(sizes)])
    files = [(si, *sorted_columns(mat[offsets[si]:offsets[si + 1]])) for si in range(len(sizes))]
    ex = np.sort(key_of[excluded])
    for partitions in (1, 2, 7, 64):
        edges = [partition_edges([(si, h[b], r[b]) for si, h, r in files], lo, hi, ex)
                 for b in range(bands) for lo, hi in hash_ranges(partitions)]
        nodes, roots = component_roots(np.concatenate([e[0] for e in edges]), np.concatenate([e[1] for e in edges]))
        got = key_of.copy()
        pos = np.searchsorted(key_of, nodes)
        got[pos] = roots
        np.testing.assert_array_equal(got, key_of[want], err_msg=f"partitions={partitions}")
    assert (want != np.arange(n)).sum() > 10  # the planted collisions did make clusters


def test_dedup_stage_exact_and_near(tmp_path):
    s0 = docs_of([OTHER, BASE, "  한빛시는 강을 따라 " + BASE[len("한빛시는 강을 따라 "):].upper()], source="wiki")
    s1 = docs_of([NEAR, FAR, BASE.replace(" ", "  ") + "!!"], source="web", start=10)
    up = write_shards(tmp_path / "in", [s0, s1])
    res = run_stage(DedupStage(), {}, "filter", up, tmp_path / "out")
    assert res.funnel.docs_in == 6
    assert dict(res.funnel.dropped) == {"exact_duplicate": 2, "near_duplicate": 1}
    kept = read_all(tmp_path / "out")
    assert [d.id for d in kept] == [s0[0].id, s0[1].id, s1[1].id]  # the first occurrence survives
    clusters = [json.loads(x) for p in sorted((tmp_path / "out").glob("clusters-*.jsonl"))
                for x in p.read_text().splitlines()]
    assert {(c["id"], c["reason"], c["kept_id"]) for c in clusters} == {
        (s0[2].id, "exact_duplicate", s0[1].id),
        (s1[0].id, "near_duplicate", s0[1].id),
        (s1[2].id, "exact_duplicate", s0[1].id),
    }
    assert kept[1].meta_dict()["dup_cluster_size"] == 4
    assert "dup_cluster_size" not in kept[0].meta_dict()
    assert res.by_source["web"].dropped["near_duplicate"] == 1
    assert not (tmp_path / "out" / "_work").exists()


def test_near_threshold_controls_what_is_a_duplicate(tmp_path):
    up = write_shards(tmp_path / "in", [docs_of([BASE, FAR, NEAR])])
    strict = run_stage(DedupStage(), {"threshold": 0.8, "exact": False}, "filter", up, tmp_path / "a")
    assert dict(strict.funnel.dropped) == {"near_duplicate": 1}  # NEAR only, FAR (J < 0.5) stays
    loose = run_stage(DedupStage(), {"threshold": 0.3, "exact": False}, "filter", up, tmp_path / "b")
    assert dict(loose.funnel.dropped) == {"near_duplicate": 2}
    off = run_stage(DedupStage(), {"near": False}, "filter", up, tmp_path / "c")
    assert off.funnel.docs_kept == 3


def test_dedup_is_independent_of_workers(tmp_path):
    shards = [docs_of([BASE, OTHER] * 3, source="a"), docs_of([NEAR, FAR, BASE], source="b", start=50), []]
    up = write_shards(tmp_path / "in", shards)
    r1 = run_stage(DedupStage(), {}, "filter", up, tmp_path / "w1", workers=1)
    r2 = run_stage(DedupStage(), {}, "filter", up, tmp_path / "w2", workers=2)
    assert folder_bytes(tmp_path / "w1") == folder_bytes(tmp_path / "w2")
    assert r1.funnel.to_json() == r2.funnel.to_json() and r1.funnel.docs_kept == 3


def test_dedup_output_is_independent_of_hash_partitions(tmp_path, monkeypatch):
    import corpora.stages.dedup as stage

    shards = [docs_of([BASE, OTHER, NEAR] * 3, source="a"), docs_of([NEAR, FAR, BASE, OTHER.upper()], source="b",
                                                                  start=50)]
    up = write_shards(tmp_path / "in", shards)
    one = run_stage(DedupStage(), {}, "filter", up, tmp_path / "p1")
    monkeypatch.setattr(stage, "PARTITION_DOCS", 1)  # 13 documents: 13 hash ranges per band
    many = run_stage(DedupStage(), {}, "filter", up, tmp_path / "p13")
    assert folder_bytes(tmp_path / "p1") == folder_bytes(tmp_path / "p13")
    assert one.meta == many.meta and one.funnel.docs_kept == 3


def test_dedup_params_validation():
    with pytest.raises(ValidationError, match="set both bands and rows"):
        DedupParams(bands=8)
    with pytest.raises(ValidationError, match="exceeds num_perm"):
        DedupParams(bands=20, rows=10, num_perm=128)
    assert DedupParams(bands=16, rows=8).band_rows() == (16, 8)


def test_dedup_resumes_from_its_journal_after_a_kill_at_its_end(tmp_path, monkeypatch):
    """Shard-level resume across dedup's phases: killed after its last phase (every task recorded, the phases'
    files no longer needed by this run), the rerun runs no task, still finds every file a recorded task wrote,
    and writes what an uninterrupted run writes."""
    import shutil
    import types as _types

    import corpora.stages.dedup as stage
    from pipeline.stage import StageContext, StageInput

    up = write_shards(tmp_path / "in", [docs_of([BASE, OTHER], source="a"), docs_of([NEAR, FAR], start=10),
                                        docs_of([BASE.upper(), OTHER], start=20)])
    run_stage(DedupStage(), {}, "filter", up, tmp_path / "ref")
    out = tmp_path / "out"
    out.mkdir()
    tasks: list[str] = []
    real = {n: getattr(stage, n) for n in ("_dedup_signatures", "_dedup_edges", "_dedup_write")}
    for name, fn in real.items():
        monkeypatch.setattr(stage, name, lambda task, name=name, fn=fn: (tasks.append(name), fn(task))[1])

    def killed(*args):
        raise KeyboardInterrupt("the driver is killed")

    def make_ctx() -> StageContext:
        return StageContext(out_dir=out, params=DedupParams(), recipe=_types.SimpleNamespace(seed=42, sources=[]),
                            inputs={"filter": StageInput("filter", up, {"meta": {}})}, journal=out / "_journal")

    real_samples = stage.write_samples
    monkeypatch.setattr(stage, "write_samples", killed)
    with pytest.raises(KeyboardInterrupt):
        DedupStage().run(make_ctx())
    assert tasks.count("_dedup_signatures") == 3 and tasks.count("_dedup_write") == 3
    tasks.clear()
    monkeypatch.setattr(stage, "write_samples", real_samples)
    DedupStage().run(make_ctx())
    assert tasks == []  # every task of every phase was recorded
    shutil.rmtree(out / "_journal")  # what the runner does once the stage is done
    assert folder_bytes(out) == folder_bytes(tmp_path / "ref")
