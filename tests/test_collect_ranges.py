"""Collect with large files split into pieces (`split_bytes`, corpora/readers/ranges.py): the pieces read exactly
the whole file's records, the stage's bytes equal the unsplit run's for any worker count, a damaged split
Parquet file falls back to a whole read, and a rerun after `kill -9` reads only the unfinished pieces.

The inputs are generated files of a few MB with 64 KiB pieces, with malformed records (invalid UTF-8, CP949 in a
UTF-8 file, broken JSON, over-long records, control characters, blank and whitespace lines) placed on both
sides of the cuts the planner makes."""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpora.readers import ReadOptions, SourceFile, Span, read_file
from corpora.readers.ranges import byte_cuts, count_newlines, line_spans, row_group_spans, split_kind
from corpora.sources import SourceSpec
from corpora.stages.collect import CollectParams, CollectStage
from pipeline.stage import StageContext
from testkit.kill import kill_group_when
from testkit.toy import leftovers, stage_digests, subprocess_env

SPLIT = 64 * 1024
MAX_DOC = 6000  # max_doc_bytes: over-long records stay cheap to generate
SHARD_DOCS = 1700
PAUSING_COLLECT = Path(__file__).parent / "testkit" / "pausing_collect.py"

Line = Callable[[random.Random], bytes]


def hangul(rng: random.Random, n: int) -> str:
    return " ".join("".join(chr(0xAC00 + rng.randrange(11172)) for _ in range(rng.randint(1, 6)))
                    for _ in range(n))


def write_lines(path: Path, rng: random.Random, good: Line, bads: list[Line], size: int, head: bytes = b"",
                every: int = 12) -> None:
    """Lines up to `size` bytes: one in `every` a bad one, and bad ones on both sides of every cut a line-mode
    plan makes (the first line start at or after the last cut + SPLIT), so pieces start and end on them."""
    out = bytearray(head)
    pos = SPLIT
    force = 0
    k = 0
    while len(out) < size:
        near = pos - 400 <= len(out) < pos
        bad = force > 0 or near or rng.randrange(every) == 0
        line = bads[k % len(bads)](rng) if bad else good(rng)
        k += bad
        force = max(0, force - 1)
        out += line
        if len(out) >= pos:  # this line ends the piece; the next two start the next one
            pos, force = len(out) + SPLIT, 2
    path.write_bytes(bytes(out))


def text_good(rng: random.Random) -> bytes:
    return (hangul(rng, rng.randint(3, 40)) + ("\r\n" if rng.randrange(9) == 0 else "\n")).encode()


