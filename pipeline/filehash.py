"""Content digests of input files, for cache keys.

Stage keys must follow what a file *says*, not when it was written: a copied, re-downloaded or re-provisioned
corpus has new mtimes but the same bytes, and rerunning hours of curation because of that is the failure users
hit first. Hashing every byte on every `klue run` would cost minutes on a large corpus, so digests are memoised
in a small SQLite table keyed by what the operating system says about the file (path, inode, size, mtime, ctime):
a memo miss only costs a rehash, never a wrong key, and ctime (which no user call can set back) catches an edit
whose mtime was restored. The same idea as DVC's state database and git's index; written here because no small library
offers it on its own.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from tqdm.auto import tqdm

from pipeline import io
from pipeline.manifest import sha256_file

SHOW_PROGRESS_BYTES = 256 << 20  # a bar only when hashing takes noticeable time


def cache_path() -> Path:
    """`file-digests.sqlite` in the per-machine cache folder (`pipeline.io.cache_root`)."""
    return io.cache_root() / "file-digests.sqlite"


def _stat_key(path: Path) -> tuple[str, int, int, int, int]:
    st = path.stat()
    return str(path.resolve()), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _open_memo() -> sqlite3.Connection | None:
    """The memo table, or None when the cache folder cannot be written (read-only home): digests still work."""
    try:
        path = cache_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(path, timeout=30)
        con.execute("CREATE TABLE IF NOT EXISTS digest (path TEXT PRIMARY KEY, ino INTEGER, size INTEGER,"
                    " mtime_ns INTEGER, ctime_ns INTEGER, sha256 TEXT)")
        return con
    except (OSError, sqlite3.Error):
        return None


def file_digests(paths: Iterable[Path], desc: str = "hashing inputs") -> dict[Path, str]:
    """sha256 of each file's bytes, reusing the memo for files the OS reports unchanged."""
    paths = list(paths)
    out: dict[Path, str] = {}
    con = _open_memo()
    todo: list[tuple[Path, tuple[str, int, int, int, int]]] = []
    for p in paths:
        key = _stat_key(p)
        row = None
        if con is not None:
            row = con.execute("SELECT ino, size, mtime_ns, ctime_ns, sha256 FROM digest WHERE path = ?",
                              (key[0],)).fetchone()
        if row is not None and tuple(row[:4]) == key[1:]:
            out[p] = row[4]
        else:
            todo.append((p, key))
    total = sum(k[2] for _, k in todo)
    with tqdm(total=total, unit="B", unit_scale=True, desc=desc, disable=total < SHOW_PROGRESS_BYTES) as bar:
        for p, key in todo:
            out[p] = sha256_file(p)
            bar.update(key[2])
            if con is not None and _stat_key(p) == key:  # not memoised if the file changed while being read
                try:
                    with con:
                        con.execute("INSERT OR REPLACE INTO digest VALUES (?, ?, ?, ?, ?, ?)", (*key, out[p]))
                except sqlite3.Error:
                    pass  # a locked or read-only memo costs speed only
    if con is not None:
        con.close()
    return out
