"""Byte streams under the readers: transparent gzip/zstd, bounded line splitting, binary-file sniffing.

Everything here works on bytes, before decoding, so that a bad byte sequence damages one record and not the
rest of the file, and so that a single enormous line never has to be held in memory.
"""

from __future__ import annotations

import codecs
import gzip
import io
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, cast

import zstandard

CHUNK = 1 << 20  # read unit: a line longer than this is assembled from (or skipped in) 1 MiB pieces
SNIFF_BYTES = 1 << 16
EXCERPT_BYTES = 200
BOM = b"\xef\xbb\xbf"

# Errors a compressed stream raises when it is truncated or corrupt. Plain files are not wrapped: an OSError
# there is a real I/O failure and must stop the run.
STREAM_ERRORS: tuple[type[BaseException], ...] = (EOFError, OSError, zlib.error, zstandard.ZstdError)


class StreamError(Exception):
    """A compressed stream broke off: what was read before `line`/`offset` is good, the rest is lost."""

    def __init__(self, line: int, offset: int, cause: BaseException):
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.line = line
        self.offset = offset
        self.cause = cause


def is_compressed(path: Path) -> bool:
    return path.name.lower().endswith((".gz", ".zst", ".zstd"))


def open_binary(path: Path) -> BinaryIO:
    """Open `path` for reading bytes, decompressing by extension (.gz, .zst/.zstd)."""
    name = path.name.lower()
    if name.endswith(".gz"):
        return cast(BinaryIO, gzip.open(path, "rb"))
    if name.endswith((".zst", ".zstd")):
        return io.BufferedReader(_ZstdRaw(open(path, "rb")), CHUNK)
    return open(path, "rb", buffering=CHUNK)


def open_range(path: Path, start: int, end: int) -> BinaryIO:
    """Open bytes [start, end) of an uncompressed file as a stream of its own, so that a piece of a split file
    goes through the same line splitting as the whole file (`corpora.readers.ranges`)."""
    return io.BufferedReader(_Window(path, start, end), CHUNK)


class _Window(io.RawIOBase):
    """Raw reader that stops at `end`: a byte range must never read into the next worker's range."""

    def __init__(self, path: Path, start: int, end: int):
        self._path = path
        self._f = open(path, "rb", buffering=0)
        self._f.seek(start)
        self._end = end
        self._left = end - start

    def readable(self) -> bool:
        return True

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._left <= 0:
            return 0
        n = self._f.readinto(memoryview(b)[:min(len(b), self._left)]) or 0
        if n == 0:  # a shorter file than planned: its pieces no longer match the whole-file read
            raise OSError(f"{self._path}: ends at byte {self._end - self._left}, before the end of its piece at "
                          f"byte {self._end}: the file changed while it was being collected")
        self._left -= n
        return n

    def close(self) -> None:
        self._f.close()
        super().close()


class _ZstdRaw(io.RawIOBase):
    """Raw zstd decompressing reader that notices truncation.

    Written by hand because zstandard's `stream_reader` returns a clean EOF when the input stops in the middle
    of a frame (zstandard 0.25), which would silently drop the tail of a truncated file. Frames are read one
    after another (concatenated .zst files are valid).
    """

    def __init__(self, raw: BinaryIO):
        self._raw = raw
        self._dobj = zstandard.ZstdDecompressor().decompressobj()
        self._pending = False  # compressed bytes fed to the current frame that have not completed it
        self._buf = b""

    def readable(self) -> bool:
        return True

    # typeshed types the argument as the Buffer protocol, which has no slice assignment; what io passes is one
    # of these two
    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._buf:
            data = self._raw.read(1 << 17)
            if not data:
                if self._pending:
                    raise EOFError("zstd stream ended before the end of its frame (truncated file)")
                return 0
            out = []
            while data:
                out.append(self._dobj.decompress(data))
                self._pending = True
                if self._dobj.eof:
                    data = self._dobj.unused_data
                    self._dobj = zstandard.ZstdDecompressor().decompressobj()
                    self._pending = False
                else:
                    data = b""
            self._buf = b"".join(out)
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


