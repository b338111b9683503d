"""Exact and MinHash near-duplicate removal: survivors, thresholds, audit files, worker independence, and the
b-bit verification of LSH candidates."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import xxhash
from pydantic import ValidationError

import corpora.stages.dedup as dedup_stage
from corpora.dedup import (
    _mix64,
    band_hashes,
    band_hashes_many,
    bbit_jaccard,
    bbit_signature,
    component_roots,
    doc_keys,
    exact_key,
    exact_keys,
    hash_ranges,
    minhash,
    minhash_many,
    optimal_bands,
    partition_runs,
    run_edges,
    shingle_hashes,
    shingle_hashes_many,
    sorted_columns,
    verified_run_edges,
)
from corpora.shards import meta_json
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


def test_exact_keys_of_a_batch_are_those_of_each_text_alone():
    """Empty texts, case that lengthens when lowered (İ), text beyond the BMP (per-text path) among BMP texts."""
    texts = ["", "Hello,  세계!\n좋은 날.", "İstanbul", "", "𝐀 b-c", "ΣΑΣ a_b", "좋은 밤", "𝔘", "."]
    want = [xxhash.xxh3_64_intdigest("".join(c for c in t.lower() if c.isalnum()).encode("utf-32-le"))
            for t in texts]  # the definition, character by character
    assert exact_keys(texts) == want == [exact_key(t) for t in texts]
    assert exact_keys([]) == [] and exact_keys(["", ""]) == [want[0]] * 2


def test_minhash_of_many_sets_is_minhash_of_each():
    """Sets grouped up to `chunk` shingles, a set larger than that alone, an empty one: each signature is the one
    `minhash` gives that set alone, to the bit."""
    rng = np.random.default_rng(0)
    sizes = [1, 3, 100, 0, 7, 40, 41, 200, 5, 1, 64]
    sets = [rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32) for n in sizes]
    for chunk in (8, 64, 65536):  # 8: most sets alone or two together; 64: groups that split between sets
        got = minhash_many(sets, 32, seed=3, chunk=chunk)
        assert len(got) == len(sets)
        for h, sig in zip(sets, got, strict=True):
            assert sig.dtype == np.uint32 and sig.flags.c_contiguous
            assert np.array_equal(sig, minhash(h, 32, seed=3))
    assert np.array_equal(minhash_many([shingle_hashes(BASE, 5)], 256, seed=1)[0],
                          minhash(shingle_hashes(BASE, 5), 256, seed=1))


def test_band_hashes_of_many_signatures_are_each_bands_xxh3():
    """Each (signature, band) hash is xxh3 of that band's uint32 slots in memory order, seeded with the band's
    index (the definition, band by band), for a matrix of signatures, a slice of one and a single one."""
    rng = np.random.default_rng(1)
    sigs = rng.integers(0, 1 << 32, size=(5, 128), dtype=np.uint64).astype(np.uint32)
    bands, rows = 9, 13
    want = np.array([[xxhash.xxh3_64_intdigest(s[i * rows:(i + 1) * rows].tobytes(), seed=i) for i in range(bands)]
                     for s in sigs], dtype=np.uint64)
    got = band_hashes_many(sigs, bands, rows)
    assert got.dtype == np.uint64 and got.shape == (5, bands) and np.array_equal(got, want)
    assert np.array_equal(band_hashes_many(sigs[1:3], bands, rows), want[1:3])
    assert np.array_equal(band_hashes(sigs[4], bands, rows), want[4])
    assert band_hashes_many(sigs[:0], bands, rows).shape == (0, bands)
    assert len(set(want.ravel().tolist())) == want.size  # distinct rows hash apart


def test_shingle_hashes_of_a_batch_are_those_of_each_text_alone():
    """The batched pass drops exactly the windows that straddle two texts; short and empty texts are padded."""
    texts = [BASE, "", "a", "ab  c", " \n ", "abcd", "abcde", NEAR, "한 국", FAR]
    many = shingle_hashes_many(texts, 5)
    for text, got in zip(texts, many, strict=True):
        t = " ".join(text.split()).ljust(5, "\0")
        cp = [ord(c) for c in t]
        want = []
        for i in range(len(cp) - 4):  # the polynomial hash of each window, wrapped to 64 bits, then mixed
            h = 0
            for c in cp[i:i + 5]:
                h = (h * 0x100000001B3 + c) % (1 << 64)
            want.append(h)
        mixed = _mix64(np.array(want, dtype=np.uint64)) >> np.uint64(32)
        assert got.tolist() == mixed.tolist(), text
        assert np.array_equal(shingle_hashes(text, 5), got)


def test_optimal_bands_match_the_datasketch_choice():
    assert optimal_bands(0.8, 128) == (9, 13)
    b, r = optimal_bands(0.5, 128)
    assert b * r <= 128 and b > 9  # a lower threshold needs more, shorter bands


def test_exact_key_ignores_case_whitespace_and_punctuation():
    assert exact_key("Hello,  세계!\n좋은 날.") == exact_key("hello 세계 좋은날")
    assert exact_key("좋은 날") != exact_key("좋은 밤")
    # the table path (BMP) and the per-character path (a text beyond the BMP) hash the same definition: the
    # UTF-32 bytes of the lower-cased alphanumerics
    for text in ("Hello,  세계!\n좋은 날.", "ＡＢＣ① ½ Ⅻ _x_ ²", "𝐀 b-c", "𝐀bc", "İstanbul ΣΑΣ"):
        kept = "".join(c for c in text.lower() if c.isalnum())
        assert exact_key(text) == xxhash.xxh3_64_intdigest(kept.encode("utf-32-le")), text
    assert exact_key("𝐀 b-c") == exact_key("𝐀BC") != exact_key("ABC")
    h, r = sorted_columns(np.array([5, 7, 5, 9, 7], dtype=np.uint64))
    first, member = run_edges(*partition_runs([(0, h[0], r[0])], 0, 1 << 64))
    assert dict(zip(member.tolist(), first.tolist(), strict=True)) == {2: 0, 4: 1}  # each run: its first survives


def roots_of(band_mat: np.ndarray, partitions: int, exclude: list[int] | None = None) -> list[int]:
    """Component roots of one shard's docs x bands matrix through the partitioned merge."""
    h, r = sorted_columns(band_mat)
    ex = np.array(sorted(exclude or []), dtype=np.uint64)
    edges = [run_edges(*partition_runs([(0, h[b], r[b])], lo, hi, ex)) for b in range(band_mat.shape[1])
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
        edges = [run_edges(*partition_runs([(si, h[b], r[b]) for si, h, r in files], lo, hi, ex))
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


def test_dedup_writes_its_survivors_as_write_docs_would(tmp_path):
    """Phase 3 moves rows as Arrow tables: each output shard is byte for byte `write_docs` of the survivors as
    `Doc`s (the definition), with `dup_cluster_size` in the meta of each survivor that absorbed duplicates, across
    row groups (9,000 rows: three groups in and out, the drops moving the group boundaries), and the empty shard
    `write_docs` writes where every document of a shard is a duplicate; the funnel counts every kept character."""
    import json

    from corpora.shards import Doc, list_shards, write_docs

    rng = np.random.default_rng(5)
    words = ["가방", "하늘", "바다", "나무", "기차", "사과", "마을", "노래", "편지", "구름", "강물", "모래"]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(6, 30)))) + f" {i}" for i in range(9000)]
    for i in range(0, 9000, 7):  # exact duplicates (case and punctuation aside) of earlier rows
        texts[i] = texts[i // 2].upper() + "!" if i else texts[i]
    first = docs_of(texts, source="a")
    first = [Doc(d.id, d.text, "b" if i % 3 == 0 else "a", d.meta) for i, d in enumerate(first)]
    second = docs_of([d.text for d in first[:50]], source="a", start=20_000)  # all exact copies of the first
    up = write_shards(tmp_path / "in", [first, second])
    r = run_stage(DedupStage(), {}, "filter", up, tmp_path / "out")
    out = tmp_path / "out"
    clusters = [json.loads(ln) for f in sorted(out.glob("clusters-*.jsonl")) for ln in f.read_text().splitlines()]
    gone = {c["id"] for c in clusters}
    absorbed: dict[str, int] = {}
    for c in clusters:
        absorbed[c["kept_id"]] = absorbed.get(c["kept_id"], 0) + 1
    assert len(gone) > 1000 and any(d.id in absorbed for d in first)
    for i, docs in enumerate([first, second]):
        survivors = [d if d.id not in absorbed else
                     Doc(d.id, d.text, d.source, meta_json({**d.meta_dict(), "dup_cluster_size": absorbed[d.id] + 1}))
                     for d in docs if d.id not in gone]
        write_docs(tmp_path / f"want-{i}.parquet", survivors)
        assert list_shards(out)[i].read_bytes() == (tmp_path / f"want-{i}.parquet").read_bytes()
    assert not [d for d in second if d.id not in gone]  # the second shard came out empty
    kept = [d for d in first if d.id not in gone]
    assert r.funnel.docs_kept == len(kept) and r.funnel.chars_kept == sum(len(d.text) for d in kept)
    assert {s: f.docs_kept for s, f in r.by_source.items()} == {s: sum(d.source == s for d in kept) for s in "ab"}


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


# --- verification of LSH candidates by b-bit signatures ----------------------------------------------------------


def test_bbit_estimator_on_a_hand_computed_case():
    assert bbit_signature(np.array([0x12345678, 0xFFFFFF01, 7], dtype=np.uint32)).tolist() == [0x78, 0x01, 7]
    assert bbit_signature(np.array([0b1011], dtype=np.uint32), b=2).tolist() == [0b11]
    x = np.arange(16, dtype=np.uint8)
    y = x.copy()
    y[:4] += 100  # 12 of 16 slots equal: E = 0.75
    assert bbit_jaccard(x, y) == pytest.approx((0.75 - 1 / 256) / (1 - 1 / 256))  # = 191/255
    assert bbit_jaccard(x, y) == pytest.approx(191 / 255)
    assert bbit_jaccard(x, y, b=2) == pytest.approx((0.75 - 0.25) / 0.75)  # = 2/3
    assert bbit_jaccard(x, x) == pytest.approx(1.0)
    np.testing.assert_allclose(bbit_jaccard(np.stack([x, y]), x), [1.0, 191 / 255])  # broadcast over leaders


def test_bbit_estimate_tracks_the_jaccard():
    """The lowest 8 bits of this module's mod-2^32 MinHash still estimate the 5-gram Jaccard (128 slots, as the
    stage): the premise of verifying a candidate by them."""
    sig = {t: bbit_signature(minhash(shingle_hashes(t, 5), 128, seed=42)) for t in (BASE, NEAR, FAR, OTHER)}
    for a, b in ((BASE, NEAR), (BASE, FAR), (BASE, OTHER), (NEAR, FAR)):
        assert abs(float(bbit_jaccard(sig[a], sig[b])) - jaccard(a, b)) < 0.12, (jaccard(a, b))
    assert bbit_jaccard(sig[BASE], sig[NEAR]) >= 0.8 > bbit_jaccard(sig[BASE], sig[FAR])


def signatures_with(n: int, groups: list[list[int]], slots: int = 128, seed: int = 0) -> np.ndarray:
    """n random b-bit signatures; the documents of each group share 120 of 128 slots (J ~ 0.94), the rest are
    unrelated (J ~ 0)."""
    rng = np.random.default_rng(seed)
    sig = rng.integers(0, 256, size=(n, slots), dtype=np.uint8)
    for g in groups:
        for d in g[1:]:
            sig[d, :120] = sig[g[0], :120]
    return sig


def test_a_band_collision_of_distant_signatures_is_rejected():
    """Two documents whose hashes collide in a band (the LSH false positive) but whose signatures are far apart:
    an edge without verification, none with it; a close pair in the same band stays an edge."""
    band = np.array([7, 7, 9, 9, 3], dtype=np.uint64)  # docs 0~1 and 2~3 collide
    sig = signatures_with(5, [[2, 3]])
    sig[1, :40] = sig[0, :40]  # 0~1: 40 of 128 slots equal, J ~ 0.31
    h, r = sorted_columns(band)
    hk = partition_runs([(0, h[0], r[0])], 0, 1 << 64)
    assert sorted(zip(*(x.tolist() for x in run_edges(*hk)), strict=True)) == [(0, 1), (2, 3)]
    first, member, rejected = verified_run_edges(*hk, {0: sig}, threshold=0.8)
    assert list(zip(first.tolist(), member.tolist(), strict=True)) == [(2, 3)] and rejected == 1
    # a lower threshold admits the distant pair: the threshold, not the collision, decides
    first, member, rejected = verified_run_edges(*hk, {0: sig}, threshold=0.3)
    assert len(first) == 2 and rejected == 0


def test_leader_clustering_joins_the_near_duplicates_of_a_run_whose_first_is_unrelated():
    """A run of three equal band hashes: the first document is unrelated, the other two are near duplicates. The
    star around the first would lose both; leader clustering keeps the pair. Over two shards, so the signatures
    are gathered by key."""
    k = np.sort(np.concatenate([doc_keys(0, np.array([3])), doc_keys(1, np.array([0, 5]))]))
    h = np.full(3, 11, dtype=np.uint64)
    sig = signatures_with(3, [[1, 2]], seed=1)  # rows in key order: (0,3) unrelated, (1,0) ~ (1,5)
    per_shard = {0: np.zeros((4, 128), np.uint8), 1: np.zeros((6, 128), np.uint8)}
    per_shard[0][3], per_shard[1][0], per_shard[1][5] = sig
    first, member, rejected = verified_run_edges(h, k, per_shard, threshold=0.8)
    assert first.tolist() == [k[1]] and member.tolist() == [k[2]]
    assert rejected == 1  # (1,0) joined no leader; (1,5) joined it


def naive_leader_edges(h: np.ndarray, k: np.ndarray, sig: np.ndarray, threshold: float) -> set[tuple[int, int]]:
    """Leader clustering run by run, one comparison at a time: the oracle of the vectorized one."""
    out = set()
    for v in np.unique(h):
        leaders: list[int] = []
        for key in sorted(k[h == v].tolist()):
            for lead in leaders:
                if bbit_jaccard(sig[lead], sig[key]) >= threshold:
                    out.add((lead, key))
                    break
            else:
                leaders.append(key)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_verified_run_edges_equal_sequential_leader_clustering(seed):
    rng = np.random.default_rng(seed)
    n = 60
    groups = [list(rng.choice(n, 4, replace=False)) for _ in range(8)]
    sig = signatures_with(n, groups, seed=seed)
    h = rng.integers(0, 6, size=n).astype(np.uint64)  # few hash values: long mixed runs
    order = np.lexsort((np.arange(n), h))
    k = np.arange(n, dtype=np.uint64)[order]
    first, member, rejected = verified_run_edges(h[order], k, {0: sig}, threshold=0.8)
    got = set(zip(first.tolist(), member.tolist(), strict=True))
    assert got == naive_leader_edges(h, np.arange(n), sig, 0.8)
    assert rejected == n - len(np.unique(h)) - len(got)  # every member of a run without an edge
    assert len(got) > 0 and rejected > 0


def test_a_pathological_run_is_bounded():
    """A run of 3,000 equal band hashes (templated pages): true duplicates cost one comparison each (one
    leader); 300 unrelated documents cost at most members x leaders comparisons and all become leaders."""
    n = 3000
    h = np.zeros(n, dtype=np.uint64)
    k = np.arange(n, dtype=np.uint64)
    same = np.tile(np.arange(128, dtype=np.uint8), (n, 1))
    first, member, rejected = verified_run_edges(h, k, {0: same}, threshold=0.8)
    assert set(first.tolist()) == {0} and len(member) == n - 1 and rejected == 0
    unrelated = signatures_with(300, [], seed=3)
    first, member, rejected = verified_run_edges(h[:300], k[:300], {0: unrelated}, threshold=0.8)
    assert len(first) == 0 and rejected == 299


def folder_digest(folder: Path) -> str:
    """sha256 over the names and sha256s of a folder's files (shards, clusters, samples)."""
    d = hashlib.sha256()
    for name, b in folder_bytes(folder).items():
        d.update(name.encode() + b"\0" + hashlib.sha256(b).digest())
    return d.hexdigest()


# the fixture's output from dedup version 1 (before verification), recorded with that code: 9 bands x 13 rows, and
# 16 x 2 (loose bands: every pair here collides somewhere, FAR and OTHER's copies included)
V1_DEFAULT = "613f2334d978182f6a9f8264981c67b2b8b714586eb9c5af7bd4cfb0cfdd95ff"
V1_LOOSE = "058c063dc1fae02780d3aced3bdc398fdf1547fee333870cffd888aa7761f50c"


def verify_fixture(folder: Path) -> Path:
    return write_shards(folder, [docs_of([BASE, OTHER, FAR, NEAR], source="a"),
                                 docs_of([FAR, BASE.upper(), OTHER + " 끝.", NEAR], source="b", start=10)])


def test_verify_false_is_version_1_byte_for_byte_and_verify_rejects_its_false_positives(tmp_path):
    up = verify_fixture(tmp_path / "in")
    loose = {"bands": 16, "rows": 2}
    off = run_stage(DedupStage(), {**loose, "verify": False}, "filter", up, tmp_path / "off")
    assert folder_digest(tmp_path / "off") == V1_LOOSE
    assert off.meta["report"]["rejected_candidates"] == 0 and off.funnel.docs_kept == 1  # all one cluster
    run_stage(DedupStage(), {"verify": False}, "filter", up, tmp_path / "off-default")
    assert folder_digest(tmp_path / "off-default") == V1_DEFAULT
    # verified, the loose bands' false positives (BASE ~ FAR at J < 0.5, BASE ~ OTHER) are gone: the output of
    # the recipe's 9 x 13, which had none here
    on = run_stage(DedupStage(), loose, "filter", up, tmp_path / "on")
    assert folder_digest(tmp_path / "on") == V1_DEFAULT
    assert on.meta["report"]["rejected_candidates"] > 0 and on.meta["report"]["verify"] is True
    assert [d.text for d in read_all(tmp_path / "on")] == [BASE, OTHER, FAR]
    assert dict(on.funnel.dropped) == {"exact_duplicate": 3, "near_duplicate": 2}


@pytest.mark.parametrize("workers", [1, 2])
def test_verified_output_is_independent_of_workers_and_hash_partitions(tmp_path, monkeypatch, workers):
    """With candidates rejected (loose bands), the output still depends on neither the worker count nor the
    number of hash ranges: a run of equal hashes is never split, and its edges depend on its keys alone."""
    up = verify_fixture(tmp_path / "in")
    loose = {"bands": 16, "rows": 2}
    one = run_stage(DedupStage(), loose, "filter", up, tmp_path / "p1", workers=workers)
    monkeypatch.setattr(dedup_stage, "PARTITION_DOCS", 1)  # 8 documents: 8 hash ranges per band
    many = run_stage(DedupStage(), loose, "filter", up, tmp_path / "p8", workers=workers)
    assert folder_digest(tmp_path / "p1") == folder_digest(tmp_path / "p8") == V1_DEFAULT
    assert one.meta == many.meta and one.meta["report"]["rejected_candidates"] > 0


def test_verify_is_on_by_default_and_versioned():
    assert DedupParams().verify is True
    assert DedupStage.version == "2"
