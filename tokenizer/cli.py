"""`klue tokenizer-report`: fidelity/efficiency of exported tokenizers side by side (tokenizer/fidelity.py).

Top-level imports stay light (click only): `klue --help` imports this module.
"""

from __future__ import annotations

from pathlib import Path

import click

from pipeline.recipe import DEFAULT_LANGUAGE
from tokenizer.fidelity import report, to_markdown


@click.command("tokenizer-report")
@click.argument("tokenizer_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--texts", "texts", multiple=True, required=True, type=click.Path(exists=True, dir_okay=False),
              help="evaluation file (KLUE dev json/tsv, or one text per line); repeat for several")
@click.option("--label", "labels", multiple=True, help="column name per TOKENIZER_DIR (default: the path)")
@click.option("--max-texts", type=int, default=None, help="read at most N texts per file")
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None, help="write here, not stdout")
@click.option("--language", default=DEFAULT_LANGUAGE, show_default=True,
              help="the texts' language: its analyzer gives the morpheme boundaries (corpora/lang)")
def tokenizer_report(tokenizer_dirs: tuple[str, ...], texts: tuple[str, ...], labels: tuple[str, ...],
                     max_texts: int | None, fmt: str, output: str | None, language: str) -> None:
    """Morpheme alignment, tokens per eojeol/char, UNK rate and vocabulary coverage of TOKENIZER_DIR...

    \b
    e.g. klue tokenizer-report W/vocab/<mecab-key>/tokenizer W/vocab/<plain-key>/tokenizer \\
           --label morpheme --label plain --texts $KLUE_DATA_DIR/klue/nli/klue-nli-v1.1_dev.json
    """
    import json

    if labels and len(labels) != len(tokenizer_dirs):
        raise click.UsageError(f"{len(labels)} --label for {len(tokenizer_dirs)} tokenizer folders")
    for d in tokenizer_dirs:
        if not (Path(d) / "tokenizer_config.json").is_file():
            raise click.UsageError(f"{d}: no tokenizer_config.json (not a save_pretrained tokenizer folder)")
    names = labels or tokenizer_dirs
    try:
        rep = report(dict(zip(names, tokenizer_dirs, strict=True)), list(texts), max_texts, language=language)
    except ValueError as e:
        raise click.ClickException(str(e)) from e
    out = json.dumps(rep, ensure_ascii=False, indent=1, sort_keys=True) + "\n" if fmt == "json" else to_markdown(rep)
    if output:
        Path(output).write_text(out, encoding="utf-8")
    else:
        click.echo(out, nl=False)
