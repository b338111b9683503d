"""What the JGLUE tasks share: their files, their ids, and where their defaults come from.

JGLUE (Kurihara et al., LREC 2022; yahoojapan/JGLUE, here at commit 6f071c09316baae89c3d083a90985b4b1cb9968c,
the v1.3 release the shared data was copied from) ships `datasets/<task>-v1.3/{train,valid,test}-v1.3.json`.
JSTS, JNLI and JCommonsenseQA files are JSON *lines* despite the suffix; JSQuAD is one SQuAD-layout object.
`--data-dir` is the folder holding the `<task>-v1.3/` folders (`$KLUE_DATA_DIR/ja/jglue`) or one task folder.
The shared copy has no JNLI or JSQuAD train file: `--split auto` then trains on 80 % of `valid` (split by the
hash of the JGLUE id; JSQuAD by article) and says so in metrics.json.

Defaults. JGLUE's baseline fine-tunes with transformers v4.9.2 example scripts patched by
`fine-tuning/patch/transformers-4.9.2_jglue-1.3.0.patch`; `fine-tuning/README.md` gives the settings: a learning
rate searched over {5e-5, 3e-5, 2e-5} and epochs over {3, 4} on dev, warmup ratio 0.1, max length 512
(MARC-ja), 128 (JSTS, JNLI), 384 (JSQuAD), 64 (JCommonsenseQA), and one command per script: `run_glue.py`
(batch 32, lr 5e-5, 4 epochs), `run_squad.py` (batch 32, lr 5e-5, 3 epochs) and `run_swag.py` (batch 64, lr
5e-5, 4 epochs). Each task's defaults are its command's values; AdamW (eps 1e-8, weight decay 0) with a linear
schedule and gradient clipping at 1.0 are those scripts' defaults and this suite's.

One difference holds for every JGLUE task: JGLUE's scripts keep the model after the last epoch (HF `Trainer`
without `load_best_model_at_end`; `run_squad.py` evaluates once at the end), while this suite evaluates after
every epoch and keeps the best checkpoint on the evaluation split, as for KLUE.
"""

from __future__ import annotations

from pathlib import Path

from finetune.records import DataError, Example, read_records, require
from finetune.tasks.base import Task, published_scores

JGLUE_COMMIT = "6f071c09316baae89c3d083a90985b4b1cb9968c"


# The models of JGLUE's published dev scores, the dev-set table of the JGLUE README (github.com/yahoojapan/JGLUE,
# README.md at `JGLUE_COMMIT`, the v1.3 release the shared data comes from), in the order the results tables list
# them. XLM-R keeps the KLUE table's model names: it is the same checkpoint.
JGLUE_MODELS = ("Tohoku BERT-base", "Tohoku BERT-base (char)", "Tohoku BERT-large", "NICT BERT-base",
                "Waseda RoBERTa-base", "Waseda RoBERTa-large (s128)", "Waseda RoBERTa-large (s512)", "XLM-R-base",
                "XLM-R-large")


def jglue_published(*scores: float) -> dict[str, float]:
    """One column of JGLUE's README table (`JGLUE_MODELS`, in that order), ×100 to match the metric keys here.
    Seven scores leave XLM-R out, where the README has "-" (JSQuAD: "excluded from the JSQuAD evaluation").
    Those numbers come from JGLUE's train files; the shared copy has none for JNLI and JSQuAD, so runs there use
    a dev split and are not comparable."""
    models = JGLUE_MODELS if len(scores) != len(JGLUE_MODELS) - 2 else JGLUE_MODELS[:-2]
    return published_scores(models, scores, "JGLUE README, dev set")


class JsonLinesTask(Task):
    """A task whose official files are JSON lines (JSTS, JNLI, JCommonsenseQA): every record is parsed with
    `PATH:LINE` as its place, so an error names the line. A JSON list (a converted copy) is read too, its
    records named `PATH: record I` (`finetune.records.read_records`)."""

    def read_file(self, path: Path) -> list[Example]:
        return [self.parse_record(rec, where) for where, rec in read_records(path)]


def jglue_id(rec: dict, key: str, where: str) -> str:
    """A JGLUE record's id as the example guid: `sentence_pair_id` (a string in JSTS / JNLI), `q_id` (an integer
    in JCommonsenseQA) or the JSQuAD question `id`. The dev split hashes it and predictions are keyed by it, so
    an integer id becomes its decimal string ("8939")."""
    value = require(rec, key, (str, int), where)
    if isinstance(value, str) and not value.strip():
        raise DataError(f"{where}: field {key!r} is empty")
    return str(value)
