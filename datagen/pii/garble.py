"""Garbled identifiers: a copy of a PII gold file whose numeric identifiers carry the typing and OCR errors real
documents carry, with the gold spans moved to match.

    python -m datagen.pii.garble IN.jsonl OUT.jsonl [--seed 0] [--rate 1.0]

Why: the evaluation sets (`klue pii gen`) print every identifier in its official layout, so they cannot show
what a detector does with `운전면허번호 12-34-56-78-901-23` (an extra group), `운전면허증(13-05-7788-40)` (a short
group) or `운전면허번호 14-22-31-09-876543-2` (a trailing digit): the shapes issue 34 reports from documents its
author had. This rewrites each numeric identifier span (`GARBLE_TYPES`) of a gold file with one error, chosen and
placed by a seeded generator per document, so the same input and seed give the same bytes:

- `extra_group`: a separator and 2-3 digits inserted after a group;
- `short_group`: 1-2 digits dropped from a group of 3 or more;
- `trailing_digit`: a separator and one digit appended;
- `doubled_digit`: one digit typed twice;
- `dropped_digit`: one digit left out;
- `separator`: one separator replaced by another (`-`, `.`, a space), as OCR reads it.

Each rewritten span keeps its label and gains `"garbled": kind`; the other spans of the document shift with it.
A value without digit groups (or shorter than 6 digits) is left as it is.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from pipeline import io

GARBLE_TYPES = ("RRN", "FRN", "CORP_REG", "BUSINESS_REG", "DRIVER_LICENSE", "PASSPORT", "ACCOUNT",
                "MEDICAL_INSURANCE", "CARD", "PHONE", "FAX")
KINDS = ("extra_group", "short_group", "trailing_digit", "doubled_digit", "dropped_digit", "separator")
_GROUP = re.compile(r"[0-9]+")


def garble_value(value: str, rng: random.Random) -> tuple[str, str] | None:
    """(the value with one error, the error's kind), or None where the value has too few digits to garble."""
    groups = [(m.start(), m.end()) for m in _GROUP.finditer(value)]
    if sum(e - s for s, e in groups) < 6:
        return None
    seps = [c for c in value if c in "-. "] or ["-"]
    kind = rng.choice(KINDS)
    digits = [i for i, c in enumerate(value) if c.isdigit()]
    if kind == "extra_group":
        _, e = rng.choice(groups)
        extra = "".join(rng.choice("0123456789") for _ in range(rng.randint(2, 3)))
        return value[:e] + seps[0] + extra + value[e:], kind
    if kind == "short_group":
        long = [(s, e) for s, e in groups if e - s >= 3]
        if not long:
            kind = "trailing_digit"
        else:
            s, e = rng.choice(long)
            k = rng.randint(1, min(2, e - s - 1))
            return value[:e - k] + value[e:], kind
    if kind == "trailing_digit":
        return value + seps[-1] + rng.choice("0123456789"), kind
    if kind == "doubled_digit":
        i = rng.choice(digits)
        return value[:i + 1] + value[i] + value[i + 1:], kind
    if kind == "dropped_digit":
        i = rng.choice(digits)
        return value[:i] + value[i + 1:], kind
    # separator: one separator read as another, or a space where there was none (a value printed bare)
    at = [i for i, c in enumerate(value) if c in "-. "]
    if at:
        i = rng.choice(at)
        return value[:i] + rng.choice([c for c in "-. " if c != value[i]]) + value[i + 1:], kind
    i = rng.choice(digits[2:-2] or digits[1:])
    return value[:i] + " " + value[i:], kind


def garble_record(rec: dict, rng: random.Random, rate: float = 1.0) -> dict:
    """`rec` ({"text", "spans"}) with each span of `GARBLE_TYPES` garbled with probability `rate`; every span's
    offsets follow the text. Spans must not overlap (gold files' spans do not)."""
    text = rec["text"]
    spans = sorted(rec["spans"], key=lambda s: (s["start"], s["end"]))
    out_text: list[str] = []
    out_spans = []
    pos = shift = 0
    for sp in spans:
        s, e = int(sp["start"]), int(sp["end"])
        if s < pos:
            raise ValueError(f"overlapping gold spans at {s}-{e} ({sp['label']})")
        out_text.append(text[pos:s])
        value = text[s:e]
        new = dict(sp)
        garbled = garble_value(value, rng) if sp["label"] in GARBLE_TYPES and rng.random() < rate else None
        if garbled is not None:
            value, new["garbled"] = garbled
        new["start"], new["end"], new["text"] = s + shift, s + shift + len(value), value
        shift += len(value) - (e - s)
        out_text.append(value)
        out_spans.append(new)
        pos = e
    out_text.append(text[pos:])
    return {**rec, "text": "".join(out_text), "spans": out_spans}


def garble_file(records: Iterable[dict], seed: int = 0, rate: float = 1.0) -> Iterator[dict]:
    """Each record garbled by its own generator (seed and line number), so one record's errors never depend on
    another's."""
    for i, rec in enumerate(records):
        yield garble_record(rec, random.Random(f"klue-pipeline/pii-garble/{seed}/{i}"), rate)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m datagen.pii.garble", description=__doc__.split("\n\n")[0])
    ap.add_argument("input", type=Path)
    ap.add_argument("output", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rate", type=float, default=1.0, help="share of numeric identifier spans to garble")
    args = ap.parse_args(argv)
    with open(args.input, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    rows = list(garble_file(records, args.seed, args.rate))
    io.write_jsonl(args.output, rows)
    n = sum(1 for r in rows for s in r["spans"] if "garbled" in s)
    print(f"{len(rows)} documents, {n} garbled spans -> {args.output}")


if __name__ == "__main__":
    main()
