"""Finding and reading a task's data: official KLUE files or a local HF `datasets` copy, the deterministic
guid-hash split used where only a dev file is available, and the selection split that chooses the checkpoint.

Three lists come back (`TaskData`): `train`, what the model trains on; `eval`, the reported split, scored once
with the chosen checkpoint; `select`, the split every checkpoint is scored on to choose one and to stop early.
Under the default protocol, "selection-split", `select` is carved from the training examples by a hash of the
task's split key (its own salt, "klue-select"), so no score-driven choice ever reads the reported split. Under
"klue-baseline", `select` IS `eval` (KLUE-baseline's dev table: the checkpoint chosen on the split it reports).

Which files were used, how they were split and how many examples were kept is returned as a plain dict
(`TaskData.source`) that goes into metrics.json, so every report can say when it trained on part of dev and on
which split its checkpoint was chosen.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from finetune.records import DataError, Example, load_json_list, read_jsonl
from pipeline import io

if TYPE_CHECKING:
    from finetune.tasks.base import Task

__all__ = ["PROTOCOLS", "SELECTION_FRACTION", "DataError", "Protocol", "SplitMode", "TaskData", "cap",
           "check_unique_guids", "guid_bucket", "json_safe", "load_json_list", "load_task_data", "read_jsonl",
           "split_by_guid", "split_record", "write_json"]

SplitMode = Literal["auto", "official", "dev-split"]
# Where the checkpoint is chosen (module doc): on a selection split carved from the training examples (the
# default), or on the reported split itself, as KLUE-baseline does (its paper reports test; we only have dev).
Protocol = Literal["selection-split", "klue-baseline"]
PROTOCOLS: tuple[Protocol, ...] = ("selection-split", "klue-baseline")
# The share of the training examples that selects the checkpoint. KLUE's own dev files are 4-25 % of its train
# files (counted in the shared copy: NLI 3,000 dev / 24,998 train = 12 %, YNAT 9,107 / 36,547 = 25 %; the paper's
# STS 519 / 11,668 = 4 %, WoS 1,000 / 8,000 = 12.5 %): a tenth is a dev-sized split at the low end of that
# range, so training loses little (90 % of train stays) while the selection split still holds thousands of
# examples for the large tasks (NLI 2,500, YNAT 3,655), enough that the choice is not decided by noise.
SELECTION_FRACTION = 0.1
SPLIT_SALT, SELECT_SALT = "klue-split", "klue-select"


def guid_bucket(guid: str, salt: str = "klue-split") -> float:
    """A stable number in [0, 1) from the guid alone, so the split depends neither on file order nor on
    Python's randomised hash."""
    digest = hashlib.sha256(f"{salt}:{guid}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_by_guid(examples: list[Example], eval_fraction: float = 0.2,
                  key: Callable[[Example], str] | None = None,
                  salt: str = SPLIT_SALT) -> tuple[list[Example], list[Example]]:
    """Deterministic train/eval split by guid hash (eval if bucket < eval_fraction); order is preserved.
    `key` hashes something else instead (MRC: the article), so examples sharing it stay on one side. `salt`:
    "klue-split" for the dev split, "klue-select" for the selection split (independent of the first)."""
    if not 0.0 < eval_fraction < 1.0:
        raise ValueError(f"eval_fraction must be in (0, 1), got {eval_fraction}")
    buckets = [guid_bucket(key(e) if key else e["guid"], salt) for e in examples]
    train = [e for e, b in zip(examples, buckets, strict=True) if b >= eval_fraction]
    evals = [e for e, b in zip(examples, buckets, strict=True) if b < eval_fraction]
    return train, evals


def cap(examples: list[Example], limit: int | None) -> list[Example]:
    """The `limit` examples with the lowest guid hash (a fixed pseudo-random sample, the same for every model
    and seed), kept in file order. None keeps all."""
    if limit is None or limit >= len(examples):
        return examples
    chosen = set(sorted(range(len(examples)), key=lambda i: guid_bucket(examples[i]["guid"], "klue-cap"))[:limit])
    return [e for i, e in enumerate(examples) if i in chosen]


def check_unique_guids(examples: list[Example], where: str) -> None:
    seen: set[str] = set()
    for e in examples:
        if e["guid"] in seen:
            raise DataError(f"{where}: duplicate guid {e['guid']!r}")
        seen.add(e["guid"])


