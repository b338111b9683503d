"""Checks the Korean and the Japanese PII evaluation-set tests share (tests/test_pii_evalgen*.py): the record
layout and the format variants are the same contract in both languages, so they are checked by one piece of
code; what differs (labels, line counts, whether a span may hold a line break) is passed in."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping


def assert_well_formed(records: Mapping[str, list[dict]], genres: Collection[str], labels: Collection[str],
                       lines: tuple[int, int], span_may_break: bool) -> None:
    """Every record of every split: the five fields in order, its split and a known genre, a line count within
    `lines`, unique ids, and spans of known labels that lie in the text, equal its slice, carry no outer white
    space (nor a line break unless `span_may_break`) and come sorted without overlap."""
    for split, recs in records.items():
        ids = set()
        for r in recs:
            assert list(r) == ["id", "genre", "split", "text", "spans"]
            assert r["split"] == split and r["genre"] in genres
            ids.add(r["id"])
            text = r["text"]
            assert lines[0] <= text.count("\n") + 1 <= lines[1], (r["id"], text.count("\n") + 1)
            prev_end = 0
            for s in r["spans"]:
                assert set(s) == {"label", "start", "end", "text"} and s["label"] in labels
                assert 0 <= s["start"] < s["end"] <= len(text) and text[s["start"]:s["end"]] == s["text"]
                assert s["text"] == s["text"].strip() and (span_may_break or "\n" not in s["text"])
                assert s["start"] >= prev_end, f"{r['id']}: overlapping or unsorted spans"
                prev_end = s["end"]
        assert len(ids) == len(recs)


def missing_variants(recs: Iterable[dict], variants: Mapping[str, Mapping[str, str]]) -> list[str]:
    """`label/name` of each format variant (a regular expression per label and name) that no span of its label
    in `recs` matches."""
    by_label: dict[str, list[str]] = {}
    for r in recs:
        for s in r["spans"]:
            by_label.setdefault(s["label"], []).append(s["text"])
    return [f"{lab}/{name}" for lab, vs in variants.items() for name, pat in vs.items()
            if not any(re.search(pat, t) for t in by_label.get(lab, []))]
