"""The sample data shipped inside the package, for `klue run` with no recipe: a small raw Korean corpus
(`corpus/`) and the eight KLUE tasks in their official layouts (`klue/`), written by
`python -m pipeline.sample.make_sample` (see its docstring for what each file holds). Scores on it only show
that the code learns; they are not comparable with KLUE's."""

from __future__ import annotations

from pathlib import Path

SAMPLE_DIR: Path = Path(__file__).resolve().parent


def corpus_dir() -> Path:
    """The raw corpus: news.jsonl, forum.txt, wiki.txt, reviews.tsv, qa.csv, official/*.txt."""
    return SAMPLE_DIR / "corpus"


def klue_dir() -> Path:
    """The KLUE data folder (ynat/, sts/, nli/, ner/, re/, dp/, mrc/, wos/), what `--data-dir` takes."""
    return SAMPLE_DIR / "klue"


__all__ = ["SAMPLE_DIR", "corpus_dir", "klue_dir"]
