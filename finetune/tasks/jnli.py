"""JGLUE JNLI: premise / hypothesis pairs, 3 labels, accuracy.

The task is KLUE-NLI's (`NliTask`: sentence-pair classification, accuracy) with JGLUE's records: `{"sentence_pair_id",
"yjcaptions_id", "sentence1" (premise), "sentence2" (hypothesis), "label": "entailment" | "contradiction" |
"neutral"}`, one per line; the guid is `sentence_pair_id`.

Label order: contradiction, entailment, neutral. JGLUE's data stores names, never ids; the ids come from its
baseline, `run_glue.py --metric_name wnli` with `--train_file` and no `--task_name`, which takes
`label_list = raw_datasets["train"].unique("label"); label_list.sort()` (transformers v4.9.2
`examples/pytorch/text-classification/run_glue.py`, left alone by JGLUE's patch), i.e. alphabetical order. The
README's prose lists "entailment, contradiction, and neutral", and the HF copy (shunk031/JGLUE) uses that order
for its ClassLabel ids; such ids are mapped back by name (`from_hf`), so both sources give the same examples.
The order decides only which output row means which label (and which label wins an exact tie: the first).

Defaults (`finetune.tasks.jglue`): lr 5e-5, batch 32, 4 epochs, warmup 0.1, max length 128, JGLUE's
`run_glue.py` settings.
"""

from __future__ import annotations

from typing import Any, ClassVar

from finetune.records import Column, Example, TaskEntry, require
from finetune.tasks.base import ClassificationTask, DataFiles, Hyperparams
from finetune.tasks.jglue import JsonLinesTask, jglue_id, jglue_published
from finetune.tasks.nli import NliTask

JNLI_LABELS = ["contradiction", "entailment", "neutral"]


class JnliTask(JsonLinesTask, NliTask):
    name: ClassVar[str] = "jnli"
    defaults: ClassVar[Hyperparams] = Hyperparams(learning_rate=5e-5, batch_size=32, max_length=128, epochs=4,
                                                  warmup_ratio=0.1, evals_per_epoch=1, patience=None)
    files: ClassVar[DataFiles] = DataFiles("jnli-v1.3", "train-v1*.json", "valid-v1*.json", "JNLI")
    labels = JNLI_LABELS
    # NLI's metric (`compute_metrics`: accuracy), JGLUE's title and published column
    entry = TaskEntry("Natural language inference (JGLUE JNLI)", ("accuracy",), "accuracy", columns=(
        Column("accuracy", "JNLI Acc", jglue_published(90.6, 89.6, 90.5, 90.9, 90.0, 93.1, 93.4, 89.8, 92.4)),))

    # The dev split (JGLUE ships no JNLI train file) keeps each image's pairs on one side: pairs are built from
    # the captions of one YJ Captions image (`yjcaptions_id` = image id - caption id - caption id), and split by
    # pair, 392 of 473 evaluation pairs shared a caption sentence with a training pair (measured on valid-v1.3).
    split_unit: ClassVar[str] = "image (yjcaptions_id)"

    def split_key(self, ex: Example) -> str:
        return str(ex["image"])

    def parse_record(self, rec: dict, where: str) -> Example:
        guid = jglue_id(rec, "sentence_pair_id", where)
        where = f"{where} (sentence_pair_id {guid})"
        image = require(rec, "yjcaptions_id", str, where).split("-", 1)[0]
        return {"guid": guid, "premise": require(rec, "sentence1", str, where),
                "hypothesis": require(rec, "sentence2", str, where), "label": self.label_index(rec, "label", where),
                "image": image}

    def from_hf(self, row: dict, features: Any) -> dict:
        # the HF copy names the field `label`, as JGLUE's files do (KLUE-NLI's files say `gold_label`)
        return ClassificationTask.from_hf(self, row, features)
