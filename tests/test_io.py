"""pipeline.io: every writer renames a complete file into place, leaves nothing on an error, and names its temp
files one way, which `is_temp` / `remove_temps` recognise."""

from __future__ import annotations

import json

import pytest

from pipeline import io


def test_writers_write_exact_bytes(tmp_path):
    io.write_text(tmp_path / "a" / "t.txt", "가나\n")  # parent created
    io.write_bytes(tmp_path / "b.bin", b"\x00\xff")
    io.write_json(tmp_path / "c.json", {"b": 1, "a": "한"})
    io.write_json(tmp_path / "d.json", {"b": 1, "a": "한"}, indent=None, sort_keys=False, ensure_ascii=True)
    n = io.write_jsonl(tmp_path / "e.jsonl", [{"z": 1, "a": [1, 2]}, {"k": "값"}])
    assert (tmp_path / "a" / "t.txt").read_bytes() == "가나\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\xff"
    assert (tmp_path / "c.json").read_text(encoding="utf-8") == '{\n "a": "한",\n "b": 1\n}\n'
    assert (tmp_path / "d.json").read_text() == '{"b": 1, "a": "\\ud55c"}\n'
    assert n == 2 and (tmp_path / "e.jsonl").read_text(encoding="utf-8") == '{"a":[1,2],"z":1}\n{"k":"값"}\n'
    assert [p.name for p in tmp_path.rglob(".*")] == []


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path):
    dest = tmp_path / "x.txt"
    dest.write_text("old")
    with pytest.raises(RuntimeError), io.atomic_file(dest) as f:
        f.write("new, half")
        f.flush()
        assert [p for p in tmp_path.iterdir() if io.is_temp(p)], "the write goes to a temp name"
        raise RuntimeError("boom")
    assert dest.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.txt"]
    with pytest.raises(ValueError), io.JsonlWriter(tmp_path / "y.jsonl") as w:
        w.write({"a": 1})
        raise ValueError("boom")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.txt"]


def test_atomic_path_publishes_folders_and_replaces_only_when_asked(tmp_path):
    dest = tmp_path / "model"
    with io.atomic_path(dest) as tmp:
        tmp.mkdir()
        (tmp / "w.bin").write_bytes(b"1")
    assert (dest / "w.bin").read_bytes() == b"1"
    with pytest.raises(IsADirectoryError, match="replace_dir"), io.atomic_path(dest) as tmp:
        tmp.mkdir()
    with io.atomic_path(dest, replace_dir=True) as tmp:
        tmp.mkdir()
        (tmp / "w.bin").write_bytes(b"2")
    assert (dest / "w.bin").read_bytes() == b"2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_temp_names_are_unique_recognised_and_removed(tmp_path):
    a, b = io.temp_name(tmp_path / "s.parquet"), io.temp_name(tmp_path / "s.parquet")
    assert a != b and a.name.startswith(".s.parquet.tmp-") and io.is_temp(a) and io.is_temp(b)
    assert not io.is_temp(tmp_path / "s.parquet") and not io.is_temp(tmp_path / ".hidden")
    a.write_text("half")
    (tmp_path / "sub").mkdir()
    d = io.temp_name(tmp_path / "sub" / "final")
    d.mkdir()
    (d / "inner.bin").write_bytes(b"x")
    (tmp_path / "keep.json").write_text(json.dumps({}))
    removed = io.remove_temps(tmp_path)
    assert sorted(p.name for p in removed) == sorted([a.name, d.name])
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["keep.json", "sub"]
    c = io.temp_name(tmp_path / "run.json")
    c.write_text("{")
    io.remove_stale(tmp_path / "run.json")
    assert not c.exists() and (tmp_path / "keep.json").exists()
