"""Readers for each raw format, on small files written per test: records, provenance, stable ids, paths."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from corpora.readers import ReadOptions, read_file, resolve_source
from corpora.shards import doc_id, iter_docs, list_shards
from corpora.sources import SourceSpec
from corpora.stages.collect import CollectParams, CollectStage
from pipeline.stage import StageContext
from testkit.collect import run_collect


def docs_of(out: Path) -> list:
    return [d for s in list_shards(out) for d in iter_docs(s)]


def texts(spec: dict, path: Path) -> list[str]:
    src = resolve_source(SourceSpec(**spec))
    return [r.text for f in src for r in read_file(SourceSpec(**spec), f, ReadOptions())]


# --- plain text -------------------------------------------------------------------------------------------


def test_text_lines_keep_provenance_and_drop_blank_lines(tmp_path):
    f = tmp_path / "raw" / "a.txt"
    f.parent.mkdir()
    f.write_bytes("\ufeff첫 줄\r\n둘째 줄\r\n\r\n   \n넷째\t줄".encode())  # BOM, CRLF, blank, no final newline
    spec = {"name": "s", "path": str(f), "format": "text", "license": "L"}
    res, out = run_collect(tmp_path / "out", [spec])
    docs = docs_of(out)
    assert [d.text for d in docs] == ["첫 줄", "둘째 줄", "넷째\t줄"]
    assert [d.meta_dict()["line"] for d in docs] == [1, 2, 5]
    assert docs[0].meta_dict() == {"source": "s", "license": "L", "file": "a.txt", "line": 1}
    assert [d.id for d in docs] == [doc_id("s", "a.txt", n) for n in (1, 2, 5)]
    assert res.funnel.docs_in == 5 and res.funnel.dropped["empty"] == 2
    assert res.funnel.chars_kept == sum(len(d.text) for d in docs)


def test_text_blocks_split_on_blank_lines(tmp_path):
    f = tmp_path / "wiki.txt"
    f.write_text("제목1\n본문 1-1\n본문 1-2\n\n\n \n제목2\n본문 2\n\n제목3\n", encoding="utf-8")
    spec = {"name": "w", "path": str(f), "format": "text", "unit": "block"}
    _, out = run_collect(tmp_path / "out", [spec])
    docs = docs_of(out)
    assert [d.text for d in docs] == ["제목1\n본문 1-1\n본문 1-2", "제목2\n본문 2", "제목3"]
    assert [d.meta_dict()["line"] for d in docs] == [1, 7, 10]


def test_text_file_unit_reads_folder_sorted_with_relative_paths(tmp_path):
    root = tmp_path / "law"
    (root / "sub").mkdir(parents=True)
    (root / "b.txt").write_bytes("둘\r\n\r\n셋".encode())
    (root / "a.txt").write_text("하나", encoding="utf-8")
    (root / "sub" / "c.txt").write_text("넷\n", encoding="utf-8")
    (root / ".hidden.txt").write_text("숨김", encoding="utf-8")
    spec = {"name": "law", "path": str(root), "format": "text", "unit": "file"}
    _, out = run_collect(tmp_path / "out", [spec])
    docs = docs_of(out)
    assert [d.meta_dict()["file"] for d in docs] == ["a.txt", "b.txt", "sub/c.txt"]
    assert [d.text for d in docs] == ["하나", "둘\n\n셋", "넷\n"]  # CRLF -> LF, text otherwise as in the file
    assert docs[2].id == doc_id("law", "sub/c.txt", 0)


def test_declared_cp949_and_euc_kr_files_decode(tmp_path):
    text = "한국어 문장입니다.\n두 번째 줄\n"
    for enc in ("cp949", "euc-kr"):
        f = tmp_path / f"{enc}.txt"
        f.write_bytes(text.encode(enc))
        assert texts({"name": "k", "path": str(f), "format": "text", "encoding": enc}, f) == text.splitlines()


# --- JSON lines -------------------------------------------------------------------------------------------


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


@pytest.mark.parametrize("ext", ["jsonl", "jsonl.gz", "jsonl.zst"])
def test_jsonl_plain_and_compressed_with_meta_fields(tmp_path, ext):
    rows = [{"content": f"청원 {i}", "title": f"제목 {i}", "num": i} for i in range(5)]
    data = _jsonl(rows)
    if ext.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    elif ext.endswith(".zst"):
        data = zstandard.ZstdCompressor().compress(data)
    f = tmp_path / f"p.{ext}"
    f.write_bytes(data)
    spec = {"name": "pet", "path": str(f), "format": "jsonl", "text_field": "content",
            "meta_fields": ["title", "num", "absent"]}
    _, out = run_collect(tmp_path / "out", [spec])
    docs = docs_of(out)
    assert [d.text for d in docs] == [r["content"] for r in rows]
    assert docs[3].meta_dict() == {"source": "pet", "license": "unknown", "file": f.name, "line": 4,
                                   "fields": {"title": "제목 3", "num": 3}}


def test_concatenated_zstd_frames_are_one_stream(tmp_path):
    c = zstandard.ZstdCompressor()
    f = tmp_path / "two.jsonl.zst"
    f.write_bytes(c.compress(_jsonl([{"text": "가"}])) + c.compress(_jsonl([{"text": "나"}])))
    assert texts({"name": "z", "path": str(f), "format": "jsonl"}, f) == ["가", "나"]


# --- CSV / TSV --------------------------------------------------------------------------------------------


def test_csv_joins_text_columns_and_keeps_quoted_newlines_in_one_record(tmp_path):
    f = tmp_path / "qa.csv"
    with open(f, "w", encoding="utf-8-sig", newline="") as fh:  # BOM, and csv's default CRLF line ends
        w = csv.writer(fh)
        w.writerow(["Q", "A", "label"])
        w.writerow(["안녕?", "반가워요.", "0"])
        w.writerow(["여러 줄\n질문", "답, 쉼표 포함", "1"])
        w.writerow(["마지막", "답", "2"])
    spec = {"name": "qa", "path": str(f), "format": "csv", "text_columns": ["Q", "A"],
            "meta_fields": ["label"]}
    res, out = run_collect(tmp_path / "out", [spec])
    docs = docs_of(out)
    assert [d.text for d in docs] == ["안녕?\n반가워요.", "여러 줄\n질문\n답, 쉼표 포함", "마지막\n답"]
    assert [(d.meta_dict()["row"], d.meta_dict()["line"]) for d in docs] == [(1, 2), (2, 3), (3, 5)]
    assert docs[1].meta_dict()["fields"] == {"label": "1"}
    assert res.funnel.docs_in == 3


def test_tsv_keeps_bare_quotes_by_default(tmp_path):
    f = tmp_path / "r.tsv"
    f.write_text('id\tdocument\n1\t"최고" 라는 말밖에\n2\t그냥 "그래\n', encoding="utf-8")
    spec = {"name": "r", "path": str(f), "format": "tsv", "text_columns": ["document"]}
    assert texts(spec, f) == ['"최고" 라는 말밖에', '그냥 "그래']


def test_csv_missing_text_column_is_a_clear_error(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"source 'x'.*x\.csv.*lacks column\(s\) \['text'\]"):
        run_collect(tmp_path / "out", [{"name": "x", "path": str(f), "format": "csv"}])


# --- Parquet / Arrow / saved datasets ---------------------------------------------------------------------


def test_parquet_rows_in_batches_with_row_index(tmp_path):
    n = 2500  # more than one read batch
    table = pa.table({"text": [f"문서 {i}" if i != 7 else None for i in range(n)], "lang": ["ko"] * n})
    f = tmp_path / "d.parquet"
    pq.write_table(table, f, row_group_size=1000)
    spec = {"name": "pq", "path": str(f), "format": "parquet", "meta_fields": ["lang"]}
    res, out = run_collect(tmp_path / "out", [spec])
    docs = docs_of(out)
    assert len(docs) == n - 1 and res.funnel.quarantined == 1  # row 7: null text
    assert docs[2000].text == "문서 2001" and docs[2000].meta_dict()["row"] == 2001
    assert docs[0].meta_dict()["fields"] == {"lang": "ko"}
    q = [json.loads(x) for x in (out / "quarantine" / "pq.jsonl").read_text().splitlines()]
    assert [(r["reason"], r["location"]) for r in q] == [("null_text", "row 7")]


def test_hf_dataset_saved_to_disk_and_dataset_dict(tmp_path):
    import datasets

    ds = datasets.Dataset.from_dict({"sentence": ["가", "나", "다"], "label": [0, 1, 0]})
    ds.save_to_disk(str(tmp_path / "one"))
    datasets.DatasetDict({"train": ds, "test": ds.select([2])}).save_to_disk(str(tmp_path / "dict"))
    spec = {"name": "hf", "path": str(tmp_path / "one"), "format": "hf_dataset", "text_field": "sentence",
            "meta_fields": ["label"]}
    _, out = run_collect(tmp_path / "out1", [spec])
    docs = docs_of(out)
    assert [d.text for d in docs] == ["가", "나", "다"]
    assert docs[1].meta_dict() == {"source": "hf", "license": "unknown", "file": "one", "row": 1,
                                   "fields": {"label": 1}}
    _, out = run_collect(tmp_path / "out2", [{**spec, "path": str(tmp_path / "dict")}])
    docs = docs_of(out)
    assert [(d.meta_dict()["file"], d.text) for d in docs] == [("test", "다"), ("train", "가"), ("train", "나"),
                                                             ("train", "다")]


def test_hf_folder_of_arrow_and_parquet_files(tmp_path):
    root = tmp_path / "ds"
    root.mkdir()
    pq.write_table(pa.table({"text": ["파케이"]}), root / "b.parquet")
    schema = pa.schema([("text", pa.string())])
    with pa.OSFile(str(root / "a.arrow"), "wb") as sink, pa.ipc.new_stream(sink, schema) as w:  # as datasets
        w.write_table(pa.table({"text": ["애로우 1", "애로우 2"]}))
    with pa.OSFile(str(root / "c.arrow"), "wb") as sink, pa.ipc.new_file(sink, schema) as w:  # Feather v2
        w.write_table(pa.table({"text": ["파일 형식"]}))
    _, out = run_collect(tmp_path / "out", [{"name": "hf", "path": str(root), "format": "hf_dataset"}])
    assert [(d.meta_dict()["file"], d.text) for d in docs_of(out)] == [
        ("a.arrow", "애로우 1"), ("a.arrow", "애로우 2"), ("b.parquet", "파케이"), ("c.arrow", "파일 형식")]


# --- paths ------------------------------------------------------------------------------------------------


def test_glob_is_sorted_and_relative_to_its_fixed_prefix(tmp_path):
    for name in ["b/2.txt", "a/1.txt", "a/3.log"]:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(name, encoding="utf-8")
    files = resolve_source(SourceSpec(name="g", path=str(tmp_path / "*" / "*.txt"), format="text"))
    assert [f.rel for f in files] == ["a/1.txt", "b/2.txt"]


def test_relative_path_and_env_var_are_resolved(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.txt").write_text("x", encoding="utf-8")
    monkeypatch.setenv("KLUE_TEST_ROOT", str(tmp_path))
    [f] = resolve_source(SourceSpec(name="e", path="${KLUE_TEST_ROOT}/data/x.txt", format="text"))
    assert f.rel == "x.txt" and f.path == tmp_path / "data" / "x.txt"
    [f] = resolve_source(SourceSpec(name="r", path="data/x.txt", format="text"), base_dir=tmp_path)
    assert f.path == tmp_path / "data" / "x.txt"


@pytest.mark.parametrize("path, message", [
    ("missing.txt", r"source 'm': path '.*missing\.txt' does not exist"),
    ("nothing/*.txt", r"source 'm': pattern '.*nothing/\*\.txt' matches no files"),
    ("${KLUE_SURELY_UNSET_VAR}/a.txt", r"source 'm'.*unset environment variable.*KLUE_SURELY_UNSET_VAR"),
])
def test_bad_paths_are_recipe_errors_naming_the_source(tmp_path, path, message):
    spec = SourceSpec(name="m", path=path, format="text")
    recipe = SimpleNamespace(seed=1, sources=[spec], base_dir=tmp_path)
    ctx = StageContext(out_dir=tmp_path, params=CollectParams(), inputs={}, recipe=recipe)
    with pytest.raises(ValueError, match=message):
        CollectStage().fingerprint(ctx)
    with pytest.raises(ValueError, match=message):
        CollectStage().run(ctx)


def test_unknown_format_is_a_recipe_error_naming_the_source(tmp_path):
    recipe = SimpleNamespace(seed=1, sources=[{"name": "odd", "path": "x.doc", "format": "docx"}])
    ctx = StageContext(out_dir=tmp_path, params=CollectParams(), inputs={}, recipe=recipe)
    with pytest.raises(ValueError, match=r"source 'odd' \(path x\.doc\).*format"):
        CollectStage().run(ctx)


@pytest.mark.parametrize("encoding, message", [("utf-16", "convert the file to UTF-8"),
                                               ("klingon-8", "unknown encoding")])
def test_unusable_encodings_are_rejected_in_the_recipe(encoding, message):
    with pytest.raises(ValueError, match=message):
        SourceSpec(name="e", path="x.txt", format="text", encoding=encoding)


# --- nested JSON and headerless TSV (the Japanese dialogue corpora's layouts) ---------------------------------


def test_jsonl_dotted_text_field_joins_a_dialogues_turns_and_names_what_is_missing(tmp_path):
    rows = [{"docid": {"id": 1}, "utterances": [{"name": "user", "text": "駐車場はありますか"},
                                                {"name": "agent", "text": "はい、二十台分ございます"}]},
            {"docid": {"id": 2}, "utterances": [{"name": "user", "txt": "x"}]},
            {"docid": {"id": 3}, "utterances": "not a list"},
            {"docid": {"id": 4}, "utterances": [{"text": 7}]}]
    f = tmp_path / "d.jsonl"
    f.write_bytes(_jsonl(rows))
    spec = SourceSpec(name="d", path=str(f), format="jsonl", text_field="utterances.*.text")
    got = [r for src in resolve_source(spec) for r in read_file(spec, src, ReadOptions())]
    assert got[0].text == "駐車場はありますか\nはい、二十台分ございます"
    assert [(b.reason, b.location, b.detail) for b in got[1:]] == [
        ("missing_text", "line 2", "no field 'utterances[0].text'"),
        ("missing_text", "line 3", "utterances is a JSON str, not a list"),
        ("non_string_text", "line 4", "field 'utterances.*.text' is a JSON int, not a string")]
    with pytest.raises(ValueError, match="a dotted path is for jsonl sources only"):
        SourceSpec(name="p", path=str(f), format="parquet", text_field="a.b")


def test_tsv_without_a_header_row_takes_named_columns(tmp_path):
    f = tmp_path / "001.tsv"
    f.write_text("customer\t宿を探しています\noperator\tどの地域をご希望ですか\n", encoding="utf-8")
    spec = {"name": "asdc", "path": str(f), "format": "tsv", "columns": ["speaker", "utterance"],
            "text_columns": ["utterance"], "meta_fields": ["speaker"]}
    _, out = run_collect(tmp_path / "out", [spec])
    docs = docs_of(out)
    assert [d.text for d in docs] == ["宿を探しています", "どの地域をご希望ですか"]  # the first row is data
    assert [d.meta_dict()["fields"] for d in docs] == [{"speaker": "customer"}, {"speaker": "operator"}]
    with pytest.raises(ValueError, match="columns: only csv and tsv sources"):
        SourceSpec(name="x", path=str(f), format="jsonl", columns=["a"])


def test_a_shift_jis_file_with_crlf_line_ends_is_one_document(tmp_path):
    text = "坊っちゃん\r\n\r\n親譲りの無鉄砲で小供の時から損ばかりしている。\r\n"
    f = tmp_path / "752.txt"
    f.write_bytes(text.encode("cp932"))
    spec = {"name": "aozora", "path": str(f), "format": "text", "unit": "file", "encoding": "cp932"}
    assert texts(spec, f) == ["坊っちゃん\n\n親譲りの無鉄砲で小供の時から損ばかりしている。\n"]  # CRLF -> LF, as a file
