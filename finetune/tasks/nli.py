"""KLUE-NLI: premise/hypothesis pairs, 3 labels, accuracy.

Reference: KLUE-baseline `klue_baseline/data/klue_nli.py` (label order entailment, contradiction, neutral;
the label is `gold_label`) and `run_all.sh` (lr 5e-5, 5 epochs, batch 32, warmup 0.1, max length 128).
"""

from __future__ import annotations

from typing import Any, ClassVar

from finetune.example_stats import ExampleStats, accuracy_stats
from finetune.metrics import accuracy
from finetune.records import Column, Example, TaskEntry, require
from finetune.tasks.base import ClassificationTask, DataFiles, Hyperparams, klue_published

# KLUE-baseline's order. The HF `klue`/`nli` copy uses entailment, neutral, contradiction.
NLI_LABELS = ["entailment", "contradiction", "neutral"]


class NliTask(ClassificationTask):
    name: ClassVar[str] = "nli"
    defaults: ClassVar[Hyperparams] = Hyperparams(learning_rate=5e-5, batch_size=32, max_length=128, epochs=5)
    files: ClassVar[DataFiles] = DataFiles("nli", "klue-nli-v1*_train.json", "klue-nli-v1*_dev.json", "nli")
    labels = NLI_LABELS

    def parse_record(self, rec: dict, where: str) -> Example:
        return {"guid": require(rec, "guid", str, where), "premise": require(rec, "premise", str, where),
                "hypothesis": require(rec, "hypothesis", str, where),
                "label": self.label_index(rec, "gold_label", where)}

    def from_hf(self, row: dict, features: Any) -> dict:
        rec = super().from_hf(row, features)
        rec["gold_label"] = rec.pop("label")  # HF names the field `label`; the official files `gold_label`
        return rec

    def texts(self, ex: Example) -> tuple[str, str | None]:
        return ex["premise"], ex["hypothesis"]

    def compute_metrics(self, preds: list[dict], golds: list[Example]) -> dict[str, Any]:
        p, g = self.gold_and_pred_indices(preds, golds)
        return {"accuracy": accuracy(p, g)}

    def main_metric_stats(self, preds: list[dict], golds: list[Example]) -> ExampleStats | None:
        """Accuracy: one correct flag per pair (JNLI inherits it)."""
        if self.main_metric != "accuracy":
            return None
        p, g = self.gold_and_pred_indices(preds, golds)
        return accuracy_stats([a == b for a, b in zip(p, g, strict=True)])

    entry = TaskEntry("Natural language inference (KLUE-NLI)", ("accuracy",), "accuracy", columns=(
        Column("accuracy", "NLI Acc", klue_published(73.20, 77.33, 85.93, 77.17, 85.63, 81.63, 79.12, 84.97, 89.43)),))
