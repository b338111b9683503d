"""Scores a predictions file against an official gold file, so any model's output can be compared with KLUE.

Predictions are JSON lines keyed by guid: YNAT/NLI/RE `{"guid", "label"}` (RE optionally `"probs"`), STS
`{"guid", "score"}`, NER `{"guid", "tags": [one tag per character of the sentence, spaces included]}`, DP
`{"guid", "heads": [...], "deprels": [...]}` (one of each per eojeol), MRC `{"guid", "answer": "..."}` ("" for
"no answer"), DST `{"guid": dialogue guid, "turn": k, "state": ["domain-slot-value", ...]}` (k counts the
dialogue's user turns from 0; the record's key is `guid-k`, the gold turn's guid). Every gold guid must be predicted exactly
once and no other guid may appear: a partial or mismatched file is an error, never a silently smaller
evaluation. A record that does not line up with its gold sentence (wrong number of tags or heads, a head
outside the sentence) is an error naming the file, the line and the field. `allow_subset` (for runs that
evaluated on a guid-hash split of dev) scores only the predicted guids and says so in the result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from finetune.records import DataError, read_jsonl
from finetune.registry import get_task


def _preview(items: list[str], n: int = 5) -> str:
    return ", ".join(items[:n]) + (f", ... ({len(items)} in all)" if len(items) > n else "")


def score_file(task_name: str, gold: Path, pred: Path, allow_subset: bool = False) -> dict[str, Any]:
    gold, pred = Path(gold), Path(pred)
    task = get_task(task_name, data_dir=gold.parent)
    golds = task.read_file(gold)
    by_guid = {g["guid"]: g for g in golds}
    if len(by_guid) != len(golds):
        raise DataError(f"{gold}: duplicate guids in the gold file")

    preds: dict[str, dict] = {}
    for line, rec in read_jsonl(pred):
        where = f"{pred}:{line}"
        task.check_prediction(rec, where)
        guid = task.prediction_key(rec)  # the guid; DST: the dialogue guid and the user turn
        if guid in preds:
            raise DataError(f"{where}: guid {guid!r} is predicted twice")
        if guid in by_guid:
            task.check_aligned(rec, by_guid[guid], where)
        elif (err := task.unknown_prediction(rec, where, golds)) is not None:
            raise err
        preds[guid] = rec
    if not preds:
        raise DataError(f"{pred}: no predictions")
    unknown = [g for g in preds if g not in by_guid]
    if unknown:
        raise DataError(f"{pred}: {len(unknown)} guid(s) not in the gold file {gold}: {_preview(unknown)}")
    missing = [g for g in by_guid if g not in preds]
    if missing and not allow_subset:
        raise DataError(f"{pred}: {len(missing)} gold guid(s) have no prediction: {_preview(missing)} "
                        "(pass --allow-subset to score only the predicted guids)")
    aligned = [g for g in golds if g["guid"] in preds]
    metrics = task.compute_metrics([preds[g["guid"]] for g in aligned], aligned)
    return {"task": task.name, "gold": str(gold), "predictions": str(pred), "n_scored": len(aligned),
            "n_gold": len(golds), "subset": bool(missing), "metrics": metrics}
