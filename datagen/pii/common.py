"""The machinery the Korean and the Japanese evaluation-set generators share (`datagen.pii.ko`, `datagen.pii.ja`).

Each language module holds what is its own -- the closed and open classes of values, the official formats of
its identifiers, its genres -- and leaves here what does not depend on the language, so that the two sets are
built, split and written by one piece of code: the gold span in the making (`_S`) and the document built from
lines of segments (`_Lines`), the hash that puts an open-class value in one split (`_side`), the per-document
random stream and the loop that turns a stream into records (`documents`), and the writer of the two split
files. The few value makers whose format is the same in both languages (digits, IPv4 addresses, the host and
scheme of a URL) live here too.

Nothing here may change what a generator writes: the random calls happen in the order the language modules
made them before they shared this code, and the seeds' strings are the language modules' own.
"""

from __future__ import annotations

import json
import random
import re
import zlib
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, TypeVar

from pipeline.io import atomic_file

SPLITS = ("dev", "heldout")
MAX_LINES = 20

C = TypeVar("C")  # a language's value-maker context
P = TypeVar("P")  # a language's pools
T = TypeVar("T")


def check_split(split: str) -> None:
    """A generator knows two splits only; any other name is a caller's mistake, not a third split."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")


def _side(key: str) -> int:
    """0 for dev, 1 for heldout: a stable hash of an open-class value's romanised form."""
    return zlib.crc32(("evalgen-split:" + key).encode()) & 1


def split_pairs(raw: str, first: str, second: str) -> list[tuple[str, str]]:
    """[("민", "min"), ...] from "민min ...": each whitespace-separated element cut into a run of the `first`
    character class and a run of the `second` (a value and its reading), the way both languages write their
    element tables; an element of another form is a typo in a table, raised at import."""
    out = []
    for tok in raw.split():
        m = re.fullmatch(f"([{first}]+)([{second}]+)", tok)
        if not m:
            raise ValueError(f"bad element {tok!r}")
        out.append((m.group(1), m.group(2)))
    return out


def by_cut(k: float, cuts: Sequence[float], values: Sequence[T]) -> T:
    """`values[i]` for the first cut that `k` is under (the last value when it is under none): the `if k < a:
    ... elif k < b:` ladder of weighted forms, for forms that draw no random number of their own (they are all
    built before the choice, so a ladder and this give the same stream)."""
    return values[bisect_right(cuts, k)]


# ---------------------------------------------------------------------------------------------------------------
# Spans and documents
# ---------------------------------------------------------------------------------------------------------------


class _S(NamedTuple):
    """A gold span in the making. `valid`: True when the generator computed the value's check digit (kept out
    of the output; the tests read it). `used`: the open-class values it contains, as (pool field, value)."""

    label: str
    text: str
    valid: bool | None = None
    used: tuple[tuple[str, str], ...] = ()


_Seg = str | _S


class _Lines:
    """A document as lines of segments; optional lines are dropped (at random) when a document runs long."""

    def __init__(self) -> None:
        self.lines: list[tuple[tuple[_Seg, ...], bool]] = []

    def add(self, *segs: _Seg, opt: bool = False) -> None:
        self.lines.append((segs, opt))

    def blank(self) -> None:
        self.lines.append(((), True))

    @staticmethod
    def _height(segs: tuple[_Seg, ...]) -> int:
        return 1 + sum((s.text if isinstance(s, _S) else s).count("\n") for s in segs)

    def render(self, rng: random.Random) -> tuple[str, list[dict], list[_S]]:
        lines = list(self.lines)
        while sum(self._height(s) for s, _ in lines) > MAX_LINES:
            cands = [i for i, (s, o) in enumerate(lines) if o and not any(isinstance(x, _S) for x in s)]
            cands = cands or [i for i, (_, o) in enumerate(lines) if o]
            if not cands:
                break
            del lines[rng.choice(cands)]
        while lines and not lines[-1][0]:
            lines.pop()
        parts: list[str] = []
        spans: list[dict] = []
        metas: list[_S] = []
        pos = 0
        for i, (segs, _) in enumerate(lines):
            if i:
                parts.append("\n")
                pos += 1
            for seg in segs:
                if isinstance(seg, _S):
                    if seg.text != seg.text.strip() or not seg.text:
                        raise AssertionError(f"span with outer whitespace: {seg.text!r}")
                    spans.append({"label": seg.label, "start": pos, "end": pos + len(seg.text), "text": seg.text})
                    metas.append(seg)
                    t = seg.text
                else:
                    t = seg
                parts.append(t)
                pos += len(t)
        return "".join(parts), spans, metas


def _td(*segs: _Seg) -> tuple[_Seg, ...]:
    """One HTML table cell around segments (the HTML-table genre of both languages)."""
    return ("<td>",) + segs + ("</td>",)


# ---------------------------------------------------------------------------------------------------------------
# Value makers whose format does not depend on the language
# ---------------------------------------------------------------------------------------------------------------


