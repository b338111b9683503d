"""`klue pii detect` and `klue pii eval`: PII detection for users outside a recipe.

Top-level imports stay light (click only): `klue --help` imports this module.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from corpora.pii.types import TYPES_BY_LANGUAGE  # a light module: no presidio import
from pipeline import io

_language_option = click.option("--language", "-l", type=click.Choice(tuple(TYPES_BY_LANGUAGE)), default="ko",
                                show_default=True,
                                help="the PII pack: ko (Korean), ja (Japanese; needs the `ja` extra)")


@click.group()
def pii() -> None:
    """PII detection (presidio + each language's recognizers + MeCab names), offline: Korean and Japanese."""


@pii.command()
@click.argument("input_path", metavar="IN.jsonl", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--output", "-o", "output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="JSONL: each input record plus pii_spans [{start, end, type, score}] (end exclusive)")
@click.option("--text-field", default="text", show_default=True, help="field holding the text")
@click.option("--threshold", default=0.4, show_default=True, type=float, help="minimum span score")
@_language_option
def detect(input_path: Path, output: Path, text_field: str, threshold: float, language: str) -> None:
    """Detect PII spans in every record of IN.jsonl."""
    from tqdm.auto import tqdm

    from corpora.pii.engine import PiiDetector
    from corpora.readers.jsonl import iter_text_records

    try:
        det = PiiDetector(threshold=threshold, language=language)
    except ModuleNotFoundError as e:  # the `ja` extra (unidic-lite) is not installed
        raise click.ClickException(str(e)) from None
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
@click.argument("gold", metavar="GOLD.jsonl...", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--baseline", type=click.Choice(["none", "presidio"]), default="presidio", show_default=True,
              help="also score presidio's predefined recognizers as shipped, side by side")
@click.option("--optional-types", default="", metavar="T,T", help="also detect these off-by-default types "
              "(Korean: POSTAL_CODE, DT_BIRTH, AGE)")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--threshold", default=0.4, show_default=True, type=float, help="minimum span score")
@_language_option
def eval_(gold: tuple[Path, ...], baseline: str, optional_types: str, fmt: str, threshold: float,
          language: str) -> None:
    """Precision, recall and F1 per type against gold spans ({"text", "spans": [{label, start, end}]}) under
    two match rules (overlap; >= 80 % of the gold span's characters covered), per gold file, for the
    language's detector and presidio's own recognizers. JSON: {file: {detector: scores}}."""
    from corpora.pii.engine import PiiDetector
    from corpora.pii.evaluate import PresidioShipped, evaluate_file, format_side_by_side
    from corpora.pii.types import default_types

    extra = tuple(t.strip() for t in optional_types.split(",") if t.strip())
    try:
        detectors: dict = {"klue-pipeline": PiiDetector(types=default_types(language) + extra, threshold=threshold,
                                                        language=language)}
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--optional-types") from None
    except ModuleNotFoundError as e:
        raise click.ClickException(str(e)) from None
    if baseline == "presidio":
        detectors["presidio (shipped)"] = PresidioShipped(threshold=threshold, language=language)
    results: dict[str, dict[str, dict]] = {}
    for path in gold:
        try:
            results[str(path)] = {name: evaluate_file(path, det) for name, det in detectors.items()}
        except ValueError as e:
            raise click.ClickException(str(e)) from e
    if fmt == "json":
        click.echo(json.dumps(results, ensure_ascii=False, indent=1, sort_keys=True))
    else:
        click.echo(format_side_by_side(results))


@pii.command()
@click.argument("out_dir", metavar="OUT_DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--dev", "n_dev", default=1000, show_default=True, type=click.IntRange(min=0))
@click.option("--heldout", "n_heldout", default=1500, show_default=True, type=click.IntRange(min=0))
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--language", "-l", type=click.Choice(("ko", "ja")), default="ko", show_default=True,
              help="the language of the documents: ko (Korean, corpora/pii/evalgen.py), ja (Japanese, "
                   "corpora/pii/ja/evalgen.py)")
def gen(out_dir: Path, n_dev: int, n_heldout: int, seed: int, language: str) -> None:
    """Write the independent evaluation set (OUT_DIR/dev.jsonl, OUT_DIR/heldout.jsonl): synthetic documents
    of seven genres built from the official formats, with gold spans; the held-out part draws its open-class
    values (names, roads, buildings) from pools the development part never uses. `--language ja`: ten
    Japanese genres, labels of the Japanese detector (MY_NUMBER, CORPORATE_NUMBER, ...)."""
    if language == "ja":
        from corpora.pii.ja.evalgen import write_split
    else:
        from corpora.pii.evalgen import write_split

    paths = write_split(out_dir, n_dev=n_dev, n_heldout=n_heldout, seed=seed)
    for split, p in paths.items():
        click.echo(f"{split}: {p}", err=True)
