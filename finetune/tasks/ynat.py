"""YNAT (topic classification of news headlines): title only, 7 topics, macro F1.

Reference: KLUE-baseline `klue_baseline/data/ynat.py` (input is the title alone; label order below) and
`run_all.sh` (lr 5e-5, batch 32, warmup 0.1, max length 128; epochs unset there, so its default of 4).
"""

from __future__ import annotations

from typing import Any, ClassVar

from finetune.example_stats import ExampleStats, macro_f1_stats, per_class_counts
from finetune.metrics import macro_f1
from finetune.records import Column, Example, TaskEntry, require
from finetune.tasks.base import ClassificationTask, DataFiles, Hyperparams, klue_published

# KLUE-baseline's label order. The HF `klue`/`ynat` copy uses IT과학, 경제, 사회, 생활문화, 세계, 스포츠, 정치.
YNAT_LABELS = ["정치", "경제", "사회", "생활문화", "세계", "IT과학", "스포츠"]


class YnatTask(ClassificationTask):
    name: ClassVar[str] = "ynat"
    defaults: ClassVar[Hyperparams] = Hyperparams(learning_rate=5e-5, batch_size=32, max_length=128, epochs=4,
                                                  patience=None)  # run_all.sh:12 --patience 100000
    files: ClassVar[DataFiles] = DataFiles("ynat", "ynat-v1*_train.json", "ynat-v1*_dev.json", "ynat")
    labels = YNAT_LABELS

    def parse_record(self, rec: dict, where: str) -> Example:
        return {"guid": require(rec, "guid", str, where), "title": require(rec, "title", str, where),
                "label": self.label_index(rec, "label", where)}

    def texts(self, ex: Example) -> tuple[str, str | None]:
        return ex["title"], None

    def compute_metrics(self, preds: list[dict], golds: list[Example]) -> dict[str, Any]:
        p, g = self.gold_and_pred_indices(preds, golds)
        return {"macro_f1": macro_f1(p, g)}

    def main_metric_stats(self, preds: list[dict], golds: list[Example]) -> ExampleStats | None:
        """Macro F1: per example, TP / FP / FN of each topic; a topic enters the mean where it occurs."""
        if self.main_metric != "macro_f1":
            return None
        p, g = self.gold_and_pred_indices(preds, golds)
        return macro_f1_stats(*per_class_counts(g, p, range(len(self.labels))))

    entry = TaskEntry("Topic classification (YNAT, title only)", ("macro_f1",), "macro_f1", columns=(
        Column("macro_f1", "YNAT F1", klue_published(81.55, 83.52, 86.06, 84.58, 84.59, 85.49, 84.30, 85.12, 86.42)),))
