"""Atomic writes: the one way this project writes a file or a folder that someone else may read.

Everything is written under a temp name beside its destination and renamed into place (`os.replace`, atomic on
POSIX within one file system), so a reader, or a rerun after kill -9, sees the old file or the new one, never
half of one. One temp-name convention, `.NAME.tmp-HOST-PID-RANDOM`: hidden, recognisable (`is_temp`), and
unique per attempt, so two attempts at the same write (a retried task on another node of a cluster, say) never
share a temp file. `remove_temps(folder)` deletes what an interrupted write left; the runner calls it before a
resumable stage continues.

Ways to write, by what the caller holds:
  - the whole content:       `write_text`, `write_bytes`, `write_json`
  - a stream of lines/bytes: `atomic_file(path, mode)` (a context manager yielding the open temp file),
                             `JsonlWriter` / `write_jsonl` for deterministic JSON lines
  - a library that wants a path (Parquet writers, `save_pretrained`, `savefig`, accelerate's `save_state`):
                             `atomic_path(path)` (a context manager yielding the temp path: a file or a folder)
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

_TMP_RE = re.compile(r"^\..+\.tmp-[^/]+$")


def temp_name(path: Path) -> Path:
    """A fresh temp path beside `path`: `.NAME.tmp-HOST-PID-RANDOM` (hidden; unique per call)."""
    host = re.sub(r"[^A-Za-z0-9_.-]", "_", socket.gethostname()) or "host"
    return path.with_name(f".{path.name}.tmp-{host}-{os.getpid()}-{uuid.uuid4().hex[:8]}")


def is_temp(path: Path | str) -> bool:
    """Whether a file or folder name is one of `temp_name`'s."""
    return bool(_TMP_RE.match(Path(path).name))


def remove_temps(folder: Path) -> list[Path]:
    """Delete every temp file and folder below `folder` (left by interrupted writes); returns what went."""
    found = sorted((p for p in folder.rglob(".*.tmp-*") if is_temp(p)), key=lambda p: len(p.parts))
    removed = []
    for p in found:
        if not p.exists() and not p.is_symlink():  # inside a temp folder removed just before
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
        removed.append(p)
    return removed


def remove_stale(path: Path) -> None:
    """Delete the temp files and folders that interrupted writes of `path` left beside it."""
    for p in path.parent.glob(f".{path.name}.tmp-*"):
        if is_temp(p):
            _discard(p)


def _discard(tmp: Path) -> None:
    if tmp.is_dir() and not tmp.is_symlink():
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_path(path: Path | str, *, replace_dir: bool = False) -> Iterator[Path]:
    """Yield a temp path for `path`; once the block ends without an error, rename it into place.

    The parent folder is created if missing. The block may create a file or a folder at the temp path. An existing folder at `path` is replaced only with
    `replace_dir=True` (it is moved aside to another temp name, then deleted: a kill in between leaves a temp
    name that `remove_temps` cleans). On an error the temp path is deleted and nothing changes at `path`.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path)
    try:
        yield tmp
    except BaseException:
        _discard(tmp)
        raise
    if path.is_dir() and not path.is_symlink() and not replace_dir:
        _discard(tmp)
        raise IsADirectoryError(f"{path}: a folder is in the way (pass replace_dir=True to replace it)")
    move_into_place(tmp, path, temp_name(path))


def move_into_place(src: Path, dst: Path, old: Path) -> None:
    """Rename `src` to `dst`. A folder already at `dst` is first moved to `old`, and deleted once `src` is in
    place: a kill in between leaves `old` beside `dst`, for the caller's recovery to find."""
    if dst.is_dir() and not dst.is_symlink():
        if old.exists():
            shutil.rmtree(old)
        os.replace(dst, old)
        os.replace(src, dst)
        shutil.rmtree(old)
    else:
        os.replace(src, dst)


@contextlib.contextmanager
def atomic_file(path: Path | str, mode: str = "w", *, fsync: bool = False) -> Iterator[IO[Any]]:
    """Yield an open temp file ("w": UTF-8 text, "wb": bytes); renamed into place when the block ends cleanly."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_file: mode must be 'w' or 'wb', got {mode!r}")
    with atomic_path(path) as tmp:
        f = open(tmp, mode, encoding="utf-8" if mode == "w" else None)  # noqa: SIM115 - closed below
        try:
            yield f
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        finally:
            f.close()


def write_bytes(path: Path | str, data: bytes, *, fsync: bool = False) -> None:
    with atomic_file(path, "wb", fsync=fsync) as f:
        f.write(data)


def cache_root() -> Path:
    """The project's per-machine cache folder: `$KLUE_CACHE_DIR`, default `$XDG_CACHE_HOME` (or ~/.cache)/klue-pipeline.
    What lives there can always be recomputed (file digests, the measured matmul peak)."""
    root = os.environ.get("KLUE_CACHE_DIR")
    if not root:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "klue-pipeline")
    return Path(root)


def write_text(path: Path | str, text: str, *, fsync: bool = False) -> None:
    with atomic_file(path, "w", fsync=fsync) as f:
        f.write(text)


def write_json(path: Path | str, obj: Any, *, indent: int | None = 1, sort_keys: bool = True,
               ensure_ascii: bool = False, allow_nan: bool = True, fsync: bool = False) -> None:
    """`obj` as JSON plus a newline. The defaults are the project's (UTF-8 kept, keys sorted, indent 1);
    callers whose files predate them pass their own, since files must stay byte-identical."""
    text = json.dumps(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii, allow_nan=allow_nan)
    write_text(path, text + "\n", fsync=fsync)


def json_line(obj: Any) -> str:
    """Deterministic JSON line (sorted keys, UTF-8 kept, no spaces) for outputs that must be byte-identical."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


class JsonlWriter:
    """Deterministic JSON lines (`json_line`), streamed to a temp name and renamed on `close`.

    Usable as a context manager; leaving the block with an error discards the temp file."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.count = 0
        self._cm = atomic_file(self.path, "w")
        self._f = self._cm.__enter__()

    def write(self, obj: Any) -> None:
        self._f.write(json_line(obj))
        self.count += 1

    def close(self) -> None:
        self._cm.__exit__(None, None, None)

    def abort(self, exc: BaseException) -> None:
        with contextlib.suppress(BaseException):
            self._cm.__exit__(type(exc), exc, exc.__traceback__)

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None:
            self.close()
        else:
            self.abort(exc)


def write_jsonl(path: Path | str, rows: Iterable[Any]) -> int:
    """Write `rows` as deterministic JSON lines, atomically; returns how many."""
    with JsonlWriter(path) as w:
        for r in rows:
            w.write(r)
        return w.count
