"""The sample data shipped inside the package, for `klue run` with no recipe: 4.7 MB of real Korean text from seven
openly licensed sources (`corpus/`, with synthetic PII, junk, copies and benchmark sentences planted) and the eight
KLUE tasks in their official layouts (`klue/`: real KLUE v1.1 examples for YNAT, STS, NLI, NER, RE and DP; MRC and
WoS generated). Built from the project's shared data by `python -m datagen.sample` (its docstring says what each
file holds); LICENSES.md gives every file's source, licence and attribution, manifest.json what was planted where.
Scores on it show what pretraining buys a tiny model on small real sets; they are not comparable with KLUE's."""

from __future__ import annotations

from pathlib import Path

SAMPLE_DIR: Path = Path(__file__).resolve().parent


def corpus_dir() -> Path:
    """The raw corpus: kowiki.txt, petitions.jsonl, nsmc.tsv, news_comments.txt, parallel_news.txt,
    chatbot_qa.csv, law/*.txt."""
    return SAMPLE_DIR / "corpus"


def klue_dir() -> Path:
    """The KLUE data folder (ynat/, sts/, nli/, ner/, re/, dp/, mrc/, wos/), what `--data-dir` takes."""
    return SAMPLE_DIR / "klue"


__all__ = ["SAMPLE_DIR", "corpus_dir", "klue_dir"]
