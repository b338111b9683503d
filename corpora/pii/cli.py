"""`klue pii detect` and `klue pii eval`: PII detection for users outside a recipe.

Top-level imports stay light (click only): `klue --help` imports this module. `klue pii gen` (the evaluation
set's generator) is the workshop's (datagen/pii/cli.py), which the product does not import: the group picks up
the commands installed add-ons declare for it (entry points named `pii.*`, pipeline/plugins.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from corpora.pii.evaluate import KoPii, PresidioShipped, evaluate_file, format_side_by_side
from corpora.pii.types import (
    PACKS,  # a light module: no presidio import
    default_types,
)
from corpora.readers.jsonl import iter_text_records
from pipeline import io
from pipeline.plugins import PluginGroup
from pipeline.recipe import DEFAULT_LANGUAGE

_language_option = click.option("--language", "-l", type=click.Choice(tuple(PACKS)), default=DEFAULT_LANGUAGE,
                                show_default=True,
                                help="the PII pack: ko (Korean), ja (Japanese; needs the `ja` extra)")


@click.group(cls=PluginGroup)
def pii() -> None:
    """PII detection (presidio + each language's recognizers + MeCab names), offline: Korean and Japanese."""


@pii.command()
@click.argument("input_path", metavar="IN.jsonl", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--output", "-o", "output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="JSONL: each input record plus pii_spans [{start, end, type, score, recognizer}] (end exclusive)")
@click.option("--text-field", default="text", show_default=True, help="field holding the text")
@click.option("--threshold", default=0.4, show_default=True, type=float, help="minimum span score")
@_language_option
def detect(input_path: Path, output: Path, text_field: str, threshold: float, language: str) -> None:
    """Detect PII spans in every record of IN.jsonl."""
    from tqdm.auto import tqdm

    # lazy: presidio and spaCy (corpora.pii.engine): `klue pii --help` stays light
    from corpora.pii.engine import PiiDetector
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
@click.option("--baseline", "baselines", type=click.Choice(["presidio", "ko-pii", "none"]), multiple=True,
              help="detectors scored side by side with ours (repeatable): presidio's predefined recognizers as "
                   "shipped, ko-pii (Korean only; the `bench` extra). Default: both, ko-pii where installed; "
                   "none: ours alone")
@click.option("--optional-types", default="", metavar="T,T", help="also detect these off-by-default types "
              "(Korean: POSTAL_CODE, DT_BIRTH, AGE)")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--threshold", default=0.4, show_default=True, type=float, help="minimum span score")
@_language_option
def eval_(gold: tuple[Path, ...], baselines: tuple[str, ...], optional_types: str, fmt: str, threshold: float,
          language: str) -> None:
    """Precision, recall and F1 per type against gold spans ({"text", "spans": [{label, start, end}]}) under
    two match rules (overlap; >= 80 % of the gold span's characters covered), and throughput (CPU seconds of
    this process), per gold file, for the language's detector and the baselines. JSON: {file: {detector:
    scores}}."""
    # lazy: presidio and spaCy (corpora.pii.engine): `klue pii --help` stays light
    from corpora.pii.engine import PiiDetector
    extra = tuple(t.strip() for t in optional_types.split(",") if t.strip())
    try:
        detectors: dict = {"klue-pipeline": PiiDetector(types=default_types(language) + extra, threshold=threshold,
                                                        language=language)}
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--optional-types") from None
    except ModuleNotFoundError as e:
        raise click.ClickException(str(e)) from None
    asked = set(baselines) or {"presidio", "ko-pii"}
    if "none" in asked and len(asked) > 1:
        raise click.BadParameter("none excludes the other baselines", param_hint="--baseline")
    if "presidio" in asked:
        detectors["presidio (shipped)"] = PresidioShipped(threshold=threshold, language=language)
    if "ko-pii" in asked:
        try:
            peer = KoPii(types=default_types(language) + extra)
        except ModuleNotFoundError as e:
            if baselines:  # asked for by name: an error; by default: said, and left out
                raise click.ClickException(str(e)) from None
            click.echo(f"{e}; ko-pii left out", err=True)
        else:
            if peer.language == language:
                detectors["ko-pii (shipped)"] = peer
            elif baselines:
                raise click.BadParameter(f"ko-pii detects {peer.language} only, not {language!r}",
                                         param_hint="--baseline")
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
