"""Content digests for cache keys: right bytes, memo reuse, memo invalidation, and no hard dependency on it."""

from __future__ import annotations

import hashlib
import os

import pytest

from pipeline import filehash


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KLUE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "file-digests.sqlite"


def test_digest_is_the_sha256_of_the_bytes_and_is_memoised(tmp_path, cache, monkeypatch):
    f = tmp_path / "a.txt"
    f.write_bytes("한국어 말뭉치\n".encode() * 1000)
    assert filehash.file_digests([f])[f] == hashlib.sha256(f.read_bytes()).hexdigest()
    assert cache.is_file()

    def no_reading(*a, **k):
        raise AssertionError("the file was read again although the OS reports it unchanged")

    monkeypatch.setattr(filehash, "sha256_file", no_reading)
    assert filehash.file_digests([f])[f] == hashlib.sha256(f.read_bytes()).hexdigest()


def test_an_edit_with_the_old_mtime_put_back_is_rehashed(tmp_path, cache):
    f = tmp_path / "a.txt"
    f.write_text("가나다라", encoding="utf-8")
    first = filehash.file_digests([f])[f]
    st = f.stat()
    f.write_text("가나다마", encoding="utf-8")  # same size
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    second = filehash.file_digests([f])[f]
    assert second != first and second == hashlib.sha256("가나다마".encode()).hexdigest()


def test_several_files_at_once_and_a_memo_that_cannot_be_written(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("KLUE_CACHE_DIR", str(blocker))  # mkdir fails: digests still come back
    files = [tmp_path / f"{i}.txt" for i in range(3)]
    for i, f in enumerate(files):
        f.write_text("줄\n" * i, encoding="utf-8")
    got = filehash.file_digests(files)
    assert got == {f: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    assert len(set(got.values())) == 3