@dataclass
class TaskData:
    """`train`: what the model trains on; `eval`: the reported split; `select`: the split that chooses the
    checkpoint and stops early (under "klue-baseline" the very list `eval`)."""

    train: list[Example]
    eval: list[Example]
    select: list[Example]
    source: dict[str, Any] = field(default_factory=dict)

    @property
    def protocol(self) -> Protocol:
        return "klue-baseline" if self.source.get("protocol") == "klue-baseline" else "selection-split"

    @property
    def selects_on_eval(self) -> bool:
        """Whether the checkpoint is chosen on the reported split itself (klue-baseline): the same examples."""
        return self.select is self.eval or [e["guid"] for e in self.select] == [e["guid"] for e in self.eval]


def split_record(data: TaskData) -> dict[str, Any]:
    """What a run's `split.json` holds: the protocol and the guids of the selection and the reported split, in
    the data's order."""
    return {"protocol": data.protocol, "selection": [e["guid"] for e in data.select],
            "eval": [e["guid"] for e in data.eval]}


def _hf_dir(task: Task, data_dir: Path) -> Path | None:
    for cand in (data_dir, data_dir / task.files.hf_config):
        if (cand / "dataset_dict.json").is_file():
            return cand
    return None


def _official_file(task: Task, data_dir: Path, pattern: str) -> Path | None:
    """The newest file matching `pattern` in the task folder or the data folder. `a|b` are alternatives in
    order of preference (MRC: the KLUE-MRC file before a KorQuAD one that sits beside it)."""
    for alternative in pattern.split("|"):
        for folder in (data_dir / task.files.subdir, data_dir):
            hits = sorted(folder.glob(alternative))
            if hits:
                return hits[-1]  # v1.1 sorts after v1
    return None


