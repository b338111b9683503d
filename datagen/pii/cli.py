"""`klue pii gen`: the PII evaluation set's generator as a subcommand of the product's `klue pii` group.

The generator is the workshop's (datagen/), which nothing in the product packages imports, so the command is
not wired in corpora/pii/cli.py: it is declared as the entry point `pii.gen` of the group `klue.commands`
(pyproject.toml), and the `pii` group offers the commands declared for it (pipeline/plugins.py). Imports stay
light (click only): listing `klue pii --help` imports this module; the generator is imported when it runs.
"""

from __future__ import annotations

from pathlib import Path

import click

from pipeline.recipe import DEFAULT_LANGUAGE


@click.command()
@click.argument("out_dir", metavar="OUT_DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--dev", "n_dev", default=1000, show_default=True, type=click.IntRange(min=0))
@click.option("--heldout", "n_heldout", default=1500, show_default=True, type=click.IntRange(min=0))
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--language", "-l", type=click.Choice(("ko", "ja")), default=DEFAULT_LANGUAGE, show_default=True,
              help="the language of the documents: ko (Korean, datagen/pii/ko.py), ja (Japanese, datagen/pii/ja.py)")
def gen(out_dir: Path, n_dev: int, n_heldout: int, seed: int, language: str) -> None:
    """Write the independent evaluation set (OUT_DIR/dev.jsonl, OUT_DIR/heldout.jsonl): synthetic documents
    of seven genres built from the official formats, with gold spans; the held-out part draws its open-class
    values (names, roads, buildings) from pools the development part never uses. `--language ja`: ten
    Japanese genres, labels of the Japanese detector (MY_NUMBER, CORPORATE_NUMBER, ...)."""
    if language == "ja":
        from datagen.pii.ja import write_split
    else:
        from datagen.pii.ko import write_split

    paths = write_split(out_dir, n_dev=n_dev, n_heldout=n_heldout, seed=seed)
    for split, p in paths.items():
        click.echo(f"{split}: {p}", err=True)
