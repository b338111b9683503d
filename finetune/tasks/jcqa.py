"""JGLUE JCommonsenseQA: 5-way multiple choice, accuracy.

Record (one JSON object per line): `{"q_id": 3016, "question": ..., "choice0": ..., ..., "choice4": ...,
"label": 0}`, the label being the index of the right choice; the guid is `q_id` as a string ("3016").

Model and inputs as JGLUE's baseline, transformers' `run_swag.py` as JGLUE patches it
(`fine-tuning/patch/transformers-4.9.2_jglue-1.3.0.patch`): `AutoModelForMultipleChoice`; each question is
paired with each of its five choices (`first_sentences = [[question] * 5]`, `second_sentences = [choice0 ..
choice4]`, the choice text alone), tokenized as a pair with `truncation=True` (longest first) to the max length,
and the five pairs of a question are one feature of shape (5, tokens). `MultipleChoiceCollator` pads a batch to
(batch, 5, tokens); the model scores each pair, and the evaluation outputs are the (batch, 5) logits. The
prediction is their argmax (`np.argmax(predictions, axis=1)` in the patch; on an exact tie the first choice).
Each pair's score is read from its first token (through the pooler for RoBERTa), as there, or with
`Hyperparams.pooling = "mean"` from the mean of the pair's last hidden states (`finetune.encoders.set_pooling`).

Prediction records: `{"guid": "8939", "label": 2}` (the choice index, 0-4). `guid` may also be the integer
`q_id` as the data file writes it.

Defaults (`finetune.tasks.jglue`): lr 5e-5, batch 64, 4 epochs, warmup 0.1 (JGLUE's `run_swag.py` command in
`fine-tuning/README.md`), max length 64 (its table: "64 (JCommonsenseQA)").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from finetune.example_stats import ExampleStats, accuracy_stats
from finetune.metrics import accuracy
from finetune.records import Column, DataError, Example, Feature, TaskEntry, require
from finetune.tasks.base import DataFiles, Hyperparams, MultipleChoiceCollator, multiple_choice
from finetune.tasks.jglue import JsonLinesTask, jglue_id, jglue_published

N_CHOICES = 5
CHOICE_KEYS = tuple(f"choice{i}" for i in range(N_CHOICES))


class JCommonsenseQaTask(JsonLinesTask):
    name: ClassVar[str] = "jcommonsenseqa"
    defaults: ClassVar[Hyperparams] = Hyperparams(learning_rate=5e-5, batch_size=64, max_length=64, epochs=4,
                                                  warmup_ratio=0.1, evals_per_epoch=1, patience=None)
    files: ClassVar[DataFiles] = DataFiles("jcommonsenseqa-v1.3", "train-v1*.json", "valid-v1*.json",
                                           "JCommonsenseQA")

    # ---- reading -------------------------------------------------------------------------------
    def parse_record(self, rec: dict, where: str) -> Example:
        guid = jglue_id(rec, "q_id", where)
        where = f"{where} (q_id {guid})"
        question = require(rec, "question", str, where)
        choices = [require(rec, key, str, where) for key in CHOICE_KEYS]
        label = require(rec, "label", int, where)
        if not 0 <= label < N_CHOICES:
            raise DataError(f"{where}: field 'label' = {label} is not a choice index (0 to {N_CHOICES - 1})")
        return {"guid": guid, "question": question, "choices": choices, "label": label}

    # ---- features and model --------------------------------------------------------------------
    def encode(self, examples: list[Example], tokenizer: Any, max_length: int) -> list[Feature]:
        """One feature per question: `input_ids` / `attention_mask` hold one list per choice, each the pair
        (question, choice) cut to `max_length` (longest first, as `run_swag.py`'s `truncation=True`)."""
        firsts = [ex["question"] for ex in examples for _ in range(N_CHOICES)]
        seconds = [choice for ex in examples for choice in ex["choices"]]
        enc = tokenizer(firsts, seconds, truncation=True, max_length=max_length)
        out = []
        for i, ex in enumerate(examples):
            rows = slice(i * N_CHOICES, (i + 1) * N_CHOICES)
            out.append({"input_ids": enc["input_ids"][rows], "attention_mask": enc["attention_mask"][rows],
                        "labels": ex["label"], "example_index": i})
        return out

    def build_model(self, model_dir: Path, tokenizer: Any, random_init: bool,
                    hp: Hyperparams | None = None) -> Any:
        return multiple_choice(model_dir, tokenizer, random_init, pooling=hp.pooling if hp else None)

    def collator(self, tokenizer: Any) -> Any:
        return MultipleChoiceCollator(tokenizer)

    def eval_outputs(self, model: Any, batch: dict) -> Any:
        """The (batch, 5) choice logits; the labels stay out (no loss at evaluation)."""
        return model(**{k: v for k, v in batch.items() if k != "labels"}).logits

    def predictions(self, outputs: np.ndarray, features: list[Feature], examples: list[Example]) -> list[dict]:
        scores = np.asarray(outputs)
        if scores.shape != (len(features), N_CHOICES):
            raise ValueError(f"expected ({len(features)}, {N_CHOICES}) choice logits, got {scores.shape}")
        return [{"guid": examples[f["example_index"]]["guid"], "label": int(i)}
                for f, i in zip(features, scores.argmax(axis=-1), strict=True)]

    # ---- scoring -------------------------------------------------------------------------------
    def check_prediction(self, rec: dict, where: str) -> dict:
        require(rec, "guid", (str, int), where)
        label = require(rec, "label", int, where)
        if not 0 <= label < N_CHOICES:
            raise DataError(f"{where}: field 'label' = {label} is not a choice index (0 to {N_CHOICES - 1})")
        return rec

    def prediction_key(self, rec: dict) -> str:
        return str(rec["guid"])  # the integer q_id of the data file names the same question as its string

    def compute_metrics(self, preds: list[dict], golds: list[Example]) -> dict[str, Any]:
        return {"accuracy": accuracy([p["label"] for p in preds], [g["label"] for g in golds])}

    def main_metric_stats(self, preds: list[dict], golds: list[Example]) -> ExampleStats | None:
        """Accuracy: one correct flag per question."""
        if self.main_metric != "accuracy":
            return None
        return accuracy_stats([p["label"] == g["label"] for p, g in zip(preds, golds, strict=True)])

    entry = TaskEntry("Commonsense QA, 5-way multiple choice (JGLUE JCommonsenseQA)", ("accuracy",), "accuracy",
                      columns=(
        Column("accuracy", "JCQA Acc", jglue_published(80.8, 71.8, 81.6, 82.3, 84.0, 90.7, 89.1, 68.7, 84.0)),))