def _digits(r: random.Random, k: int) -> str:
    return "".join(str(r.randint(0, 9)) for _ in range(k))


def _nz(r: random.Random, k: int) -> str:
    """k digits, the first one 2-9 (subscriber numbers never start with 0 or 1)."""
    return str(r.randint(2, 9)) + _digits(r, k - 1)


def ipv4(r: random.Random, k: float, cuts: tuple[float, float, float]) -> _S:
    """An IPv4 address: in 192.168/16, 10/8 or 172.16/12 (RFC 1918) while `k` is under each of `cuts`, a public
    one after (no 10, 127, 172 or 192 first octet, nothing of class D or E)."""
    if k < cuts[0]:
        return _S("IP", f"192.168.{r.randint(0, 255)}.{r.randint(1, 254)}")
    if k < cuts[1]:
        return _S("IP", f"10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}")
    if k < cuts[2]:
        return _S("IP", f"172.{r.randint(16, 31)}.{r.randint(0, 255)}.{r.randint(1, 254)}")
    first = r.choice([n for n in range(1, 224) if n not in (10, 127, 172, 192)])
    return _S("IP", f"{first}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}")


def web_address(r: random.Random, domain: str, path: str, subdomains: Sequence[str],
                scheme_weights: tuple[int, int, int]) -> str:
    """`https://www.domain/path`, `http://domain/path`, `shop.domain/...`: a host (www., bare, or one of
    `subdomains`) and a scheme (https, http or none; with none the host is written `www.`, as people do)."""
    host = r.choices(("www." + domain, domain, r.choice(subdomains) + domain), (60, 25, 15))[0]
    scheme = r.choices(("https://", "http://", ""), scheme_weights)[0]
    return scheme + (host if scheme else "www." + domain) + path


def mail_user(r: random.Random, role: bool, role_users: Sequence[str], users: Sequence[str]
              ) -> tuple[str, tuple[tuple[str, str], ...]]:
    """(the local part of an address, the open-class values it uses): a role account (`info`, `support`: one of
    the closed class, so nothing of the split's pools) or one of the split's user names."""
    if role:
        return r.choice(role_users), ()
    user = r.choice(users)
    return user, (("users", user),)


# ---------------------------------------------------------------------------------------------------------------
# Records and files
# ---------------------------------------------------------------------------------------------------------------


Rendered = tuple[str, list[dict], list[_S]]  # a document's text, its gold spans, their generator-side details


def documents(n: int, split: str, seed: int, *, stream: str, pools: Callable[[str], P],
              genres: Mapping[str, Callable[[C], _Lines]], weights: Sequence[int],
              context: Callable[[random.Random, P], C]) -> Iterator[tuple[int, str, C, Rendered]]:
    """(i, genre, the document's context, its rendering (text, spans, span details)) for documents 0..n-1 of
    `split`. Document i draws from its own stream, seeded by `f"{stream}/{split}/{seed}/{i}"` (a str seed is
    hashed with SHA-512 by random.seed: stable across runs and PYTHONHASHSEED), so it does not depend on n."""
    check_split(split)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    pools_ = pools(split)
    names = tuple(genres)
    for i in range(n):
        rng = random.Random(f"{stream}/{split}/{seed}/{i}")
        genre = rng.choices(names, weights=weights)[0]
        ctx = context(rng, pools_)
        yield i, genre, ctx, genres[genre](ctx).render(rng)


def write_splits(out_dir: Path, generate_fn: Callable[[int, str, int], Iterable[dict]], n_dev: int, n_heldout: int,
                 seed: int) -> dict[str, Path]:
    """The two split files of a language's generator (`generate_fn(n, split, seed)`), one JSON record a line,
    each written atomically; byte-identical for the same arguments. Returns {"dev": path, "heldout": path}."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for split, n in (("dev", n_dev), ("heldout", n_heldout)):
        path = out_dir / f"{split}.jsonl"
        with atomic_file(path, "wb") as f:
            for rec in generate_fn(n, split, seed):
                f.write((json.dumps(rec, ensure_ascii=False) + "\n").encode("utf-8"))
        paths[split] = path
    return paths


def split_writer(generate_fn: Callable[[int, str, int], Iterable[dict]]) -> Callable[..., dict[str, Path]]:
    """A language module's `write_split`: its two files written from its `generate_fn` by `write_splits`."""

    def write_split(out_dir: Path, n_dev: int = 1000, n_heldout: int = 1500, seed: int = 0) -> dict[str, Path]:
        """Write `out_dir/dev.jsonl` and `out_dir/heldout.jsonl` (each atomically); byte-identical for the same
        arguments. Returns {"dev": path, "heldout": path}."""
        return write_splits(out_dir, generate_fn, n_dev, n_heldout, seed)

    return write_split


def label_counts(records: Iterable[dict], labels: Sequence[str]) -> dict[str, int]:
    """Gold spans per label over `records`, every label of the language listed (0 where none)."""
    out = dict.fromkeys(labels, 0)
    for rec in records:
        for s in rec["spans"]:
            out[s["label"]] += 1
    return out