TEXT_BAD: list[Line] = [
    lambda r: b"\xff\xfe " + hangul(r, 5).encode() + b"\n",  # invalid_utf8
    lambda r: hangul(r, 4).encode("cp949") + b"\n",  # legacy_encoding
    lambda r: hangul(r, MAX_DOC // 8).encode() + b"\n",  # too_long
    lambda r: b"\x01\x02\x03\x04\x05\x06 ab\n",  # binary
    lambda r: b"   \t \r\n",  # empty
    lambda r: b"\n",
]


def json_good(rng: random.Random) -> bytes:
    rec = {"text": hangul(rng, rng.randint(3, 30)), "cat": rng.randrange(5)}
    return (json.dumps(rec, ensure_ascii=rng.randrange(2) == 0) + "\n").encode()


JSON_BAD: list[Line] = [
    lambda r: b'{"text": "' + hangul(r, 3).encode() + b'\n',  # bad_json
    lambda r: b"[1, 2]\n",  # not_object
    lambda r: b'{"body": "x"}\n',  # missing_text
    lambda r: b'{"text": null}\n',  # null_text
    lambda r: b'{"text": 5}\n',  # non_string_text
    lambda r: b'{"text": "a \\ud800 b"}\n',  # invalid_unicode
    lambda r: b'{"text": "\xff\xfe"}\n',  # invalid_utf8
    lambda r: json.dumps({"text": hangul(r, MAX_DOC // 8)}, ensure_ascii=False).encode() + b"\n",  # too_long
    lambda r: b"\n",
]


def cp949_good(rng: random.Random) -> bytes:
    return (hangul(rng, rng.randint(3, 30)) + "\n").encode("cp949")


CP949_BAD: list[Line] = [
    lambda r: hangul(r, 3).encode("cp949") + b"\x80\xff\n",  # decode_error
    lambda r: hangul(r, MAX_DOC // 6).encode("cp949") + b"\n",  # too_long
    lambda r: b" \n",
]


def write_blocks(path: Path, rng: random.Random, size: int) -> None:
    """Blank-line separated blocks, a bad one in five: a line that does not decode, an over-long block, a
    whitespace-only line longer than max_doc_bytes (not blank for the reader, so never a cut)."""
    out = bytearray("\ufeff".encode())
    while len(out) < size:
        kind = rng.randrange(10)
        lines = [hangul(rng, rng.randint(2, 20)).encode() for _ in range(rng.randint(1, 4))]
        if kind == 0:
            lines[-1] = b"\xc3\x28 broken"
        elif kind == 1:
            lines = [hangul(rng, 200).encode() for _ in range(6)]
        elif kind == 2:
            lines.insert(1, b" " * (MAX_DOC + 10))
        out += b"\n".join(lines) + rng.choice([b"\n\n", b"\n  \n", b"\r\n\r\n", b"\n\n\n\t\n"])
    path.write_bytes(bytes(out))


def write_parquet(path: Path, rng: random.Random, rows: int) -> None:
    texts = [None if i % 97 == 5 else "" if i % 89 == 3 else hangul(rng, rng.randint(3, 60)) for i in range(rows)]
    table = pa.table({"text": texts, "cat": [i % 7 for i in range(rows)]})
    pq.write_table(table, path, row_group_size=150)


@pytest.fixture(scope="module")
def raw(tmp_path_factory) -> Path:
    """The generated sources (about 14 MB in all)."""
    rng = random.Random(49)
    root = tmp_path_factory.mktemp("raw")
    (root / "lines").mkdir()
    # a BOM, then lines; a stretch of blank lines longer than a piece (a piece with no documents)
    write_lines(root / "lines" / "a.txt", rng, text_good, TEXT_BAD, 2_000_000, head="\ufeff".encode())
    with open(root / "lines" / "a.txt", "ab") as f:
        f.write(b"\n" * (3 * SPLIT))
    write_lines(root / "lines" / "b-short.txt", rng, lambda r: f"짧은 {r.randrange(10**4)}\n".encode(),
                TEXT_BAD, 600_000, every=400)  # > 4096 documents a piece: parts of two row groups
    (root / "lines" / "c-small.txt").write_text("작은 파일\n둘째 줄\n", encoding="utf-8")
    write_blocks(root / "blocks.txt", rng, 1_500_000)
    write_lines(root / "docs.jsonl", rng, json_good, JSON_BAD, 2_000_000)
    (root / "more.jsonl.gz").write_bytes(gzip.compress(b"".join(json_good(rng) for _ in range(3000)), mtime=0))
    write_lines(root / "legacy.txt", rng, cp949_good, CP949_BAD, 1_000_000)
    write_parquet(root / "table.parquet", rng, 9000)
    return root


def sources(raw: Path) -> list[dict]:
    return [
        {"name": "lines", "path": str(raw / "lines"), "format": "text"},
        {"name": "blocks", "path": str(raw / "blocks.txt"), "format": "text", "unit": "block"},
        {"name": "json", "path": str(raw / "*.jsonl*"), "format": "jsonl", "meta_fields": ["cat"]},
        {"name": "legacy", "path": str(raw / "legacy.txt"), "format": "text", "encoding": "cp949"},
        {"name": "table", "path": str(raw / "table.parquet"), "format": "parquet", "meta_fields": ["cat"]},
    ]


def collect(out: Path, srcs: list[dict], workers: int = 1, split_bytes: int | None = SPLIT,
            shard_docs: int = SHARD_DOCS):
    out.mkdir(parents=True)
    ctx = StageContext(out_dir=out, params=CollectParams(shard_docs=shard_docs, max_doc_bytes=MAX_DOC,
                                                         split_bytes=split_bytes),
                       inputs={}, recipe=SimpleNamespace(seed=1, sources=[SourceSpec(**s) for s in srcs]),
                       workers=workers)
    return CollectStage().run(ctx)


def tree_digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def spans_of(spec: SourceSpec, src: SourceFile, opts: ReadOptions) -> list[Span] | None:
    kind = split_kind(spec, src, SPLIT, opts)
    if kind == "row_groups":
        return row_group_spans(spec, src.path, SPLIT)
    if kind is None:
        return None
    cuts = byte_cuts(src.path, SPLIT, kind == "blocks", opts.max_doc_bytes)
    lines = [count_newlines((str(src.path), a, b)) for a, b in zip(cuts, cuts[1:], strict=False)]
    return line_spans(cuts, src.path.stat().st_size, lines)


@pytest.fixture(scope="module")
def unsplit(raw, tmp_path_factory) -> tuple[dict[str, str], dict, dict]:
    out = tmp_path_factory.mktemp("unsplit") / "out"
    res = collect(out, sources(raw), split_bytes=None)
    return tree_digest(out), res.funnel.to_json(), res.meta


SPLIT_FILES = [("lines", "lines/a.txt", 25), ("lines", "lines/b-short.txt", 8), ("blocks", "blocks.txt", 18),
               ("json", "docs.jsonl", 25), ("legacy", "legacy.txt", 12), ("table", "table.parquet", 10)]


@pytest.mark.parametrize(("source", "rel", "at_least"), SPLIT_FILES)
def test_pieces_read_exactly_the_whole_files_records(raw, source, rel, at_least):
    """Records, indices (ids), line/row numbers and quarantine entries of the pieces, in order, are those of
    the whole-file read."""
    spec = SourceSpec(**next(s for s in sources(raw) if s["name"] == source))
    src = SourceFile(raw / rel, rel.split("/")[-1])
    opts = ReadOptions(max_doc_bytes=MAX_DOC)
    spans = spans_of(spec, src, opts)
    assert spans is not None and len(spans) >= at_least
    whole = list(read_file(spec, src, opts))
    pieces = [rec for s in spans for rec in read_file(spec, src, opts, s)]
    assert pieces == whole
    assert sum(1 for r in whole if type(r).__name__ == "Bad") > 20


def test_files_that_are_read_whole(raw, tmp_path):
    opts = ReadOptions(max_doc_bytes=MAX_DOC)
    big = raw / "lines" / "a.txt"
    csv = tmp_path / "t.csv"
    csv.write_bytes(b"text\n" + b"a,b\n" * 40_000)
    gz = tmp_path / "t.txt.gz"
    gz.write_bytes(gzip.compress(big.read_bytes(), mtime=0))
    whole = [
        ({"format": "text", "unit": "file"}, big), ({"format": "csv"}, csv), ({"format": "text"}, gz),
        ({"format": "text", "max_docs": 5}, big),
    ]
    for extra, path in whole:
        spec = SourceSpec(name="s", path=str(path), **extra)
        assert split_kind(spec, SourceFile(path, path.name), 1024, opts) is None, extra
    spec = SourceSpec(name="s", path=str(big), format="text")
    assert split_kind(spec, SourceFile(big, big.name), None, opts) is None
    assert split_kind(spec, SourceFile(big, big.name), big.stat().st_size, opts) is None


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_split_output_is_byte_identical_to_unsplit(raw, unsplit, tmp_path, workers):
    """Every shard, the quarantine files, the funnel and the meta are the unsplit run's, for 1 and 2 workers."""
    res = collect(tmp_path / "out", sources(raw), workers=workers)
    digest, funnel, meta = unsplit
    assert tree_digest(tmp_path / "out") == digest
    assert res.funnel.to_json() == funnel and res.meta == meta
    assert len([k for k in digest if k.startswith("shard-")]) > 20
    reasons = {json.loads(x)["reason"] for q in (tmp_path / "out" / "quarantine").iterdir()
               for x in q.read_text(encoding="utf-8").split("\n") if x}
    assert reasons >= {"invalid_utf8", "legacy_encoding", "too_long", "binary", "bad_json", "not_object",
                       "missing_text", "null_text", "non_string_text", "invalid_unicode", "decode_error"}
    assert not (tmp_path / "out" / "_work").exists()


def test_shards_of_several_row_groups_and_pieces_of_several_parts_rows(raw, tmp_path):
    """Shards of 10,000 documents (three row groups of `write_docs`), re-cut from pieces of about 6,000 short
    lines (parts of two row groups): the same bytes as unsplit."""
    srcs = [s for s in sources(raw) if s["name"] == "lines"]
    a = collect(tmp_path / "a", srcs, split_bytes=None, shard_docs=10_000)
    b = collect(tmp_path / "b", srcs, workers=2, shard_docs=10_000)
    assert tree_digest(tmp_path / "a") == tree_digest(tmp_path / "b") and a.meta == b.meta
    groups = [pq.ParquetFile(p).metadata.num_row_groups for p in sorted((tmp_path / "b").glob("shard-*"))]
    assert max(groups) == 3 and len(groups) >= 5


def test_a_damaged_split_parquet_file_is_read_whole(raw, tmp_path):
    """Damage in row group 12: the whole-file read stops at a batch boundary before it and quarantines the
    rest; a piece cannot know that row, so the file is read again whole and the output is the unsplit one."""
    bad = tmp_path / "raw" / "bad.parquet"
    bad.parent.mkdir()
    data = bytearray((raw / "table.parquet").read_bytes())
    off = pq.ParquetFile(raw / "table.parquet").metadata.row_group(12).column(0).data_page_offset
    data[off:off + 8] = b"\xff" * 8
    bad.write_bytes(bytes(data))
    srcs = [{"name": "t", "path": str(bad), "format": "parquet", "meta_fields": ["cat"]}]
    a = collect(tmp_path / "a", srcs, split_bytes=None)
    b = collect(tmp_path / "b", srcs, workers=2)
    assert tree_digest(tmp_path / "a") == tree_digest(tmp_path / "b") and a.meta == b.meta
    assert a.funnel.to_json() == b.funnel.to_json()
    assert "corrupt_file" in (tmp_path / "a" / "quarantine" / "t.jsonl").read_text(encoding="utf-8")


# ----------------------------------------------------------------------------------------------------------
# kill -9 mid-collect, then a rerun that reads only the unfinished pieces


def recipe(raw: Path, folder: Path) -> Path:
    import yaml

    path = folder / "recipe.yaml"
    path.write_text(yaml.safe_dump({
        "name": "ranges", "seed": 1, "sources": sources(raw),
        "stages": {"collect": {"shard_docs": SHARD_DOCS, "max_doc_bytes": MAX_DOC, "split_bytes": SPLIT}},
    }), encoding="utf-8")
    return path


def klue(rec: Path, workdir: Path, env: dict[str, str]) -> subprocess.Popen:
    cmd = [sys.executable, str(PAUSING_COLLECT), "run", str(rec), "--workdir", str(workdir), "--until", "collect",
           "--workers", "2"]
    return subprocess.Popen(cmd, env=subprocess_env(**env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)


def reads(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


@pytest.mark.slow
def test_kill9_mid_collect_then_rerun_reads_only_unfinished_pieces(raw, tmp_path):
    rec = recipe(raw, tmp_path)
    ref, ref_log = tmp_path / "ref", tmp_path / "ref-reads.log"
    p = klue(rec, ref, {"KLUE_COLLECT_READ_LOG": str(ref_log)})
    assert p.wait(timeout=300) == 0, p.communicate()[0].decode()
    every = reads(ref_log)  # one line per read task: "<file> <start>-<end>" or "<file> whole"
    assert len(every) == len(set(every)) > 100

    wd, log, flag = tmp_path / "w", tmp_path / "reads.log", tmp_path / "paused"
    p = klue(rec, wd, {"KLUE_COLLECT_READ_LOG": str(log), "KLUE_COLLECT_PAUSE_AT": "40",
                       "KLUE_COLLECT_PAUSE_FILE": str(flag)})
    kill_group_when(p, flag.exists, 240, "the pause in collect")  # the runner and its pool workers, mid-collect
    partial = next(x for x in (wd / "collect").iterdir() if x.name.endswith(".partial"))
    n_done = len(list((partial / "_work" / "done").glob("*.json")))
    before = reads(log)
    assert 30 <= n_done < len(before) < len(every)  # some tasks finished, one was cut off, most never began

    log.write_text("", encoding="utf-8")
    p = klue(rec, wd, {"KLUE_COLLECT_READ_LOG": str(log)})
    out = p.communicate(timeout=300)[0].decode()
    assert p.returncode == 0, out
    again = reads(log)
    skipped = set(every) - set(again)
    assert len(again) == len(set(again)) == len(every) - n_done  # each unfinished task read once, no more
    assert len(skipped) == n_done and skipped <= set(before)  # the skipped ones are those finished before
    assert stage_digests(wd) == stage_digests(ref)
    assert leftovers(wd) == []


def test_split_bytes_is_left_out_of_the_key_so_tuning_it_reuses_the_folder(tmp_path):
    """`split_bytes` is a layout param (Stage.layout_params): the plan's collect key is the same for any value,
    and the same as a recipe that does not name it."""
    from pipeline.recipe import load_recipe
    from pipeline.runner import Runner
    from pipeline.sample import SAMPLE_DIR

    def key(*overrides: str) -> str:
        recipe = load_recipe(SAMPLE_DIR / "recipe.yaml", overrides, until="collect")
        return next(p.key for p in Runner(recipe, tmp_path / "wd", until="collect").plan() if p.stage == "collect")

    base = key()
    assert key("stages.collect.split_bytes=65536") == key("stages.collect.split_bytes=null") == base
    assert key("stages.collect.shard_docs=7") != base  # a param that changes the bytes still changes the key