@dataclass(frozen=True)
class Line:
    number: int  # 1-based
    offset: int  # byte offset of the line start in the (decompressed) stream
    data: bytes | None  # the line without its terminator (\n or \r\n); None when longer than the limit
    size: int  # bytes including the terminator
    head: bytes  # first bytes, for excerpts of over-long lines


def iter_lines(stream: BinaryIO, limit: int, strip_bom: bool = True, keep_ends: bool = False,
               compressed: bool = False, first_line: int = 0, first_offset: int = 0) -> Iterator[Line]:
    """Split a byte stream on b"\\n", holding at most `limit` bytes of one line (longer ones: data=None).

    `first_line`/`first_offset`: lines and bytes before the stream's start, when it is a piece of a split file
    (the numbers then continue the whole file's; a BOM is only stripped at the file's start).
    Raises StreamError (with the number of the first line not read) when a compressed stream breaks off.
    """
    number = first_line
    offset = first_offset
    strip_bom = strip_bom and first_offset == 0
    errors = STREAM_ERRORS if compressed else ()
    while True:
        parts: list[bytes] = []
        size = 0
        over = False
        head = b""
        while True:
            try:
                chunk = stream.readline(CHUNK)
            except errors as e:
                raise StreamError(number + 1, offset, e) from e
            if not chunk:
                break
            if number == first_line and size == 0 and strip_bom and chunk.startswith(BOM):
                chunk = chunk[len(BOM):]
                offset += len(BOM)
            if not head:
                head = chunk[:EXCERPT_BYTES]
            size += len(chunk)
            if not over:
                if size - (1 if chunk.endswith(b"\n") else 0) > limit:
                    over, parts = True, []
                else:
                    parts.append(chunk)
            if chunk.endswith(b"\n"):
                break
        if size == 0:
            return
        number += 1
        data = None
        if not over:
            data = b"".join(parts)
            if not keep_ends:
                data = data[:-1] if data.endswith(b"\n") else data
                data = data[:-1] if data.endswith(b"\r") else data
        yield Line(number, offset, data, size, head)
        offset += size


_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f\ufffd]")


def control_ratio(text: str) -> float:
    """Share of characters that do not occur in text: C0 controls (except tab, newlines, form feed), DEL, and
    U+FFFD. Used to tell binary data from text; escape codes in otherwise normal text stay far below 0.3."""
    if not text or _CONTROL.search(text) is None:
        return 0.0
    return (len(text) - len(_CONTROL.sub("", text))) / len(text)


# C0 control bytes that plain text (in any ASCII-compatible encoding) practically never holds: all but tab,
# newlines, vertical tab, form feed and ESC (terminal colour codes), plus DEL.
_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])


def sniff_binary(path: Path, encoding: str, ratio: float) -> str | None:
    """Look at the first 64 KiB (decompressed): why this is not a text file, or None when it looks like text.

    Binary: more than 1% NUL bytes, or more than 5% other control bytes, or more than `ratio` undecodable
    characters in the declared encoding that CP949 does not explain either (a legacy Korean file must reach
    per-record handling, where each line is quarantined with advice to set `encoding: cp949`). Stream errors
    are ignored here: the reader reports them with their position.
    """
    errors = STREAM_ERRORS if is_compressed(path) else ()
    try:
        with open_binary(path) as f:
            sample = f.read(SNIFF_BYTES)
    except errors:
        return None
    if not sample:
        return None
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "starts with a UTF-16 byte-order mark: convert the file to UTF-8"
    n = len(sample)
    nul = sample.count(b"\x00")
    if nul > n * 0.01:
        return f"{nul} NUL bytes in the first {n} bytes"
    ctrl = n - len(sample.translate(None, _CONTROL_BYTES))
    if ctrl > n * 0.05:
        return f"{ctrl} control bytes in the first {n} bytes"
    bad = _undecodable(sample, encoding)
    if bad > ratio and _undecodable(sample, "cp949") > 0.05:
        return f"{bad:.0%} of the first {n} bytes do not decode as {encoding} (nor as cp949)"
    return None


def _undecodable(sample: bytes, encoding: str) -> float:
    # an incremental decoder without `final` ignores a character cut at the end of the sample
    text = codecs.getincrementaldecoder(encoding)(errors="replace").decode(sample, final=False)
    return text.count("\ufffd") / max(1, len(text))
