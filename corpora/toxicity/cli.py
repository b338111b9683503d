"""`klue toxicity train`, `klue toxicity eval` and `klue toxicity score`: the toxicity tagger outside a recipe.

Top-level imports stay light (click only): `klue --help` imports this module.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import click

from corpora.readers.jsonl import iter_text_records
from corpora.toxicity.data import read_background, read_beep, split_path
from corpora.toxicity.evaluate import evaluate, format_table
from corpora.toxicity.model import ToxicityModel
from corpora.toxicity.model import train as fit
from corpora.toxicity.tagger import Level, score_documents
from pipeline import io
from pipeline.recipe import DEFAULT_LANGUAGE

BACKGROUND_HELP = ("a UTF-8 text file of clean prose (e.g. $KLUE_DATA_DIR/corpus/kowiki_sections.txt): its first "
                   "--background-sentences sentences are added to training as `none`")
_language_option = click.option("--language", default=DEFAULT_LANGUAGE, show_default=True,
                                help="the language of the texts: how they are split into sentences (corpora/lang)")
DATA_HELP = ("a BEEP! TSV, or a folder with beep_train.tsv and beep_dev.tsv (the shared data's toxicity/ folder: "
             "$KLUE_DATA_DIR/toxicity)")


@click.group()
def toxicity() -> None:
    """Korean toxicity tagger: TF-IDF character n-grams + logistic regression trained on BEEP!

    \b
    Examples:
      klue toxicity train --data $KLUE_DATA_DIR/toxicity --out models/toxicity
      klue toxicity train --data $KLUE_DATA_DIR/toxicity --out models/toxicity-bg \\
          --background $KLUE_DATA_DIR/corpus/kowiki_sections.txt   # + 4,000 encyclopedia sentences as none
      klue toxicity eval --data $KLUE_DATA_DIR/toxicity                 # F1 on dev vs two baselines
      klue toxicity score docs.jsonl --model models/toxicity -o docs.toxicity.jsonl
    """


@toxicity.command()
@click.option("--data", required=True, type=click.Path(exists=True, path_type=Path), help=DATA_HELP)
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="model folder to write (model.json + weights.safetensors; replaced if present)")
@click.option("--seed", default=42, show_default=True, type=int)
@click.option("--background", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help=BACKGROUND_HELP)
@click.option("--background-sentences", default=4000, show_default=True, type=click.IntRange(min=1))
@_language_option
def train(data: Path, out: Path, seed: int, background: Path | None, background_sentences: int,
          language: str) -> None:
    """Train on the train split of BEEP! and save the model (no pickle)."""
    try:
        examples = read_beep(split_path(data, "train"))
        bg = read_background(background, background_sentences, language=language) if background else []
        model = fit(examples, seed=seed, background=bg)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    model.save(out)
    click.echo(f"{len(examples)} comments, {model.vocabulary_size} n-grams -> {out}", err=True)


@toxicity.command(name="eval")
@click.option("--data", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="folder with beep_train.tsv and beep_dev.tsv")
@click.option("--model", "model_dir", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="a saved model; default: train one on beep_train.tsv with --seed")
@click.option("--seed", default=42, show_default=True, type=int)
@click.option("--background", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="without --model: " + BACKGROUND_HELP)
@click.option("--background-sentences", default=4000, show_default=True, type=click.IntRange(min=1))
@click.option("--threshold", default=0.5, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="binary view: the classifier calls a comment toxic when its score is above this")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@_language_option
def eval_(data: Path, model_dir: Path | None, seed: int, background: Path | None, background_sentences: int,
          threshold: float, fmt: str, language: str) -> None:
    """Macro-F1 and per-class F1 on BEEP! dev, 3-class and binary (toxic vs none), for the classifier, the
    majority class and the keyword stems."""
    try:
        train_ex = read_beep(split_path(data, "train"))
        dev_ex = read_beep(split_path(data, "dev"))
        if model_dir:
            model = ToxicityModel.load(model_dir)
        else:
            bg = read_background(background, background_sentences, language=language) if background else []
            model = fit(train_ex, seed=seed, background=bg)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    res = evaluate(model, train_ex, dev_ex, threshold=threshold)
    click.echo(json.dumps(res, ensure_ascii=False, indent=1, sort_keys=True) if fmt == "json" else format_table(res),
               nl=fmt == "json")


@toxicity.command()
@click.argument("input_path", metavar="IN.jsonl", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--model", "model_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--output", "-o", "output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="JSONL: each input record plus toxicity {score, hate, offensive, start, end}")
@click.option("--text-field", default="text", show_default=True, help="field holding the text")
@click.option("--level", type=click.Choice(["sentence", "document"]), default="sentence", show_default=True,
              help="sentence: the score of the most toxic sentence (its span in start, end); document: the text")
@_language_option
def score(input_path: Path, model_dir: Path, output: Path, text_field: str, level: str, language: str) -> None:
    """Score every record of IN.jsonl."""
    try:
        model = ToxicityModel.load(model_dir)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    try:
        recs = list(iter_text_records(input_path, text_field))
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    scored = score_documents(model, [r[text_field] for r in recs], cast(Level, level), language)
    with io.atomic_file(output) as fout:
        for rec, s in zip(recs, scored, strict=True):
            rec["toxicity"] = {"score": round(s.score, 6), "hate": round(s.hate, 6),
                               "offensive": round(s.offensive, 6), "start": s.start, "end": s.end}
            fout.write(json.dumps(rec, ensure_ascii=False) + "\n")
    click.echo(f"{len(recs)} records -> {output}", err=True)
