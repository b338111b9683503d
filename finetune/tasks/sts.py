"""KLUE-STS: sentence-pair similarity as regression on `labels["real-label"]` (0-5); Pearson r and binary F1.

Reference: KLUE-baseline `klue_baseline/data/klue_sts.py` (the target is `real-label`, task mode regression)
and `run_all.sh` (lr 5e-5, 4 epochs, batch 32, warmup 0.1, weight decay 0, max length 128). The regression
head is `AutoModelForSequenceClassification` with one output and MSE loss.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from finetune.example_stats import ExampleStats, pearson_stats
from finetune.metrics import pearson_r, sts_binary_f1
from finetune.records import Column, DataError, Example, Feature, TaskEntry, require
from finetune.tasks.base import DataFiles, Hyperparams, Task, klue_published, sequence_classifier


class StsTask(Task):
    name: ClassVar[str] = "sts"
    defaults: ClassVar[Hyperparams] = Hyperparams(learning_rate=5e-5, batch_size=32, max_length=128, epochs=4)
    files: ClassVar[DataFiles] = DataFiles("sts", "klue-sts-v1*_train.json", "klue-sts-v1*_dev.json", "sts")

    def parse_record(self, rec: dict, where: str) -> Example:
        labels = require(rec, "labels", dict, where)
        score = require(labels, "real-label", (int, float), f"{where} labels")
        if not 0.0 <= score <= 5.0:
            raise DataError(f"{where}: labels.real-label {score} is outside 0..5")
        return {"guid": require(rec, "guid", str, where), "sentence1": require(rec, "sentence1", str, where),
                "sentence2": require(rec, "sentence2", str, where), "label": float(score)}

    def encode(self, examples: list[Example], tokenizer: Any, max_length: int) -> list[Feature]:
        enc = tokenizer([e["sentence1"] for e in examples], [e["sentence2"] for e in examples],
                        truncation=True, max_length=max_length)
        return [{"input_ids": enc["input_ids"][i], "attention_mask": enc["attention_mask"][i],
                 "labels": float(ex["label"]), "example_index": i} for i, ex in enumerate(examples)]

    def build_model(self, model_dir: Path, tokenizer: Any, random_init: bool,
                    hp: Hyperparams | None = None) -> Any:
        return sequence_classifier(model_dir, tokenizer, random_init, labels=None,
                                   pooling=hp.pooling if hp else None)

    def predictions(self, outputs: np.ndarray, features: list[Feature], examples: list[Example]) -> list[dict]:
        scores = np.asarray(outputs, dtype=float).reshape(len(features), -1)[:, 0]
        return [{"guid": examples[f["example_index"]]["guid"], "score": float(s)} for f, s in zip(features, scores, strict=True)]

    def check_prediction(self, rec: dict, where: str) -> dict:
        require(rec, "guid", str, where)
        score = require(rec, "score", (int, float), where)
        if not math.isfinite(score):
            raise DataError(f"{where}: score must be a finite number, got {score!r}")
        return rec

    @staticmethod
    def scores_and_labels(preds: list[dict], golds: list[Example]) -> tuple[list[float], list[float]]:
        """Predicted and gold similarity, pair by pair: what both KLUE-STS and JSTS score."""
        return [float(x["score"]) for x in preds], [x["label"] for x in golds]

    def compute_metrics(self, preds: list[dict], golds: list[Example]) -> dict[str, Any]:
        p, g = self.scores_and_labels(preds, golds)
        return {"pearsonr": pearson_r(p, g), "f1": sts_binary_f1(p, g)}

    def main_metric_stats(self, preds: list[dict], golds: list[Example]) -> ExampleStats | None:
        """Pearson r from the sums of 1, x, y, x², y², xy (JSTS inherits it: its main metric is Pearson too)."""
        if self.main_metric != "pearsonr":
            return None
        return pearson_stats(*self.scores_and_labels(preds, golds))

    entry = TaskEntry("Semantic textual similarity (KLUE-STS)", ("pearsonr", "f1"), "pearsonr", columns=(
        Column("pearsonr", "STS r", klue_published(84.66, 89.16, 92.97, 88.61, 92.46, 90.85, 90.50, 92.41, 93.37)),
        Column("f1", "STS F1", klue_published(76.00, 82.01, 85.86, 81.07, 84.84, 82.84, 83.92, 84.60, 85.89))))
