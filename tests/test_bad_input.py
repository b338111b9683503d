"""Bad input: every kind of damage is quarantined with its place and reason, the records around it survive,
and the counts reconcile. Damaged files are written per test (binary junk does not belong in the repo)."""

from __future__ import annotations

import gzip
import json
import random
import tracemalloc
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

from corpora.shards import iter_docs, list_shards
from testkit.collect import quarantine, run_collect

GOOD = ["첫 번째 문서입니다.", "두 번째 문서입니다.", "세 번째 문서입니다."]




def texts(out: Path) -> list[str]:
    return [d.text for s in list_shards(out) for d in iter_docs(s)]




def one_source(tmp_path: Path, name: str, data: bytes, **spec):
    f = tmp_path / name
    f.write_bytes(data)
    return run_collect(tmp_path / "out", [{"name": "s", "path": str(f), "format": "text", **spec}])


def lines(*parts: bytes) -> bytes:
    return b"".join(p + b"\n" for p in parts)


def test_invalid_utf8_line_is_quarantined_and_neighbours_kept(tmp_path):
    data = lines(GOOD[0].encode(), b"broken \xff\xfe bytes", GOOD[1].encode())
    res, out = one_source(tmp_path, "a.txt", data)
    assert texts(out) == GOOD[:2]
    [q] = quarantine(out, "s")
    assert (q["reason"], q["location"], q["file"], q["source"]) == ("invalid_utf8", "line 2", "a.txt", "s")
    assert "byte 7" in q["detail"] and "\\xff" in q["excerpt"]
    assert (res.funnel.docs_in, res.funnel.docs_kept, res.funnel.quarantined) == (3, 2, 1)


def test_cp949_line_in_utf8_source_suggests_the_encoding(tmp_path):
    data = lines(GOOD[0].encode(), "옛날 인코딩 줄".encode("cp949"), GOOD[1].encode())
    res, out = one_source(tmp_path, "legacy.txt", data)
    assert texts(out) == GOOD[:2]
    [q] = quarantine(out, "s")
    assert q["reason"] == "legacy_encoding" and q["location"] == "line 2"
    assert "encoding: cp949" in q["detail"]


def test_undecodable_line_in_declared_cp949_source(tmp_path):
    data = lines(GOOD[0].encode("cp949"), b"\xb0", GOOD[1].encode("cp949"))  # a lone lead byte
    res, out = one_source(tmp_path, "k.txt", data, encoding="cp949")
    assert texts(out) == GOOD[:2]
    assert [q["reason"] for q in quarantine(out, "s")] == ["decode_error"]


def test_block_with_a_bad_line_is_quarantined_whole(tmp_path):
    data = lines(b"A", b"a1", b"", b"B", b"b1 \xc3", b"b2", b"", b"C")
    res, out = one_source(tmp_path, "w.txt", data, unit="block")
    assert texts(out) == ["A\na1", "C"]
    [q] = quarantine(out, "s")
    assert q["location"] == "line 4" and "line 5" in q["detail"] and q["reason"] == "invalid_utf8"


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def _zst(data: bytes) -> bytes:
    return zstandard.ZstdCompressor().compress(data)


def _big_jsonl(n: int) -> bytes:
    # varied text so the compressed stream is long enough to cut in the middle
    rng = random.Random(n)
    return b"".join(json.dumps({"text": f"문서 {i} {rng.getrandbits(80):x}"}).encode() + b"\n" for i in range(n))


