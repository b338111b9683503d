"""`klue pii detect` and `klue pii eval`: PII detection for users outside a recipe.

Top-level imports stay light (click only): `klue --help` imports this module.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from pipeline import io


@click.group()
def pii() -> None:
    """Korean PII detection (presidio + Korean recognizers + MeCab names), offline."""


@pii.command()
@click.argument("input_path", metavar="IN.jsonl", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--output", "-o", "output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="JSONL: each input record plus pii_spans [{start, end, type, score}] (end exclusive)")
@click.option("--text-field", default="text", show_default=True, help="field holding the text")
@click.option("--threshold", default=0.4, show_default=True, type=float, help="minimum span score")
def detect(input_path: Path, output: Path, text_field: str, threshold: float) -> None:
    """Detect PII spans in every record of IN.jsonl."""
    from tqdm.auto import tqdm

    from corpora.pii.engine import PiiDetector
    from corpora.readers.jsonl import iter_text_records

    det = PiiDetector(threshold=threshold)
    n = n_spans = 0
    try:
        with io.atomic_file(output) as fout:
            for rec in tqdm(iter_text_records(input_path, text_field), desc="pii detect", unit="rec"):
                spans = det.detect(rec[text_field])
                rec["pii_spans"] = [s.to_json() for s in spans]
                fout.write(json.dumps(rec, ensure_ascii=False) + "\n")
                n += 1
                n_spans += len(spans)
    except ValueError as e:  # a bad line: nothing is written (the atomic file is discarded)
        raise click.ClickException(str(e)) from None
    click.echo(f"{n} records, {n_spans} spans -> {output}", err=True)


@pii.command(name="eval")
@click.argument("gold", metavar="GOLD.jsonl", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--threshold", default=0.4, show_default=True, type=float, help="minimum span score")
def eval_(gold: Path, fmt: str, threshold: float) -> None:
    """Precision, recall and F1 per type and overall against gold spans ({"text", "spans": [{label, start,
    end}]}); a prediction counts when it overlaps a gold span of the same type."""
    from corpora.pii.engine import PiiDetector
    from corpora.pii.evaluate import evaluate_file, format_table

    try:
        res = evaluate_file(gold, PiiDetector(threshold=threshold))
    except ValueError as e:
        raise click.ClickException(str(e)) from e
    if fmt == "json":
        click.echo(json.dumps(res, ensure_ascii=False, indent=1, sort_keys=True))
    else:
        click.echo(format_table(res))
