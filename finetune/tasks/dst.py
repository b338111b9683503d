"""WoS dialogue state tracking: one example per user turn, a TRADE-style generator (`finetune.dst_model`), joint
goal accuracy and the official "slot micro F1".

Reference: KLUE-baseline `klue_baseline/data/wos.py` (`WoSProcessor`: examples, features, `recover_state`),
`klue_baseline/models/dialogue_state_tracking.py` (`DSTTransformer`, `SlotGenerator`) and
`klue_baseline/metrics/functional.py` (`wos_jga`, `wos_slot_micro_f1`, `compute_prf_for_wos`; see
`finetune.metrics`). `run_all.sh` (WoS, base/small models): lr 3e-5, batch 16 (eval 16), 5 epochs, max length
510, warmup 0.1, weight decay 0.01, gradient clipping 1.0, `--parallel_decoding`, `--truncate`, selects on
`slot_micro_f1`.

Data. The official file (`wos-v1.1_train.json`, `wos-v1.1_dev.json`) is a JSON list of dialogues `{"guid",
"domains": [...], "dialogue": [{"role": "user" | "sys", "text", "state": ["domain-slot-value", ...]}, ...]}`
where user turns carry the cumulative state; `ontology.json` beside it maps each of the 45 "domain-slot" names
to its values. A state item splits at its first two "-" (a value may hold "-" itself, `split_slot`). Each user
turn becomes one example with guid `{dialogue guid}-{k}`, k counting **user turns** from 0 (the baseline's
`d_idx`); predictions name the dialogue guid and k (`{"guid", "turn": k, "state"}`).

Input (`get_examples_from_dialogue`, `_convert_example_to_feature`): each utterance tokenized on its own; the
system turn of a user turn is the utterance just before it ("" for a dialogue that opens with the user); the
history is `sys₀ [SEP] user₀ [SEP] sys₁ [SEP] user₁ ...` and the input `[CLS] history [SEP] sys [SEP] user
[SEP]`: for the first turn the empty history still leaves its `[SEP]`, so the input starts `[CLS] [SEP] [SEP]`
(the baseline's exact layout). Longer than `max_length`: the oldest tokens are cut (`--truncate`, which
`run_all.sh` sets, in training and evaluation alike). Targets: for every slot the gate (`dontcare`, `yes`,
`no` by value, `none` when absent, else `ptr`) and the value's tokens + `[SEP]` ("none" for an absent slot).

Prediction (`WoSProcessor.recover_state`): a slot gated none is left out; dontcare / yes / no give that value;
ptr decodes the generated tokens up to the first special token, with the baseline's wordpiece clean-up
(" : " -> ":", " , " -> ", ", "##" removed); a decoded "none" is left out.

Departures from KLUE-baseline (all in finetune/README.md):
- Slots are the ontology's 45 "domain-slot" names, sorted (the baseline's `slot_meta` is the sorted slots
  found in the file being read, merged with an ontology given as a text file of names, which `run_all.sh` does
  not give; the dev file can so add slots the model was not built for). A state item naming a slot outside the
  ontology is a `DataError`, as is a malformed item, an empty value, two values for one slot, an unknown
  role or a user turn without `state`.
- The HF `klue`/`wos` copy is not read (one row is a whole dialogue and becomes several examples): use the
  official JSON files.
- Model inputs are `input_ids` and `attention_mask` only (the baseline passes all-zero segment ids).
- The decoder's own departures are listed in `finetune.dst_model`; one more is a hyperparameter, off by default:
  `ptr_values_only` trains the generator on the ptr slots' values alone (`Hyperparams`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from finetune.encoders import hidden_dropout
from finetune.example_stats import ExampleStats, mean_stats
from finetune.metrics import dst_scores, wos_turn_f1
from finetune.records import Column, DataError, Example, Feature, TaskEntry, load_json_list, require
from finetune.tasks.base import DataFiles, Hyperparams, Task, klue_published, load_encoder

ONTOLOGY_FILE = "ontology.json"
GATE_OF_VALUE = {"dontcare": 1, "yes": 3, "no": 4}  # else: none 0 (absent), ptr 2
GATE_NONE, GATE_PTR = 0, 2


def split_slot(item: str) -> tuple[str, str, str] | None:
    """"domain-slot-value" -> (domain, slot, value) at the first two "-" (`WoSProcessor.split_slot`); None when
    the string has fewer than two "-"."""
    parts = item.split("-", 2)
    if len(parts) < 3:
        return None
    return parts[0], parts[1], parts[2]


def find_ontology(data_dir: Path | None) -> Path | None:
    """`ontology.json` in the data folder, its `wos/` folder, or (for `klue score`) beside the gold file."""
    if data_dir is None:
        return None
    for cand in (data_dir / ONTOLOGY_FILE, data_dir / "wos" / ONTOLOGY_FILE):
        if cand.is_file():
            return cand
    return None


def load_ontology(path: Path) -> dict[str, list[str]]:
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from e
    if not isinstance(raw, dict) or not raw:
        raise DataError(f"{path}: expected an object {{\"domain-slot\": [values]}}")
    for name, values in raw.items():
        if name.count("-") != 1 or not all(name.split("-")):
            raise DataError(f"{path}: slot name {name!r} is not 'domain-slot'")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise DataError(f"{path}: slot {name!r} should list its values as strings")
    return raw


def recover_value(token_ids: list[int], special_ids: set[int], tokenizer: Any) -> str:
    """The text of generated value tokens up to the first special token, cleaned as the baseline does."""
    kept = []
    for t in token_ids:
        if t in special_ids:
            break
        kept.append(int(t))
    value = tokenizer.decode(kept, skip_special_tokens=True)
    return str(value).replace(" : ", ":").replace(" , ", ", ").replace("##", "")


class DstTask(Task):
    name: ClassVar[str] = "dst"
    defaults: ClassVar[Hyperparams] = Hyperparams(learning_rate=3e-5, batch_size=16, max_length=510, epochs=5,
                                                  warmup_ratio=0.1, weight_decay=0.01, eval_batch_size=16,
                                                  patience=None)  # run_all.sh:75 --patience 100000
    files: ClassVar[DataFiles] = DataFiles("wos", "wos-v1*_train.json", "wos-v1*_dev.json", "wos")
    split_unit: ClassVar[str] = "dialogue"

    def __init__(self, data_dir: Path | None = None) -> None:
        super().__init__(data_dir)
        self._ontology: dict[str, list[str]] | None = None
        self._ontology_path: Path | None = None
        self.tokenizer: Any = None  # set by `encode`: `predictions` decodes generated tokens with it

    # ---- ontology ------------------------------------------------------------------------------
    def ontology_for(self, near: Path | None = None) -> dict[str, list[str]]:
        if self._ontology is None:
            path = find_ontology(self.data_dir) or find_ontology(near)
            if path is None:
                raise DataError(f"no {ONTOLOGY_FILE} in {self.data_dir} (or its wos/ folder)"
                                + (f" or {near}" if near else "") + ": DST needs the slot list")
            self._ontology, self._ontology_path = load_ontology(path), path
        return self._ontology

    @property
    def slots(self) -> list[str]:
        return sorted(self.ontology_for())

    # ---- reading -------------------------------------------------------------------------------
    def read_file(self, path: Path) -> list[Example]:
        """Every user turn of every dialogue, in file order."""
        path = Path(path)
        self.ontology_for(path.parent)
        out: list[Example] = []
        for i, dial in enumerate(load_json_list(path)):
            out.extend(self.parse_dialogue(dial, f"{path}: dialogue {i}"))
        return out

    def parse_record(self, rec: dict, where: str) -> Example:
        raise DataError(f"{where}: a WoS record is a whole dialogue (several examples): read the official JSON "
                        "file with read_file; the HF copy is not supported for DST")

    def from_hf(self, row: dict, features: Any) -> dict:
        raise DataError("the HF `klue`/`wos` copy is not supported: use the official wos-v1.1_*.json files")

    def parse_state(self, state: Any, where: str, field: str = "state", gold: bool = True) -> list[str]:
        """A list of "domain-slot-value" strings, each naming an ontology slot, at most one value per slot."""
        if not isinstance(state, list):
            raise DataError(f"{where}: field {field!r} should be a list of 'domain-slot-value' strings, "
                            f"got {state!r}")
        slots = self.ontology_for()
        seen: dict[str, str] = {}
        for n, item in enumerate(state):
            at = f"{where}: field {field!r}[{n}]"
            if not isinstance(item, str):
                raise DataError(f"{at} should be a 'domain-slot-value' string, got {item!r}")
            parts = split_slot(item)
            if parts is None:
                raise DataError(f"{at} = {item!r} is not 'domain-slot-value'")
            name = f"{parts[0]}-{parts[1]}"
            if name not in slots:
                raise DataError(f"{at} = {item!r}: unknown domain-slot {name!r} (not in {self._ontology_path})")
            if gold and not parts[2].strip():
                raise DataError(f"{at} = {item!r}: empty value")
            if name in seen and seen[name] != parts[2]:
                raise DataError(f"{at} = {item!r}: slot {name!r} already has the value {seen[name]!r}")
            seen[name] = parts[2]
        return list(state)

    def parse_dialogue(self, dial: Any, where: str) -> list[Example]:
        guid = require(dial, "guid", str, where)
        where = f"{where} (guid {guid})"
        domains = dial.get("domains", [])
        if not isinstance(domains, list) or not all(isinstance(d, str) for d in domains):
            raise DataError(f"{where}: field 'domains' should be a list of strings, got {domains!r}")
        turns = require(dial, "dialogue", list, where)
        examples: list[Example] = []
        history: list[dict[str, str]] = []  # (system, user) pairs of the earlier user turns
        previous: list[str] = []
        for idx, turn in enumerate(turns):
            at = f"{where}: dialogue[{idx}]"
            role = require(turn, "role", str, at)
            text = require(turn, "text", str, at)
            if role not in ("user", "sys"):
                raise DataError(f"{at}: field 'role' should be 'user' or 'sys', got {role!r}")
            if role != "user":
                continue
            state = self.parse_state(require(turn, "state", list, at), at)
            system = turns[idx - 1].get("text", "") if idx else ""
            k = len(examples)
            examples.append({"guid": f"{guid}-{k}", "dialogue_guid": guid, "turn": k, "domains": list(domains),
                             "history": [dict(p) for p in history], "system": system, "user": text,
                             "state": state, "previous_state": list(previous)})
            history.append({"system": system, "user": text})
            previous = state
        if not examples:
            raise DataError(f"{where}: a dialogue without user turns")
        return examples

    def split_key(self, ex: Example) -> str:
        """The dialogue: all its turns land on one side of the dev split."""
        return str(ex["dialogue_guid"])

    # ---- features and model --------------------------------------------------------------------
    def input_ids(self, ex: Example, tokenizer: Any, max_length: int,
                  cache: dict[str, list[int]] | None = None) -> list[int]:
        """`[CLS] history [SEP] sys [SEP] user [SEP]` (module doc), the oldest tokens cut beyond `max_length`.
        `cache` keeps each utterance's ids: every later turn of a dialogue repeats the whole history."""
        sep = tokenizer.sep_token_id
        memo: dict[str, list[int]] = {} if cache is None else cache

        def tok(text: str) -> list[int]:
            if text not in memo:
                memo[text] = list(tokenizer(text, add_special_tokens=False)["input_ids"]) if text else []
            return memo[text]

        history: list[int] = []
        for pair in ex["history"]:
            if history:
                history.append(sep)
            history += tok(pair["system"]) + [sep] + tok(pair["user"])
        ids = history + [sep] + tok(ex["system"]) + [sep] + tok(ex["user"])
        room = max_length - 2
        if len(ids) > room:
            ids = ids[len(ids) - room:]
        return [tokenizer.cls_token_id] + ids + [sep]

    def encode(self, examples: list[Example], tokenizer: Any, max_length: int) -> list[Feature]:
        self.tokenizer = tokenizer
        slots = self.slots
        value_ids: dict[str, list[int]] = {}

        def target(value: str) -> list[int]:
            if value not in value_ids:
                value_ids[value] = list(tokenizer(value, add_special_tokens=False)["input_ids"])
            return value_ids[value] + [tokenizer.sep_token_id]

        feats = []
        utterances: dict[str, list[int]] = {}
        for i, ex in enumerate(examples):
            state = {}
            for item in ex["state"]:
                d, s, v = split_slot(item) or ("", "", "")
                state[f"{d}-{s}"] = v
            gates, targets = [], []
            for slot in slots:
                value = state.get(slot, "none")
                gates.append(GATE_NONE if slot not in state else GATE_OF_VALUE.get(value, GATE_PTR))
                targets.append(target(value))
            ids = self.input_ids(ex, tokenizer, max_length, utterances)
            feats.append({"input_ids": ids, "attention_mask": [1] * len(ids), "gating_ids": gates,
                          "target_ids": targets, "example_index": i})
        return feats

    def build_model(self, model_dir: Path, tokenizer: Any, random_init: bool,
                    hp: Hyperparams | None = None) -> Any:
        """`AutoModel` (safetensors, fp32; fresh weights of the same shape with `random_init`) under the TRADE
        generator of `finetune.dst_model`, one query per ontology slot; `hp.ptr_values_only` goes to the head."""
        # lazy: torch (the tracker's module)
        from finetune.dst_model import StateTracker, TrackerConfig

        self.tokenizer = tokenizer
        encoder = load_encoder(Path(model_dir), tokenizer, random_init)
        slots = self.slots
        slot_ids = [list(tokenizer(s.replace("-", " "), add_special_tokens=False)["input_ids"]) for s in slots]
        head = TrackerConfig(pad_token_id=int(tokenizer.pad_token_id),
                             dropout=hidden_dropout(encoder.config),
                             own_pooler=StateTracker.needs_own_pooler(encoder),
                             ptr_values_only=bool(hp is not None and hp.ptr_values_only))
        return StateTracker(encoder, head, slots, slot_ids)

    def load_finetuned(self, directory: Path) -> Any:
        """The tracker a run saved (`StateTracker.from_pretrained`: the encoder's architecture from its config.json,
        the head from tracker.json, every weight from model.safetensors)."""
        # lazy: torch (the tracker's module)
        from finetune.dst_model import StateTracker

        return StateTracker.from_pretrained(directory)

    def collator(self, tokenizer: Any) -> Any:
        return DstCollator(int(tokenizer.pad_token_id))

    def eval_outputs(self, model: Any, batch: dict) -> Any:
        """(batch, J × (1 + steps)): each slot's gate id, then its generated token ids, slot after slot. Through
        `forward` (greedy without targets), which a distributed wrapper of the model passes on."""
        import torch

        out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
        return torch.cat([out.gate_logits.argmax(-1).unsqueeze(-1), out.tokens], dim=-1).flatten(1)

    def recover_state(self, row: np.ndarray, tokenizer: Any) -> list[str]:
        slots = self.slots
        table = np.asarray(row).reshape(len(slots), -1)
        special = set(tokenizer.all_special_ids)
        out = []
        for slot, cells in zip(slots, table, strict=True):
            gate = int(cells[0])
            if gate == GATE_NONE:
                continue
            if gate != GATE_PTR:
                out.append(f"{slot}-{['none', 'dontcare', 'ptr', 'yes', 'no'][gate]}")
                continue
            value = recover_value([int(t) for t in cells[1:] if t != -100], special, tokenizer)
            if value == "none":
                continue
            out.append(f"{slot}-{value}")
        return out

    def predictions(self, outputs: np.ndarray, features: list[Feature], examples: list[Example]) -> list[dict]:
        if self.tokenizer is None:
            raise RuntimeError("DstTask.predictions needs the tokenizer that encoded the features")
        out = np.asarray(outputs)
        by_example = {f["example_index"]: row for f, row in zip(features, out, strict=True)}
        return [{"guid": ex["dialogue_guid"], "turn": ex["turn"],
                 "state": self.recover_state(by_example[i], self.tokenizer)} for i, ex in enumerate(examples)]

    # ---- scoring -------------------------------------------------------------------------------
    def prediction_key(self, rec: dict) -> str:
        return f"{rec['guid']}-{rec['turn']}"

    def unknown_prediction(self, rec: dict, where: str, golds: list[Example]) -> DataError:
        """Which field of a record that matches no gold turn is wrong: the dialogue or the turn number."""
        turns = [g["turn"] for g in golds if g["dialogue_guid"] == rec["guid"]]
        if not turns:
            return DataError(f"{where}: field 'guid' = {rec['guid']!r} is not a dialogue of the gold file")
        return DataError(f"{where}: field 'turn' = {rec['turn']} is out of range: dialogue {rec['guid']!r} has "
                         f"{len(turns)} user turns (0 to {max(turns)}; 'turn' counts user turns)")

    def check_prediction(self, rec: dict, where: str) -> dict:
        require(rec, "guid", str, where)
        turn = require(rec, "turn", int, where)
        if turn < 0:
            raise DataError(f"{where}: field 'turn' should be a user-turn index >= 0, got {turn}")
        self.parse_state(require(rec, "state", list, where), where, gold=False)
        return rec

    def compute_metrics(self, preds: list[dict], golds: list[Example]) -> dict[str, Any]:
        return dst_scores([p["state"] for p in preds], [g["state"] for g in golds])

    def main_metric_stats(self, preds: list[dict], golds: list[Example]) -> ExampleStats | None:
        """The official "slot micro F1" is the mean over user turns of each turn's F1: one score per turn."""
        if self.main_metric != "slot_micro_f1":
            return None
        return mean_stats([wos_turn_f1(g["state"], p["state"]) for p, g in zip(preds, golds, strict=True)])

    entry = TaskEntry("Dialogue state tracking (WoS, TRADE-style generator)", ("joint_goal_acc", "slot_micro_f1"),
                      "slot_micro_f1", columns=(
        Column("joint_goal_acc", "DST JGA", klue_published(35.46, 39.82, 41.20, 45.33, 41.58, 48.99, 45.65, 47.48, 50.49)),
        Column("slot_micro_f1", "DST slot F1", klue_published(88.63, 89.61, 89.80, 90.70, 89.60, 91.86, 91.22, 91.55, 92.11))))


class DstCollator:
    """Pads `input_ids` (pad id), `attention_mask` (0) and the value matrix `target_ids` (B, J, L) with the
    pad id, which the generation loss masks; `gating_ids` (B, J) need no padding."""

    def __init__(self, pad_id: int) -> None:
        self.pad_id = pad_id

    def __call__(self, feats: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        width = max(len(f["input_ids"]) for f in feats)
        value_len = max(len(t) for f in feats for t in f["target_ids"])
        batch = {
            "input_ids": torch.tensor([f["input_ids"] + [self.pad_id] * (width - len(f["input_ids"]))
                                       for f in feats]),
            "attention_mask": torch.tensor([f["attention_mask"] + [0] * (width - len(f["attention_mask"]))
                                            for f in feats]),
            "gating_ids": torch.tensor([f["gating_ids"] for f in feats]),
            "target_ids": torch.tensor([[t + [self.pad_id] * (value_len - len(t)) for t in f["target_ids"]]
                                        for f in feats]),
        }
        return batch