def load_task_data(task: Task, data_dir: Path, split: SplitMode = "auto", eval_fraction: float = 0.2,
                   max_train: int | None = None, max_eval: int | None = None, *,
                   protocol: Protocol = "selection-split",
                   selection_fraction: float = SELECTION_FRACTION) -> TaskData:
    """Train, selection and evaluation examples for a task.

    `data_dir` may be the KLUE folder (with `ynat/`, `sts/`, ...), a task folder, or a HF `datasets` copy saved
    with `save_to_disk` (the `klue` dataset dict itself or a folder holding one per config). `split`: "official"
    trains on the train file and evaluates on dev; "dev-split" splits dev 80/20 by guid hash; "auto" uses the
    train file when there is one, else splits dev.

    `protocol` "selection-split" carves `selection_fraction` of the training examples (the train file, or the
    training part of a dev split: never the reported part) into `select`, by the hash of the task's split key
    (MRC: the article, DST: the dialogue, JNLI: the image) with the salt "klue-select"; "klue-baseline" selects on
    `eval` itself and trains on every training example. Caps: `max_train` caps what remains for training;
    `max_eval` caps the reported split and, as it plays dev's role, the selection split too (the same guid-hash
    sample rule, `cap`).
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    if protocol == "selection-split" and not 0.0 < selection_fraction < 1.0:
        raise ValueError(f"selection_fraction must be in (0, 1), got {selection_fraction}")
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise DataError(f"{data_dir}: data folder not found")
    hf = _hf_dir(task, data_dir)
    if hf is not None:
        from datasets import load_from_disk

        dsd = load_from_disk(str(hf))
        parts: dict[str, list[Example] | None] = {}
        for name, split_name in (("train", "train"), ("dev", "validation")):
            if split_name not in dsd:
                parts[name] = None
                continue
            ds = dsd[split_name]
            parts[name] = [task.parse_record(_with_guid(task.from_hf(row, ds.features), task, split_name, i),
                                             f"{hf} [{split_name}] row {i}")
                           for i, row in enumerate(ds)]
        files: dict[str, str | None] = {"format": "hf-datasets", "path": str(hf), "train": "train" if parts["train"] else None,
                 "dev": "validation"}
        train_ex, dev_ex = parts["train"], parts["dev"]
        if dev_ex is None:
            raise DataError(f"{hf}: the dataset has no 'validation' split")
    else:
        train_path = _official_file(task, data_dir, task.files.train_glob)
        dev_path = _official_file(task, data_dir, task.files.dev_glob)
        if dev_path is None:
            raise DataError(f"{data_dir}: no {task.name} dev file ({task.files.subdir}/{task.files.dev_glob}) "
                            "and no HF datasets copy (dataset_dict.json)")
        files = {"format": "official", "train": str(train_path) if train_path else None, "dev": str(dev_path)}
        train_ex = task.read_file(train_path) if train_path else None
        dev_ex = task.read_file(dev_path)
    check_unique_guids(dev_ex, files["dev"] or "")

    mode = split
    if mode == "auto":
        mode = "official" if train_ex else "dev-split"
    if mode == "official":
        if not train_ex:
            raise DataError(f"{data_dir}: split 'official' needs a {task.name} train file; none found "
                            "(use --split dev-split)")
        train, evals = train_ex, dev_ex
        note = "trained on the official train file, evaluated on the official dev file"
    else:
        train, evals = split_by_guid(dev_ex, eval_fraction, key=task.split_key)
        note = (f"no train file used: the dev file was split by {task.split_unit} hash, {1 - eval_fraction:.0%} train / "
                f"{eval_fraction:.0%} evaluation; scores are not comparable with published dev scores")
    select: list[Example] = []
    if protocol == "selection-split":
        # from the training examples only (the train file, or the part of dev that is not reported)
        train, select = split_by_guid(train, selection_fraction, key=task.split_key, salt=SELECT_SALT)
    n_train, n_eval = len(train), len(evals)
    n_select = len(select) if protocol == "selection-split" else n_eval
    train, evals = cap(train, max_train), cap(evals, max_eval)
    # the selection split plays dev's role: the reported split's cap; under klue-baseline it is `evals` itself
    select = cap(select, max_eval) if protocol == "selection-split" else evals
    if not train or not evals or not select:
        which = "train" if not train else "evaluation" if not evals else "selection"
        raise DataError(f"{data_dir}: empty {which} set for {task.name}"
                        + (f" (selection_fraction {selection_fraction} of {n_train + n_select} training examples; "
                           "more data, a larger fraction or --protocol klue-baseline)" if which == "selection" else ""))
    if protocol == "selection-split":
        note += (f"; the checkpoint is chosen on a selection split of the training examples ({selection_fraction:.0%} "
                 f"by {task.split_unit} hash), not on the reported one")
    else:
        note += "; the checkpoint is chosen on the reported split itself (protocol klue-baseline)"
    source: dict[str, Any] = {**files, "split": mode, "eval_fraction": eval_fraction if mode == "dev-split" else None,
              "split_by": task.split_unit if mode == "dev-split" else None,
              "note": note, "n_train_available": n_train, "n_eval_available": n_eval,
              "n_train": len(train), "n_eval": len(evals),
              "protocol": protocol, "selection_fraction": selection_fraction if protocol == "selection-split" else None,
              "selection_by": task.split_unit if protocol == "selection-split" else None,
              "n_select_available": n_select, "n_select": len(select)}
    if len(evals) < n_eval:
        source["note"] += f"; evaluation capped at {len(evals)} of {n_eval} examples"
    if protocol == "selection-split" and len(select) < n_select:
        source["note"] += f"; selection capped at {len(select)} of {n_select} examples"
    return TaskData(train, evals, select, source)


def _with_guid(rec: dict[str, Any], task: Task, split: str, row: int) -> dict[str, Any]:
    """The HF `klue` configs `ner` and `dp` have no guid field (the official TSV headers carry it): such rows
    are named `{task}-hf-{split}-{row:05d}`, stable for a given copy, so the guid-hash split still works. Their
    predictions cannot be scored against the official TSV, whose guids they do not share."""
    if "guid" not in rec:
        rec = {**rec, "guid": f"{task.name}-hf-{split}-{row:05d}"}
    return rec


def json_safe(obj: Any) -> Any:
    """NaN/inf floats -> None, recursively, so the output is strict JSON."""
    import math

    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def write_json(path: Path, obj: Any) -> None:
    io.write_json(path, json_safe(obj), indent=2, sort_keys=False, allow_nan=False)
