"""JGLUE JSTS: sentence-pair similarity as regression on `label` (0-5); Pearson and Spearman correlation.

Everything but the reader and the metrics is KLUE-STS's (`StsTask`): the same regression head
(`AutoModelForSequenceClassification`, one output, MSE loss), the same features and the same prediction records
`{"guid", "score"}`. JGLUE's baseline is the same model: `run_glue.py --metric_name stsb` with a float label
makes transformers treat the task as regression (`num_labels=1`) and scores with the HF `glue`/`stsb` metric,
Pearson and Spearman (JGLUE `fine-tuning/README.md`; README "Baseline Scores" reports both). Pearson is the main
metric here (the first of the two JGLUE reports, and KLUE-STS's).

Record (one JSON object per line): `{"sentence_pair_id": "691", "yjcaptions_id": "127202-129817-129818",
"sentence1": ..., "sentence2": ..., "label": 4.4}`; the guid is `sentence_pair_id`.

Defaults (`finetune.tasks.jglue`): lr 5e-5, batch 32, 4 epochs, warmup 0.1 (the `run_glue.py` command of
JGLUE's `fine-tuning/README.md`), max length 128 (its table: "128 (JSTS, JNLI)").
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from finetune.metrics import pearson_r, spearman_r
from finetune.records import Column, DataError, Example, TaskEntry, require
from finetune.tasks.base import DataFiles, Hyperparams
from finetune.tasks.jglue import JsonLinesTask, jglue_id, jglue_published
from finetune.tasks.sts import StsTask


class JstsTask(JsonLinesTask, StsTask):
    name: ClassVar[str] = "jsts"
    defaults: ClassVar[Hyperparams] = Hyperparams(learning_rate=5e-5, batch_size=32, max_length=128, epochs=4,
                                                  warmup_ratio=0.1, evals_per_epoch=1, patience=None)
    files: ClassVar[DataFiles] = DataFiles("jsts-v1.3", "train-v1*.json", "valid-v1*.json", "JSTS")

    def parse_record(self, rec: dict, where: str) -> Example:
        guid = jglue_id(rec, "sentence_pair_id", where)
        where = f"{where} (sentence_pair_id {guid})"
        score = require(rec, "label", (int, float), where)
        if not math.isfinite(score) or not 0.0 <= score <= 5.0:
            raise DataError(f"{where}: field 'label' = {score!r} is outside 0..5")
        return {"guid": guid, "sentence1": require(rec, "sentence1", str, where),
                "sentence2": require(rec, "sentence2", str, where), "label": float(score)}

    def compute_metrics(self, preds: list[dict], golds: list[Example]) -> dict[str, Any]:
        """JGLUE's pair for JSTS, Pearson and Spearman r (`run_glue.py --metric_name stsb`), where KLUE-STS has
        Pearson r and a binary F1."""
        p, g = self.scores_and_labels(preds, golds)
        return {"pearsonr": pearson_r(p, g), "spearmanr": spearman_r(p, g)}

    entry = TaskEntry("Semantic textual similarity (JGLUE JSTS)", ("pearsonr", "spearmanr"), "pearsonr", columns=(
        Column("pearsonr", "JSTS Pearson", jglue_published(90.9, 89.3, 91.3, 91.0, 91.3, 93.0, 92.6, 87.7, 91.8)),
        Column("spearmanr", "JSTS Spearman", jglue_published(86.8, 85.1, 87.2, 87.1, 87.3, 89.6, 89.2, 83.1, 88.4))))
