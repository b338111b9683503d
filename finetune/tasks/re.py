"""KLUE-RE: relation between a marked subject and object entity; 30 labels; micro F1 (no_relation excluded)
and AUPRC.

Reference: KLUE-baseline `klue_baseline/data/klue_re.py`: entity markers `<subj>`, `</subj>`, `<obj>`, `</obj>`
are added as special tokens around `sentence[start_idx:end_idx + 1]` (`end_idx` is inclusive), and after an
end marker glued to the next syllable (no space) the following Hangul token becomes a continuation piece
(`##`), so markers do not change how a word is split. `run_all.sh`: lr 5e-5, 3 epochs, batch 32, warmup 0.1,
max length 256. Labels are in `relation_list.json` order.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from finetune.example_stats import ExampleStats, micro_f1_stats, per_class_counts
from finetune.metrics import re_auprc, re_micro_f1
from finetune.records import Column, DataError, Example, Feature, TaskEntry, require
from finetune.tasks.base import ClassificationTask, DataFiles, Hyperparams, klue_published

SUBJ_START, SUBJ_END, OBJ_START, OBJ_END = "<subj>", "</subj>", "<obj>", "</obj>"
MARKERS = [SUBJ_START, SUBJ_END, OBJ_START, OBJ_END]
RELATION_FILE = "relation_list.json"

# The official `relation_list.json` of KLUE-RE v1.1, used when no such file sits beside the data.
OFFICIAL_RELATIONS = [
    "no_relation", "org:dissolved", "org:founded", "org:place_of_headquarters", "org:alternate_names",
    "org:member_of", "org:members", "org:political/religious_affiliation", "org:product", "org:founded_by",
    "org:top_members/employees", "org:number_of_employees/members", "per:date_of_birth", "per:date_of_death",
    "per:place_of_birth", "per:place_of_death", "per:place_of_residence", "per:origin", "per:employee_of",
    "per:schools_attended", "per:alternate_names", "per:parents", "per:children", "per:siblings", "per:spouse",
    "per:other_family", "per:colleagues", "per:product", "per:religion", "per:title",
]


def load_relation_list(data_dir: Path | None) -> list[str]:
    """`relation_list.json` from the data folder (or its `re/` subfolder), else the official list."""
    for cand in ([data_dir / RELATION_FILE, data_dir / "re" / RELATION_FILE] if data_dir else []):
        if cand.is_file():
            try:
                relations = json.loads(cand.read_text(encoding="utf-8"))["relations"]
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                raise DataError(f"{cand}: expected {{\"relations\": [...]}}: {e}") from e
            if "no_relation" not in relations:
                raise DataError(f"{cand}: the relation list has no 'no_relation' label")
            return list(relations)
    return list(OFFICIAL_RELATIONS)


def mark_entities(text: str, subj: tuple[int, int], obj: tuple[int, int]) -> str:
    """Wraps the two inclusive character ranges in markers; overlapping entities cannot be marked."""
    (s0, s1), (o0, o1) = subj, obj
    if not (s1 < o0 or o1 < s0):
        raise ValueError(f"subject {subj} and object {obj} overlap")
    spans = sorted([(s0, s1, SUBJ_START, SUBJ_END), (o0, o1, OBJ_START, OBJ_END)])
    out, pos = [], 0
    for start, end, open_m, close_m in spans:
        out += [text[pos:start], open_m, text[start:end + 1], close_m]
        pos = end + 1
    out.append(text[pos:])
    return "".join(out)


def _is_hangul(ch: str) -> bool:
    return "가" <= ch <= "힣"


class ReTask(ClassificationTask):
    name: ClassVar[str] = "re"
    defaults: ClassVar[Hyperparams] = Hyperparams(learning_rate=5e-5, batch_size=32, max_length=256, epochs=3,
                                                  patience=None)  # run_all.sh:48 --patience 10000
    files: ClassVar[DataFiles] = DataFiles("re", "klue-re-v1*_train.json", "klue-re-v1*_dev.json", "re")

    def __init__(self, data_dir: Path | None = None) -> None:
        super().__init__(data_dir)
        self.labels = load_relation_list(data_dir)

    def _entity(self, rec: dict, key: str, sentence: str, where: str) -> tuple[int, int]:
        ent = require(rec, key, dict, where)
        start = require(ent, "start_idx", int, f"{where} {key}")
        end = require(ent, "end_idx", int, f"{where} {key}")
        if not 0 <= start <= end < len(sentence):
            raise DataError(f"{where}: {key} span [{start}, {end}] (end inclusive) is outside the sentence "
                            f"of {len(sentence)} characters")
        word = ent.get("word")
        if word is not None and sentence[start:end + 1] != word:
            raise DataError(f"{where}: {key} word {word!r} != sentence[{start}:{end}+1] = "
                            f"{sentence[start:end + 1]!r} (end_idx is inclusive)")
        return start, end

    def parse_record(self, rec: dict, where: str) -> Example:
        sentence = require(rec, "sentence", str, where)
        subj = self._entity(rec, "subject_entity", sentence, where)
        obj = self._entity(rec, "object_entity", sentence, where)
        try:
            marked = mark_entities(sentence, subj, obj)
        except ValueError as e:
            raise DataError(f"{where}: {e}") from e
        return {"guid": require(rec, "guid", str, where), "text": marked,
                "label": self.label_index(rec, "label", where)}

    def texts(self, ex: Example) -> tuple[str, str | None]:
        return ex["text"], None

    def prepare_tokenizer(self, tokenizer: Any) -> None:
        tokenizer.add_special_tokens({"extra_special_tokens": MARKERS}, replace_extra_special_tokens=False)

    def encode(self, examples: list[Example], tokenizer: Any, max_length: int) -> list[Feature]:
        texts = [ex["text"] for ex in examples]
        enc = tokenizer(texts, truncation=True, max_length=max_length, return_offsets_mapping=True)
        vocab = tokenizer.get_vocab()
        feats = []
        for i, ex in enumerate(examples):
            ids = list(enc["input_ids"][i])
            glue_continuations(texts[i], ids, enc["offset_mapping"][i], tokenizer, vocab)
            feats.append({"input_ids": ids, "attention_mask": enc["attention_mask"][i], "labels": ex["label"],
                          "example_index": i})
        return feats

    def predictions(self, outputs: np.ndarray, features: list[Feature], examples: list[Example]) -> list[dict]:
        logits = np.asarray(outputs, dtype=np.float64)
        probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
        probs /= probs.sum(axis=-1, keepdims=True)
        idx = self.predicted_indices(logits)
        # Full precision (JSON writes a float64 so that it reads back the same): AUPRC ranks these, and a near-flat
        # softmax rounded to a few decimals becomes ties, which the trapezoid `auc` of a PR curve rewards (constant
        # probabilities score ~52, `finetune.metrics.re_auprc`). What is written is what the metric used.
        return [{"guid": examples[f["example_index"]]["guid"], "label": self.labels[int(k)],
                 "probs": [float(x) for x in p]} for f, k, p in zip(features, idx, probs, strict=True)]

    def check_prediction(self, rec: dict, where: str) -> dict:
        super().check_prediction(rec, where)
        if "probs" in rec:
            probs = rec["probs"]
            if not isinstance(probs, list) or len(probs) != len(self.labels):
                raise DataError(f"{where}: probs must be a list of {len(self.labels)} numbers in "
                                f"{RELATION_FILE} order, got {type(probs).__name__} of length "
                                f"{len(probs) if isinstance(probs, list) else '-'}")
            if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                       and 0.0 <= x <= 1.0 for x in probs):
                raise DataError(f"{where}: probs must be probabilities in [0, 1]")
            if abs(sum(probs) - 1.0) > 0.01:
                raise DataError(f"{where}: probs sum to {sum(probs):.4f}, not 1 (softmax probabilities expected)")
        return rec

    def compute_metrics(self, preds: list[dict], golds: list[Example]) -> dict[str, Any]:
        p, g = self.gold_and_pred_indices(preds, golds)
        out: dict[str, Any] = {"micro_f1": re_micro_f1(p, g, self.labels)}
        with_probs = sum("probs" in x for x in preds)
        if with_probs == len(preds) and preds:
            score, absent = re_auprc(np.array([x["probs"] for x in preds]), g, len(self.labels))
            out["auprc"] = score
            if absent:
                out["auprc_classes_absent_from_gold"] = [self.labels[c] for c in absent]
        elif with_probs:
            raise DataError(f"only {with_probs} of {len(preds)} predictions have probs; AUPRC needs all or none")
        else:
            out["auprc"] = None  # no probabilities given: AUPRC cannot be computed
        return out

    def main_metric_stats(self, preds: list[dict], golds: list[Example]) -> ExampleStats | None:
        """Micro F1 without `no_relation`: per pair, TP, predicted and gold relations (0 or 1 each)."""
        if self.main_metric != "micro_f1":
            return None
        p, g = self.gold_and_pred_indices(preds, golds)
        relations = [i for i, name in enumerate(self.labels) if name != "no_relation"]
        tp, fp, fn = per_class_counts(g, p, relations)
        return micro_f1_stats(tp.sum(axis=1), (tp + fp).sum(axis=1), (tp + fn).sum(axis=1))

    entry = TaskEntry("Relation extraction (KLUE-RE)", ("micro_f1", "auprc"), "micro_f1", columns=(
        Column("micro_f1", "RE F1", klue_published(57.88, 57.46, 58.39, 62.74, 62.85, 66.44, 60.85, 66.66, 69.59)),
        Column("auprc", "RE AUPRC", klue_published(53.82, 54.98, 61.15, 60.94, 58.94, 66.17, 58.76, 67.74, 72.39))))


def glue_continuations(text: str, ids: list[int], offsets: list, tokenizer: Any, vocab: dict) -> None:
    """KLUE-baseline's `fix_tokenization_error` for WordPiece, on ids: when an end marker is glued to the next
    syllable, the token after it becomes `##token`. Unlike KLUE-baseline we keep the token when `##token` is
    not in the vocabulary (it would otherwise become [UNK])."""
    for marker in (SUBJ_END, OBJ_END):
        pos = text.find(marker)
        if pos < 0:
            continue
        after = pos + len(marker)
        if after >= len(text) or text[after] == " ":
            continue
        for j, (start, end) in enumerate(offsets):
            if start == after and end > start:
                token = tokenizer.convert_ids_to_tokens(ids[j])
                if not token.startswith("##") and _is_hangul(token[0]) and f"##{token}" in vocab:
                    ids[j] = vocab[f"##{token}"]
                break