def test_truncated_gzip_and_zstd_keep_what_decoded(tmp_path):
    raw = _big_jsonl(20000)  # several 128 KiB zstd blocks, so a cut leaves whole blocks before it
    for i, (ext, comp) in enumerate([("gz", _gz), ("zst", _zst)]):
        blob = comp(raw)
        d = tmp_path / str(i)
        d.mkdir()
        f = d / f"t.jsonl.{ext}"
        f.write_bytes(blob[: len(blob) * 2 // 3])
        res, out = run_collect(d / "out", [{"name": "s", "path": str(f), "format": "jsonl"}])
        got = texts(out)
        assert 1000 < len(got) < 20000
        assert got == [json.loads(x)["text"] for x in raw.splitlines()[: len(got)]]  # an exact prefix
        [q] = quarantine(out, "s")
        assert q["reason"] == "truncated_stream", ext
        assert q["location"].startswith(f"line {len(got) + 1} ")
        assert res.funnel.quarantined == 1 and res.funnel.docs_kept == len(got)


def test_file_that_is_not_gzip_is_one_corrupt_stream_record(tmp_path):
    res, out = one_source(tmp_path, "fake.txt.gz", "평문입니다\n".encode())
    [q] = quarantine(out, "s")
    assert q["reason"] == "corrupt_stream" and q["location"].startswith("line 1")
    assert res.funnel.docs_in == 1 and res.funnel.docs_kept == 0


def test_jsonl_record_damage_is_quarantined_by_line(tmp_path):
    rows = [
        json.dumps({"text": GOOD[0]}),
        '{"text": "unterminated',
        json.dumps(["a", "list"]),
        json.dumps("just a string"),
        json.dumps({"body": "no text field"}),
        json.dumps({"text": None}),
        json.dumps({"text": 42}),
        '{"text": "lone \\ud800 surrogate"}',
        json.dumps({"text": "\u0000\u0001\u0002\u0003바"}),  # mostly control characters
        json.dumps({"text": "ESC 코드 \u001b[31m빨강\u001b[0m 과 NUL\u0000 하나"}),  # kept: the filter normalizes
        json.dumps({"text": GOOD[1]}),
    ]
    f = tmp_path / "p.jsonl"
    f.write_text("\n".join(rows) + "\n", encoding="utf-8")
    res, out = run_collect(tmp_path / "out", [{"name": "s", "path": str(f), "format": "jsonl"}])
    assert texts(out) == [GOOD[0], "ESC 코드 \x1b[31m빨강\x1b[0m 과 NUL\x00 하나", GOOD[1]]
    got = [(q["location"], q["reason"]) for q in quarantine(out, "s")]
    assert got == [("line 2", "bad_json"), ("line 3", "not_object"), ("line 4", "not_object"),
                   ("line 5", "missing_text"), ("line 6", "null_text"), ("line 7", "non_string_text"),
                   ("line 8", "invalid_unicode"), ("line 9", "binary")]
    assert res.funnel.quarantined == 8 and res.funnel.chars_quarantined == len("lone \ud800 surrogate") + 5


def test_raw_nul_and_escape_bytes_in_a_text_file(tmp_path):
    filler = [f"보통의 문장 {i}번입니다. 충분히 긴 텍스트.".encode() for i in range(60)]  # NULs stay under 1%
    data = lines(*filler[:30], b"\x00" * 20 + "끝".encode(), "색 \x1b[1m굵게\x1b[0m 와 NUL\x00".encode(),
                 *filler[30:])
    res, out = one_source(tmp_path, "mixed.txt", data)
    got = texts(out)
    assert len(got) == 61 and got[30] == "색 \x1b[1m굵게\x1b[0m 와 NUL\x00"  # kept as is: the filter normalizes
    [q] = quarantine(out, "s")
    assert (q["reason"], q["location"]) == ("binary", "line 31") and q["excerpt"].startswith("\x00" * 20)


def test_lone_surrogate_in_a_meta_field_is_quarantined(tmp_path):
    f = tmp_path / "m.jsonl"
    f.write_text('{"text": "본문", "title": "\\udc80"}\n{"text": "본문 2", "title": "제목"}\n', encoding="utf-8")
    res, out = run_collect(tmp_path / "out", [{"name": "s", "path": str(f), "format": "jsonl",
                                               "meta_fields": ["title"]}])
    assert texts(out) == ["본문 2"]
    [q] = quarantine(out, "s")
    assert (q["reason"], q["location"]) == ("invalid_unicode", "line 1") and "\\udc80" in q["excerpt"]


def test_huge_line_is_quarantined_in_bounded_memory(tmp_path):
    big = b"x" * (24 * 2**20)  # 24 MiB on one line
    data = GOOD[0].encode() + b"\n" + big + b"\n" + GOOD[1].encode() + b"\n"
    f = tmp_path / "huge.txt"
    f.write_bytes(data)
    del big, data
    limit = 2 * 2**20
    tracemalloc.start()
    try:
        res, out = run_collect(tmp_path / "out", [{"name": "s", "path": str(f), "format": "text"}],
                               max_doc_bytes=limit)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < limit + 4 * 2**20  # max_doc_bytes plus read buffers (1 MiB each), not the 24 MiB line
    assert texts(out) == GOOD[:2]
    [q] = quarantine(out, "s")
    assert q["reason"] == "too_long" and q["location"] == "line 2" and str(24 * 2**20 + 1) in q["detail"]
    assert q["excerpt"] == "x" * 200


def test_huge_line_under_default_limit_keeps_neighbours(tmp_path):
    big = "가" * (4 * 2**20)  # 12 MiB of UTF-8 on one line: above the 10 MiB default
    res, out = one_source(tmp_path, "h.txt", (GOOD[0] + "\n" + big + "\n" + GOOD[1]).encode())
    del big
    assert texts(out) == GOOD[:2] and quarantine(out, "s")[0]["reason"] == "too_long"


def test_long_line_under_the_limit_is_assembled_from_pieces(tmp_path):
    long = "가" * (900_000)  # 2.7 MB in UTF-8: three 1 MiB reads
    res, out = one_source(tmp_path, "l.txt", (long + "\n짧은 줄\n").encode(), unit="line")
    assert texts(out) == [long, "짧은 줄"]
    spec = {"name": "s", "path": str(tmp_path / "l.txt"), "format": "text"}
    res, out2 = run_collect(tmp_path / "out2", [spec], max_doc_bytes=2_000_000)
    assert texts(out2) == ["짧은 줄"] and quarantine(out2, "s")[0]["reason"] == "too_long"


def test_empty_files_give_no_documents_and_are_noted(tmp_path):
    root = tmp_path / "src"
    root.mkdir()
    (root / "a.txt").write_bytes(b"")
    (root / "b.txt").write_bytes(b"\xef\xbb\xbf")  # only a BOM
    (root / "c.jsonl.gz").write_bytes(_gz(b""))
    (root / "d.txt").write_text(GOOD[0], encoding="utf-8")
    res, out = run_collect(tmp_path / "out", [{"name": "s", "path": str(root), "format": "text"}])
    assert texts(out) == [GOOD[0]]
    assert res.meta["sources"]["s"]["empty_files"] == 3
    assert res.meta["sources"]["s"]["empty_file_names"] == ["a.txt", "b.txt", "c.jsonl.gz"]
    assert res.funnel.docs_in == 1 and quarantine(out, "s") == []


def test_binary_file_with_text_extension_is_one_quarantined_record(tmp_path):
    root = tmp_path / "src"
    root.mkdir()
    (root / "image.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 40)
    junk = bytes((i * 7919 + 13) % 256 for i in range(5000)).replace(b"\x00", b"\x01")  # every byte, no NUL
    (root / "random.txt").write_bytes(junk)
    (root / "ok.txt").write_text("\n".join(GOOD), encoding="utf-8")
    res, out = run_collect(tmp_path / "out", [{"name": "s", "path": str(root), "format": "text"}])
    assert texts(out) == GOOD
    got = [(q["file"], q["reason"], q["location"]) for q in quarantine(out, "s")]
    assert got == [("image.txt", "binary_file", "file"), ("random.txt", "binary_file", "file")]
    assert res.funnel.docs_in == 5 and res.funnel.quarantined == 2


def test_whole_cp949_file_is_not_mistaken_for_binary(tmp_path):
    data = "\n".join(["가나다라마바사 아자차카타파하"] * 200).encode("cp949")
    res, out = one_source(tmp_path, "old.txt", data)
    qs = quarantine(out, "s")
    assert len(qs) == 200 and {q["reason"] for q in qs} == {"legacy_encoding"}


def test_ragged_and_damaged_csv_rows_are_quarantined_by_row(tmp_path):
    f = tmp_path / "qa.csv"
    f.write_bytes(
        "Q,A,label\n"
        "질문1,답1,0\n"
        "너무,많은,필드,입니다\n"
        "모자람\n"
        '"따옴표 안의\n줄바꿈",답4,1\n'.encode()
        + "깨진,".encode() + b"\xff\xfe" + b",0\n"
        + "질문6,답6,0\n".encode()
    )
    res, out = run_collect(tmp_path / "out", [{"name": "s", "path": str(f), "format": "csv",
                                               "text_columns": ["Q", "A"]}])
    assert texts(out) == ["질문1\n답1", "따옴표 안의\n줄바꿈\n답4", "질문6\n답6"]
    got = [(q["reason"], q["location"]) for q in quarantine(out, "s")]
    assert got == [("ragged_row", "row 2 (line 3)"), ("ragged_row", "row 3 (line 4)"),
                   ("invalid_utf8", "row 5 (line 7)")]
    assert res.funnel.docs_in == 6


def test_corrupt_parquet_file_is_quarantined_and_other_files_read(tmp_path):
    root = tmp_path / "pq"
    root.mkdir()
    pq.write_table(pa.table({"text": GOOD}), root / "a.parquet")
    (root / "b.parquet").write_bytes(b"PAR1 this is not really parquet")
    res, out = run_collect(tmp_path / "out", [{"name": "s", "path": str(root), "format": "parquet"}])
    assert texts(out) == GOOD
    [q] = quarantine(out, "s")
    assert (q["file"], q["reason"], q["location"]) == ("b.parquet", "corrupt_file", "file")
