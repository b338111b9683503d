"""What a task module provides, and the shared behaviour of the sentence(-pair) classification tasks.

The trainer and the scorer only talk to a `Task`: it reads records (official files or a HF `datasets` copy),
turns examples into model features, builds its head, turns raw model outputs into prediction records (the
same JSON-lines records `klue score` reads) and scores predictions against gold examples. Token-level and
span tasks (NER, DP, MRC) fit the same shape: one example may give several features (each carries
`example_index`; keys that start with "_" are task bookkeeping the trainer keeps away from the model),
`collator` and `eval_outputs` may be overridden, and `predictions` aggregates features back to one record per
guid. Per-token evaluation outputs of different lengths are padded with `IGNORE_INDEX` by the trainer (across
batches and processes), so `predictions` must skip that value. Multiple-choice tasks (JCommonsenseQA) give one
feature per question whose `input_ids` / `attention_mask` hold one token list per choice (`MultipleChoiceCollator`
pads them to (batch, choices, tokens)); their outputs are (batch, choices) logits.

Imports run one way: this module uses `finetune.records` and `finetune.encoders` (leaves; and the leaf
`finetune.example_stats` for a type) and nothing else of the framework. Each task class declares what reports
need to know about it as its `entry` (a `TaskEntry`: title, metric names, main metric, results-table columns
with the published scores), beside `compute_metrics`, which returns those metrics; `finetune.registry` maps
names to the classes and reads `entry` from them. A task module therefore stays light to import (heavy
libraries load inside methods): `klue finetune --help` and the results tables import every task module of a
suite.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from finetune.encoders import POOLINGS, set_pooling
from finetune.records import Column, DataError, Example, Feature, TaskEntry, load_json_list, require
from pipeline.hardware import MixedPrecision

if TYPE_CHECKING:
    import numpy as np
    import torch

    from finetune.example_stats import ExampleStats

__all__ = ["IGNORE_INDEX", "POOLINGS", "SENTENCE_HEAD_TASKS", "ClassificationTask", "DataError", "DataFiles",
           "Example", "Feature", "Hyperparams", "MultipleChoiceCollator", "Task", "check_hyperparams", "departures",
           "check_task_hyperparam", "finite_or_none", "KLUE_MODELS", "klue_published", "load_encoder",
           "multiple_choice", "published_scores", "reads_hyperparam", "require", "sequence_classifier",
           "token_classifier"]

# The label (and padded-output) value that losses and metrics skip: torch's CrossEntropyLoss default
# ignore_index, and what transformers' DataCollatorForTokenClassification pads labels with.
IGNORE_INDEX = -100


class Hyperparams(BaseModel):
    """One fine-tuning run's hyperparameters, validated once, here (pydantic): a recipe's `hyperparams`, `--hp` and
    the tasks' own defaults all go through this model, so a wrong key or value is an error naming it.

    Each task's `defaults` are KLUE-baseline's for the base/small models (`run_all.sh` @ 8a03c94; JGLUE's for the
    JGLUE tasks); the field defaults here are its script defaults (`run_klue.py`, `lightning_base.py`: AdamW with
    eps 1e-8, weight decay 0, a linear schedule with warmup). Every value that differs from the task's `defaults`
    is a departure from the baseline, and the results tables mark the rows that used one (`departures`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    learning_rate: float = Field(5e-5, gt=0)
    batch_size: int = Field(32, ge=1)
    max_length: int = Field(128, ge=1)
    epochs: int = Field(4, ge=1)
    warmup_ratio: float = Field(0.1, ge=0, le=1)
    weight_decay: float = Field(0.0, ge=0)
    max_grad_norm: float = Field(1.0, ge=0)
    adam_epsilon: float = Field(1e-8, gt=0)
    # Not a training setting: the evaluation's batch changes no score (`departures` leaves it out).
    eval_batch_size: int = Field(64, ge=1)
    # Evaluations per epoch: KLUE-baseline's `val_check_interval 0.25` (run_klue.py:121), i.e. Lightning 1.1 checks
    # after every int(N / 4) batches of an epoch of N (`finetune.trainer.eval_interval`).
    evals_per_epoch: int = Field(4, ge=1)
    # Early stopping: stop after this many evaluations in a row without a strictly better main metric (Lightning's
    # `EarlyStopping`, run_klue.py:110); None never stops. run_klue.py's default is 5 (:66-70); run_all.sh sets
    # 100000 or 10000 for YNAT, RE, DP, MRC and WoS, more checks than their epochs hold: None in their defaults.
    patience: int | None = Field(5, ge=1)
    # Batches of similar length (transformers' LengthGroupedSampler), so little of each batch is padding. A
    # departure from KLUE-baseline, which shuffles uniformly: off by default; the CPU recipes turn it on for speed
    # (bench/finetune.py measures both).
    group_by_length: bool = False
    # Keep the peak learning rate after warmup (transformers' `get_constant_schedule_with_warmup`) instead of
    # KLUE-baseline's linear decay to 0. A departure, off by default, for short runs of tiny models that must
    # leave a plateau first: the WoS gates of the 4 x 128 CPU model left their all-"none" plateau within 100 steps
    # at a constant 3e-3, not at 1e-3 (finetune/README.md, "MRC and DST at tiny scale").
    constant_lr: bool = False
    # DST only (`--hp` and `task_hyperparams` refuse it for another task; the other tasks ignore it in a recipe's
    # all-task `hyperparams`): train the value generator on the slots whose gold gate is "ptr" alone, the slots
    # whose generated value is read at prediction, instead of every slot with the word "none" as the value of an
    # absent slot (KLUE-baseline, after TRADE). A departure, off by default, for tiny models: trained on every
    # slot, the 4 x 128 CPU model's generator decoded "none" under 2,491 of 2,513 ptr gates and slot F1 stayed 0
    # for 1,000 steps; trained on ptr slots alone it left 0 within 200-700 steps and reached slot F1 55 (pretrained)
    # and 45 (random init) in 2,000 (finetune/README.md, "MRC and DST at tiny scale").
    ptr_values_only: bool = False
    # What a sentence-level head reads (the tasks of SENTENCE_HEAD_TASKS only): "cls", the first token, as
    # KLUE-baseline's heads (`AutoModelForSequenceClassification` / `AutoModelForMultipleChoice`), or "mean", the
    # mean of the encoder's last hidden states over the non-padding tokens (`finetune.encoders.set_pooling`). A
    # departure, off by default: masked-LM pretraining never trains the [CLS] position, so a small model's [CLS]
    # state says little about the sentence (finetune/README.md, "Departures from KLUE-baseline"). The saved
    # checkpoint keeps it (config.json `classifier_pooling`).
    pooling: Literal["cls", "mean"] = "cls"
    # Autocast over fp32 weights (as pretraining's `mixed_precision`): auto is bf16 on a GPU with it and on a CPU
    # with native bf16 for a model at least 256 wide, fp32 otherwise (pipeline/hardware.py); no (false, fp32) is
    # fp32. Not itself a departure (`NOT_SETTINGS`): KLUE-baseline trains in fp32, so a run whose precision
    # *resolved* to bf16 is marked (`finetune.results.run_departures`), whichever choice gave it.
    mixed_precision: MixedPrecision = "auto"

    def replace(self, **changes: Any) -> Hyperparams:
        """A copy with `changes`, validated as a new model (pydantic's `model_copy(update=...)` would not)."""
        return type(self).model_validate({**self.model_dump(), **changes})


def check_hyperparams(values: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Some `Hyperparams` fields (a recipe's `hyperparams`, a `--hp`), validated by the model: the given keys with
    their values converted as pydantic converts them (YAML reads `3e-5` as a string), or a ValueError naming
    `where`.KEY and what is wrong (an unknown field lists the known ones)."""
    from pydantic import ValidationError

    try:
        hp = Hyperparams.model_validate(dict(values))
    except ValidationError as e:
        err = e.errors()[0]
        key = ".".join(str(x) for x in err["loc"])
        if err["type"] == "extra_forbidden":
            raise ValueError(f"{where}.{key}: unknown hyperparameter; one of {', '.join(Hyperparams.model_fields)}"
                             ) from None
        raise ValueError(f"{where}.{key}: {err['msg']} (value: {err.get('input')!r})") from None
    return {k: getattr(hp, k) for k in values}


# Fields left out of `departures`: the evaluation's batch changes no score; `mixed_precision` is a choice whose
# outcome (the resolved precision, recorded per run) is what departs or not.
NOT_SETTINGS = ("eval_batch_size", "mixed_precision")


def departures(recorded: Mapping[str, Any], defaults: Hyperparams) -> list[str]:
    """What a run's recorded hyperparameters (its metrics.json `hyperparams`) set otherwise than the task's
    baseline `defaults`, one "field value (baseline: value)" string each, in field order. A field the record lacks
    (a run from before the field existed) is reported as unknown, not assumed to be the baseline's."""
    out = []
    for name in Hyperparams.model_fields:
        if name in NOT_SETTINGS:
            continue
        base = getattr(defaults, name)
        if name not in recorded:
            out.append(f"{name} not recorded (baseline: {_show(base)})")
        elif recorded[name] != base:
            out.append(f"{name} {_show(recorded[name])} (baseline: {_show(base)})")
    return out


def _show(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}" if isinstance(value, float) else str(value)


# The tasks whose model is a sentence-level head over the encoder (sequence classification, regression, multiple
# choice): the ones that read `pooling`. NER, DP, MRC, JSQuAD and DST read tokens.
SENTENCE_HEAD_TASKS = ("ynat", "sts", "nli", "re", "jsts", "jnli", "jcommonsenseqa")

# Hyperparameters that some tasks alone read: naming one for another task is an error (`--hp`, `task_hyperparams`);
# the other tasks ignore it in a recipe's all-task `hyperparams` (and record their default).
TASK_ONLY_HYPERPARAMS: dict[str, tuple[str, ...]] = {"ptr_values_only": ("dst",), "pooling": SENTENCE_HEAD_TASKS}



def reads_hyperparam(task: str, field: str) -> bool:
    """Whether `task` reads `field` (every task reads the general ones)."""
    owners = TASK_ONLY_HYPERPARAMS.get(field)
    return owners is None or task in owners


def check_task_hyperparam(task: str, field: str) -> None:
    """Raises ValueError, naming the key and the task, when `field` is a hyperparameter that `task` does not read."""
    if reads_hyperparam(task, field):
        return
    owners = TASK_ONLY_HYPERPARAMS[field]
    if len(owners) == 1:
        raise ValueError(f"{field} is read by the {owners[0]} task only, not by {task}")
    raise ValueError(f"{field} is read by the tasks with a sentence-level head only ({', '.join(owners)}), "
                     f"not by {task}")


# The models of KLUE's published dev scores, the "Baseline Scores" table of the KLUE README
# (github.com/KLUE-benchmark/KLUE, README.md at commit 0106de0161790bb1501a6c5832f733dc22d747ef), which the paper
# (arXiv 2105.09680) reports as dev-set results; in the order the results tables list them.
KLUE_MODELS = ("mBERT-base", "XLM-R-base", "XLM-R-large", "KR-BERT-base", "koELECTRA-base", "KLUE-BERT-base",
               "KLUE-RoBERTa-small", "KLUE-RoBERTa-base", "KLUE-RoBERTa-large")


def published_scores(models: tuple[str, ...], scores: tuple[float, ...], table: str) -> dict[str, float]:
    """model -> score for one column of a published table, `scores` in the order of `models`: one line per column
    in each task module, checked against the README model by model. A column of another length is a ValueError
    naming the table: a missing value would otherwise shift the rest onto the wrong models."""
    if len(scores) != len(models):
        raise ValueError(f"{table}: {len(scores)} scores for {len(models)} models ({', '.join(models)})")
    return dict(zip(models, scores, strict=True))


def klue_published(*scores: float) -> dict[str, float]:
    """One column of KLUE's README table (`KLUE_MODELS`, in that order); each KLUE task's `entry` says which of
    its metric keys the column is."""
    return published_scores(KLUE_MODELS, scores, "KLUE README, Baseline Scores")


@dataclass(frozen=True)
class DataFiles:
    subdir: str  # folder under the KLUE data dir (e.g. "ynat")
    train_glob: str  # official train file (glob: v1 and v1.1 names both match)
    dev_glob: str
    hf_config: str  # config name of the HF `klue` dataset


class Task(ABC):
    name: ClassVar[str]
    defaults: ClassVar[Hyperparams]
    files: ClassVar[DataFiles]

    # Title, metric keys, main metric and results-table columns: every concrete task declares its own (a subclass
    # such as JNLI of NLI too: `finetune.registry` refuses an inherited one, which would report the wrong suite).
    entry: ClassVar[TaskEntry]

    def __init__(self, data_dir: Path | None = None) -> None:
        self.data_dir = data_dir

    @property
    def metric_names(self) -> tuple[str, ...]:
        return self.entry.metrics

    @property
    def main_metric(self) -> str:
        return self.entry.main_metric

    @property
    def columns(self) -> tuple[Column, ...]:
        return self.entry.columns

    # ---- reading -------------------------------------------------------------------------------
    def read_file(self, path: Path) -> list[Example]:
        """Official v1.1 files are one JSON list; tasks shipped as TSV override this."""
        return [self.parse_record(rec, f"{path}: record {i}") for i, rec in enumerate(load_json_list(path))]

    @abstractmethod
    def parse_record(self, rec: dict, where: str) -> Example:
        """An official-format record -> example; raise `DataError` naming `where` on a malformed record."""

    def from_hf(self, row: dict, features: Any) -> dict:
        """A row of the HF `klue` copy -> an official-format record. HF stores labels as ClassLabel ids in its
        own order (which differs from the official files for YNAT and NLI), so ids go back to names here."""
        return dict(row)

    # What the dev split (`--split dev-split`) keeps together: examples with the same key land on the same side.
    # The guid for most tasks; MRC splits by article, so no passage is read in training and asked about in
    # evaluation. `split_unit` names the key in metrics.json's note.
    split_unit: ClassVar[str] = "guid"

    def split_key(self, ex: Example) -> str:
        return str(ex["guid"])

    # ---- features and model --------------------------------------------------------------------
    def prepare_tokenizer(self, tokenizer: Any) -> None:
        """Add task tokens (RE entity markers); the model's embeddings are resized to match."""
        return None  # most tasks add none

    @abstractmethod
    def encode(self, examples: list[Example], tokenizer: Any, max_length: int) -> list[Feature]: ...

    @abstractmethod
    def build_model(self, model_dir: Path, tokenizer: Any, random_init: bool,
                    hp: Hyperparams | None = None) -> torch.nn.Module:
        """The task's model on the encoder in `model_dir` (fresh weights of the same shape with `random_init`);
        `hp` is the run's hyperparameters, for a head that reads one (DST: `ptr_values_only`; the sentence-level
        heads: `pooling`), None for the task's defaults (and the pooling that `model_dir`'s config names: see
        `load_finetuned`)."""

    def load_finetuned(self, directory: Path) -> torch.nn.Module:
        """The model that `finetune_once` saved in `directory` (`seed-N/model`), with its weights, its head and,
        for a sentence-level head, its pooling (config.json `classifier_pooling`): `build_model` on the folder,
        with the tokenizer saved beside it (RE: the entity markers included). DP and DST, whose checkpoints hold a
        head of their own, read it back with its `from_pretrained`."""
        from transformers import AutoTokenizer

        return self.build_model(Path(directory), AutoTokenizer.from_pretrained(directory), random_init=False)

    def collator(self, tokenizer: Any) -> Any:
        from transformers import DataCollatorWithPadding

        return DataCollatorWithPadding(tokenizer)

    def eval_outputs(self, model: torch.nn.Module, batch: dict) -> torch.Tensor:
        """What evaluation keeps per feature; logits for the heads here."""
        return model(**batch).logits

    @abstractmethod
    def predictions(self, outputs: np.ndarray, features: list[Feature], examples: list[Example]) -> list[dict]:
        """Raw outputs (one row per feature) -> one prediction record per example, in example order."""

    # ---- scoring -------------------------------------------------------------------------------
    @abstractmethod
    def check_prediction(self, rec: dict, where: str) -> dict:
        """Validate one prediction record (fields, label names, ranges); raise `DataError` naming `where`."""

    @staticmethod
    def require_labels(values: list, labels: list[str], field: str, what: str, where: str) -> None:
        """For `check_prediction`: every value of a list field (NER's `tags`, DP's `deprels`) is one of the task's
        labels, or a `DataError` naming the field, the index and value of the first that is not, and the labels."""
        known = set(labels)
        for i, value in enumerate(values):
            if value not in known:
                raise DataError(f"{where}: field {field!r}[{i}] = {value!r} is not {what} (expected one of {labels})")

    def prediction_key(self, rec: dict) -> str:
        """The gold example a (checked) prediction record is for: its guid. DST records name a dialogue and a
        user turn (`{"guid", "turn"}`), one record per turn, so its key joins the two."""
        return str(rec["guid"])

    def unknown_prediction(self, rec: dict, where: str, golds: list[Example]) -> DataError | None:
        """A `DataError` naming the field of a record whose key is not in the gold file (DST: the dialogue or
        the turn), or None to let the scorer report every unknown guid at once."""
        return None

    def check_aligned(self, rec: dict, gold: Example, where: str) -> None:
        """Validate a prediction against its gold example (token-level tasks: one value per character or word,
        heads within the sentence); raise `DataError` naming `where` (file:line) and the field. Sentence-level
        tasks have nothing to align."""
        return None

    @abstractmethod
    def compute_metrics(self, preds: list[dict], golds: list[Example]) -> dict[str, Any]:
        """Metrics for predictions aligned with gold examples (same order, same guids)."""

    def main_metric_stats(self, preds: list[dict], golds: list[Example]) -> ExampleStats | None:
        """Per-example sufficient statistics of the main metric (`finetune.example_stats`), for predictions
        aligned with gold examples as in `compute_metrics`: `stats.total()` is `compute_metrics(...)[main_metric]`
        and `stats.score(W @ stats.values)` its value on the examples repeated W[i] times, so a bootstrap over
        evaluation examples is one matrix product. None (this default): the task gives none, and a resample
        is scored by `compute_metrics` on the repeated lists. A subclass that changes `entry.main_metric` must
        override this; the tasks here return None for a main metric they were not written for."""
        return None


class ClassificationTask(Task):
    """Sentence or sentence-pair classification with `AutoModelForSequenceClassification`; labels are names
    in the official order (`labels`), features carry the label index."""

    labels: list[str]

    @abstractmethod
    def texts(self, ex: Example) -> tuple[str, str | None]: ...

    def label_index(self, rec: dict, key: str, where: str) -> int:
        name = require(rec, key, str, where)
        if name not in self.labels:
            raise DataError(f"{where}: unknown label {name!r} (expected one of {self.labels})")
        return self.labels.index(name)

    def from_hf(self, row: dict, features: Any) -> dict:
        rec = dict(row)
        feat = features["label"]
        if hasattr(feat, "names") and isinstance(rec.get("label"), int):
            rec["label"] = feat.names[rec["label"]]  # HF's ClassLabel order -> the name, then ours
        return rec

    def encode(self, examples: list[Example], tokenizer: Any, max_length: int) -> list[Feature]:
        firsts = [self.texts(ex)[0] for ex in examples]
        seconds = [self.texts(ex)[1] for ex in examples]
        pair = seconds[0] is not None if seconds else False
        enc = tokenizer(firsts, seconds if pair else None, truncation=True, max_length=max_length)
        return [
            {"input_ids": enc["input_ids"][i], "attention_mask": enc["attention_mask"][i],
             "labels": ex["label"], "example_index": i}
            for i, ex in enumerate(examples)
        ]

    def build_model(self, model_dir: Path, tokenizer: Any, random_init: bool,
                    hp: Hyperparams | None = None) -> torch.nn.Module:
        return sequence_classifier(model_dir, tokenizer, random_init, self.labels, pooling=hp.pooling if hp else None)

    def predicted_indices(self, outputs: np.ndarray) -> np.ndarray:
        """Argmax; on an exact tie the lowest label index (official label order) wins, as with np.argmax."""
        import numpy as np

        return np.asarray(outputs).argmax(axis=-1)

    def predictions(self, outputs: np.ndarray, features: list[Feature], examples: list[Example]) -> list[dict]:
        idx = self.predicted_indices(outputs)
        return [{"guid": examples[f["example_index"]]["guid"], "label": self.labels[int(i)]}
                for f, i in zip(features, idx, strict=True)]

    def check_prediction(self, rec: dict, where: str) -> dict:
        require(rec, "guid", str, where)
        label = require(rec, "label", str, where)
        if label not in self.labels:
            raise DataError(f"{where}: unknown label {label!r} (expected one of {self.labels})")
        return rec

    def gold_and_pred_indices(self, preds: list[dict], golds: list[Example]) -> tuple[list[int], list[int]]:
        return [self.labels.index(p["label"]) for p in preds], [g["label"] for g in golds]


def finite_or_none(x: float) -> float | None:
    """NaN/inf -> None so metrics.json stays strict JSON."""
    return None if x is None or not math.isfinite(x) else float(x)


def sequence_classifier(model_dir: Path, tokenizer: Any, random_init: bool, labels: list[str] | None,
                        pooling: str | None = None) -> Any:
    """`AutoModelForSequenceClassification` with a fresh head: one output per label, or one regression output
    when `labels` is None; the head reads the first token or the mean (`pooling`: `finetune.encoders.set_pooling`;
    None: what the folder's config says, `cls` for a pretrained model). Safetensors only, never remote code.

    Always fp32 weights, whatever dtype the folder's config names: transformers 5 loads a model in its config's
    dtype, and AdamW on bf16 weights loses most 5e-5 updates to rounding (mixed precision, where used, is
    autocast over fp32 weights: see `finetune.trainer`)."""
    from transformers import AutoModelForSequenceClassification

    kwargs: dict[str, Any]
    if labels:
        kwargs = _label_kwargs(labels)
    else:
        kwargs = {"num_labels": 1, "problem_type": "regression"}
    model = _auto_model(AutoModelForSequenceClassification, model_dir, tokenizer, random_init, kwargs)
    set_pooling(model, pooling)
    return model


def token_classifier(model_dir: Path, tokenizer: Any, random_init: bool, labels: list[str]) -> Any:
    """`AutoModelForTokenClassification` with a fresh head, one output per label (KLUE-baseline's NER model,
    `models/named_entity_recognition.py`); loaded like `sequence_classifier` (safetensors, fp32)."""
    from transformers import AutoModelForTokenClassification

    return _auto_model(AutoModelForTokenClassification, model_dir, tokenizer, random_init, _label_kwargs(labels))


def multiple_choice(model_dir: Path, tokenizer: Any, random_init: bool, pooling: str | None = None) -> Any:
    """`AutoModelForMultipleChoice`: the encoder reads each (question, choice) pair, a fresh linear head gives one
    score per pair from the pooled output, and the loss is cross-entropy over the choices of a question. This is
    the model JGLUE's baseline fine-tunes JCommonsenseQA with (transformers' `run_swag.py`, patched for five
    choices: JGLUE `fine-tuning/patch/transformers-4.9.2_jglue-1.3.0.patch`). Inputs are (batch, choices,
    tokens) and the logits (batch, choices); the number of choices is not part of the model. Loaded like
    `sequence_classifier` (safetensors, fp32; `random_init` keeps the config and discards the weights), and reads
    the first token of each pair or the mean as `sequence_classifier` (`pooling`)."""
    from transformers import AutoModelForMultipleChoice

    model = _auto_model(AutoModelForMultipleChoice, model_dir, tokenizer, random_init, {})
    set_pooling(model, pooling)
    return model


@dataclass
class MultipleChoiceCollator:
    """Pads multiple-choice features to (batch, choices, tokens): every key but `labels` holds one token list
    per choice. The choices of the whole batch are padded together (to the longest pair in the batch), so the
    model can view them as one (batch × choices, tokens) batch, as transformers' `DataCollatorForMultipleChoice`
    does; `labels` (the index of the right choice) stay one integer per question. Every question of a batch
    must have the same number of choices."""

    tokenizer: Any

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        n_choices = len(features[0]["input_ids"])
        if any(len(f["input_ids"]) != n_choices for f in features):
            raise ValueError(f"multiple-choice batch with different numbers of choices: "
                             f"{sorted({len(f['input_ids']) for f in features})}")
        keys = [k for k in features[0] if k != "labels"]
        flat = [{k: f[k][j] for k in keys} for f in features for j in range(n_choices)]
        padded = self.tokenizer.pad(flat, return_tensors="pt")
        batch: dict[str, Any] = {k: v.view(len(features), n_choices, -1) for k, v in padded.items()}
        if "labels" in features[0]:
            batch["labels"] = torch.tensor([int(f["labels"]) for f in features], dtype=torch.long)
        return batch


def load_encoder(model_dir: Path, tokenizer: Any, random_init: bool) -> Any:
    """The bare `AutoModel` under a custom head (DP's parser, DST's tracker): pretrained weights or, with
    `random_init`, fresh ones of the same shape; fp32 and safetensors as `sequence_classifier`; embeddings resized
    to the tokenizer."""
    import torch
    from transformers import AutoConfig, AutoModel

    if random_init:
        encoder = AutoModel.from_config(AutoConfig.from_pretrained(model_dir), dtype=torch.float32)
    else:
        encoder = AutoModel.from_pretrained(model_dir, use_safetensors=True, dtype=torch.float32)
    if len(tokenizer) != encoder.get_input_embeddings().num_embeddings:
        encoder.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    return encoder


def _label_kwargs(labels: list[str]) -> dict[str, Any]:
    return {"num_labels": len(labels), "id2label": dict(enumerate(labels)),
            "label2id": {n: i for i, n in enumerate(labels)}}


def _auto_model(auto_cls: Any, model_dir: Path, tokenizer: Any, random_init: bool, kwargs: dict[str, Any]) -> Any:
    import torch
    from transformers import AutoConfig

    if random_init:
        # Same architecture and shape, fresh weights: the baseline that shows what pretraining bought.
        config = AutoConfig.from_pretrained(model_dir, **kwargs)
        model = auto_cls.from_config(config, dtype=torch.float32)
    else:
        model = auto_cls.from_pretrained(model_dir, use_safetensors=True, dtype=torch.float32, **kwargs)
    if len(tokenizer) != model.get_input_embeddings().num_embeddings:
        # Added tokens (RE markers) get the config's plain normal init, as in KLUE-baseline's transformers.
        model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    return model
