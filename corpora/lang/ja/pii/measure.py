"""Spans the Japanese detector finds in real text that has no planted PII: how many of each type, and examples.

    python -m corpora.lang.ja.pii.measure --data-dir $KLUE_DATA_DIR        # ../shared/data in this workspace

reads the first 2,000 paragraphs of `ja/corpus/wiki/jawiki_jaquad_paragraphs.jsonl` (JaQuAD's Wikipedia
paragraphs) and the Tanaka sentences of `ja/corpus/parallel_ja_en/tanaka_jec_pairs.csv` (rows whose origin
is `tanaka`). Wikipedia names real people and the addresses of institutions, so PERSON and ADDRESS hits there
are true positives of a kind; a structured identifier (phone, My Number, corporate number, postal code) in
either corpus is a false alarm unless the text prints one. `--format json` gives the counts and every span.
"""

from __future__ import annotations

import csv
import json
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

WIKI = Path("ja/corpus/wiki/jawiki_jaquad_paragraphs.jsonl")
TANAKA = Path("ja/corpus/parallel_ja_en/tanaka_jec_pairs.csv")


def wiki_paragraphs(path: Path, limit: int) -> list[str]:
    out: list[str] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if len(out) >= limit:
                break
            if line.strip():
                out.append(json.loads(line)["text"])
    return out


def tanaka_sentences(path: Path) -> list[str]:
    with open(path, encoding="utf-8", newline="") as f:
        return [row["ja"] for row in csv.DictReader(f) if row.get("origin") == "tanaka"]


def scan(texts: Iterable[str], detector: Any, context: int = 12) -> dict[str, Any]:
    """Spans per type over `texts`, documents with any span, and every span with a little context."""
    per_type: Counter[str] = Counter()
    spans: list[dict[str, Any]] = []
    n = chars = docs_hit = 0
    t0 = time.perf_counter()
    for text in texts:
        n += 1
        chars += len(text)
        found = detector.detect(text)
        docs_hit += bool(found)
        for s in found:
            per_type[s.type] += 1
            spans.append({"type": s.type, "text": text[s.start:s.end], "score": s.score,
                          "context": text[max(0, s.start - context):s.end + context].replace("\n", " ")})
    seconds = time.perf_counter() - t0
    return {"texts": n, "chars": chars, "texts_with_spans": docs_hit, "per_type": dict(sorted(per_type.items())),
            "seconds": round(seconds, 2), "spans": spans}


@click.command()
@click.option("--data-dir", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True,
              help="the shared data folder ($KLUE_DATA_DIR), holding ja/corpus/...")
@click.option("--paragraphs", default=2000, show_default=True, type=click.IntRange(min=1))
@click.option("--examples", default=8, show_default=True, type=click.IntRange(min=0), help="per type")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def main(data_dir: Path, paragraphs: int, examples: int, fmt: str) -> None:
    """Spans per type on Japanese text with no planted PII (jawiki paragraphs, Tanaka sentences)."""
    # lazy: presidio and spaCy (corpora.pii.engine)
    from corpora.pii.engine import PiiDetector

    det = PiiDetector(language="ja")
    corpora = {f"jawiki (first {paragraphs} paragraphs)": wiki_paragraphs(data_dir / WIKI, paragraphs),
               "tanaka": tanaka_sentences(data_dir / TANAKA)}
    results = {name: scan(texts, det) for name, texts in corpora.items()}
    if fmt == "json":
        click.echo(json.dumps(results, ensure_ascii=False, indent=1))
        return
    for name, r in results.items():
        click.echo(f"== {name}: {r['texts']} texts, {r['chars']:,} characters, {r['seconds']} s; "
                   f"{r['texts_with_spans']} with a span ==")
        for t, k in r["per_type"].items():
            click.echo(f"{t:<18}{k:>6}")
            for s in [s for s in r["spans"] if s["type"] == t][:examples]:
                click.echo(f"    {s['text']!r:<28} {s['score']:<5} …{s['context']}…")


if __name__ == "__main__":
    main()
