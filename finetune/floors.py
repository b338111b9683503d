"""Floors: what a task scores without any model, on exactly the evaluation examples `klue finetune` uses (same
split, same `--eval-fraction`, same `--max-eval-examples` sample), so a fine-tuned score can be read against
what lexical matching alone gets.

KLUE-MRC: the sliding-window baseline of the SQuAD paper (Rajpurkar et al. 2016, §5), after Richardson et al.
2013 (MCTest): every span of up to `max_words` words of the passage is a candidate answer; its score is the
summed inverse-count weight log(1 + 1/count) of the distinct question words found in the words around it
(`window` words on each side, the candidate itself excluded: as many words as the question has, Richardson's
window size); the best-scoring span wins (on a tie the shorter, then the earlier one). A candidate that
repeats a question word is skipped (an answer rarely restates the question). It never answers "no answer", so
it scores 0 on unanswerable questions.

Adapted to Korean, where the words of the question and the passage carry different particles ("서울은" /
"서울의"): words are whitespace-separated eojeols, compared after the KLUE-MRC answer normalisation and the
removal of one trailing particle from a fixed list (`PARTICLES`), a passage word matching a question word when
one starts with the other (two characters at least: "지명수배" / "지명수배되었다"), and the predicted text drops the trailing
punctuation and particle of its last word (gold answers rarely include them: "서울", not "서울은"). Scores
use the official metrics (`finetune.metrics.mrc_scores`).

WoS DST: "carry the previous turn's state and add nothing". Each user turn is predicted with the **gold**
state of the dialogue's previous user turn (the empty state for the first), so it is an oracle-history floor:
it knows every earlier turn's correct state and scores exactly the turns where the current user turn changes
nothing (the closing "thank you" turns, for example). A model that tracks the state itself has to beat it
without that oracle. (Carrying the floor's own previous prediction instead would predict the empty state on
every turn.)

Usage: python -m finetune.floors mrc --data-dir $KLUE_DATA_DIR/klue --output out/mrc-floor
       python -m finetune.floors dst --data-dir DIR_WITH_wos/ --output out/dst-floor
(writes predictions.jsonl, metrics.json in the layout of a `klue finetune` run, so `python -m finetune.results`
tabulates it as a row "sliding-window floor" / "previous-state floor", and summary.txt).
"""

from __future__ import annotations

import argparse
import math
import re
import string
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from finetune.metrics import mrc_normalize
from finetune.records import Example

if TYPE_CHECKING:
    from finetune.data import SplitMode

# Common Korean particles and copula endings, longest first so "에서" is removed before "서" could be.
PARTICLES: tuple[str, ...] = tuple(sorted(
    ["은", "는", "이", "가", "을", "를", "의", "에", "로", "와", "과", "도", "만", "에서", "에게", "으로", "부터",
     "까지", "이다", "였다", "이며", "에는", "에서는", "으로는", "이라는", "라는", "처럼", "보다", "하고", "한테"],
    key=len, reverse=True))
_WORD = re.compile(r"\S+")
_PUNCT = string.punctuation + "“”‘’《》〈〉「」『』…·"


def _strip_particle(word: str) -> str:
    """The word without one trailing particle (kept whole when that would leave nothing)."""
    for p in PARTICLES:
        if word.endswith(p) and len(word) > len(p):
            return word[: -len(p)]
    return word


def word_key(word: str) -> str:
    """How words are compared: the official answer normalisation, then one trailing particle removed."""
    return _strip_particle(mrc_normalize(word).strip(_PUNCT))


def _matching_key(key: str, q_keys: set[str]) -> str | None:
    """The question word a passage word stands for (equal keys, or one a prefix of the other, both at least two
    characters; the longest such question word), else None."""
    if key in q_keys:
        return key
    if len(key) < 2:
        return None
    hits = [q for q in q_keys if len(q) >= 2 and (key.startswith(q) or q.startswith(key))]
    return max(hits, key=lambda q: (len(q), q)) if hits else None


def _answer_end(context: str, start: int, end: int) -> int:
    """End offset of a candidate's last word without its trailing punctuation and particle."""
    word = context[start:end].rstrip(_PUNCT)
    return start + len(_strip_particle(word)) if word else end


def sliding_window_answer(question: str, context: str, max_words: int = 3, window: int | None = None) -> str:
    """The floor's answer to one question (module doc); "" when no candidate is left."""
    words = [(m.start(), m.end()) for m in _WORD.finditer(context)]
    keys = [word_key(context[s:e]) for s, e in words]
    q_keys = {word_key(w) for w in question.split()} - {""}
    if not words or not q_keys:
        return ""
    # a passage word matches a question word when one key starts with the other (two characters at least):
    # "지명수배" and "지명수배되었다" are one word with different endings
    matched = [_matching_key(k, q_keys) for k in keys]
    count = Counter(matched)
    weight = {q: math.log(1.0 + 1.0 / count[q]) for q in q_keys if q in count}
    width = window if window is not None else len(q_keys)
    best: tuple[float, int, int] | None = None  # (score, -length, -start) compared as a max
    best_span = (0, 0)
    for i in range(len(words)):
        for j in range(i, min(i + max_words, len(words))):
            if any(m is not None for m in matched[i:j + 1]):
                continue
            around = set(matched[max(0, i - width):i]) | set(matched[j + 1:j + 1 + width])
            score = sum(weight[q] for q in around if q is not None)
            rank = (score, -(j - i), -i)
            if best is None or rank > best:
                best, best_span = rank, (i, j)
    if best is None:
        return ""
    i, j = best_span
    start = words[i][0]
    return context[start:_answer_end(context, words[j][0], words[j][1])]


def mrc_floor_predictions(examples: Sequence[Example], max_words: int = 3) -> list[dict[str, str]]:
    """Prediction records (`{"guid", "answer"}`, the format `klue score mrc` reads) for MRC examples."""
    return [{"guid": ex["guid"], "answer": sliding_window_answer(ex["question"], ex["context"], max_words)}
            for ex in examples]


def dst_floor_predictions(examples: Sequence[Example]) -> list[dict[str, Any]]:
    """Prediction records (`{"guid", "turn", "state"}`, the format `klue score dst` reads): each user turn gets
    the gold state of the previous user turn of its dialogue (empty for the first turn)."""
    return [{"guid": ex["dialogue_guid"], "turn": ex["turn"], "state": list(ex["previous_state"])}
            for ex in examples]


FLOORS: dict[str, tuple[str, dict[str, Any]]] = {
    "mrc": ("sliding-window floor", {"method": "sliding window (Rajpurkar et al. 2016 after Richardson et al. 2013)"}),
    "dst": ("previous-state floor", {"method": "the previous user turn's gold state, nothing added (oracle history)"}),
}


def run_floor(task_name: str, data_dir: Path, output: Path, split: SplitMode = "auto", eval_fraction: float = 0.2,
              max_eval: int | None = None, max_words: int = 3) -> dict[str, Any]:
    """A task's floor on the evaluation examples of `klue finetune TASK` with the same data arguments;
    writes `predictions.jsonl`, `metrics.json` (a run's layout, seeds empty: it is deterministic) and
    `summary.txt` under `output`."""
    if task_name == "mrc":
        return run_mrc_floor(data_dir, output, split, eval_fraction, max_eval, max_words)
    from finetune.data import load_task_data, write_json, write_jsonl
    from finetune.registry import get_task
    from pipeline import io

    task = get_task(task_name, data_dir=data_dir)
    data = load_task_data(task, data_dir, split=split, eval_fraction=eval_fraction, max_eval=max_eval)
    preds = dst_floor_predictions(data.eval)
    metrics = task.compute_metrics(preds, data.eval)
    label, floor = FLOORS[task_name]
    output = Path(output)
    write_jsonl(output / "predictions.jsonl", preds)
    summary = {"task": task.name, "label": label, "model": None, "random_init": False, "floor": floor,
               "metric_names": list(task.metric_names), "main_metric": task.main_metric,
               "mean": {k: metrics.get(k) for k in task.metric_names},
               "std": {k: 0.0 for k in task.metric_names}, "seeds": [], "per_seed": {}, "metrics": metrics,
               "data": data.source}
    write_json(output / "metrics.json", summary)
    line = (f"{task.name}  {label}  " + "  ".join(f"{k} {metrics[k]:.2f}" for k in task.metric_names)
            + f"  [eval: {data.source['split']}, n={data.source['n_eval']}]")
    io.write_text(output / "summary.txt", line + "\n")
    return summary


def run_mrc_floor(data_dir: Path, output: Path, split: SplitMode = "auto", eval_fraction: float = 0.2,
                  max_eval: int | None = None, max_words: int = 3) -> dict[str, Any]:
    """Scores the floor on the evaluation examples of `klue finetune mrc` with the same data arguments and
    writes `predictions.jsonl`, `metrics.json` (the layout of a run's, seeds empty: it is deterministic) and
    `summary.txt` under `output`."""
    from finetune.data import load_task_data, write_json, write_jsonl
    from finetune.registry import get_task
    from pipeline import io

    task = get_task("mrc", data_dir=data_dir)
    data = load_task_data(task, data_dir, split=split, eval_fraction=eval_fraction, max_eval=max_eval)
    preds = mrc_floor_predictions(data.eval, max_words)
    metrics = task.compute_metrics(preds, data.eval)
    output = Path(output)
    write_jsonl(output / "predictions.jsonl", preds)
    summary = {"task": task.name, "label": "sliding-window floor", "model": None, "random_init": False,
               "floor": {"method": "sliding window (Rajpurkar et al. 2016 after Richardson et al. 2013)",
                         "max_words": max_words},
               "metric_names": list(task.metric_names), "main_metric": task.main_metric,
               "mean": {k: metrics.get(k) for k in task.metric_names},
               "std": {k: 0.0 for k in task.metric_names}, "seeds": [], "per_seed": {}, "metrics": metrics,
               "data": data.source}
    write_json(output / "metrics.json", summary)
    line = (f"{task.name}  sliding-window floor  "
            + "  ".join(f"{k} {metrics[k]:.2f}" for k in task.metric_names)
            + f"  [eval: {data.source['split']}, n={data.source['n_eval']}]")
    io.write_text(output / "summary.txt", line + "\n")
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m finetune.floors", description=__doc__.split("\n\n")[0])
    parser.add_argument("task", choices=sorted(FLOORS))
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--split", choices=["auto", "official", "dev-split"], default="auto")
    parser.add_argument("--eval-fraction", type=float, default=0.2)
    parser.add_argument("--max-eval-examples", type=int)
    parser.add_argument("--max-words", type=int, default=3, help="MRC: longest candidate answer, in words")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    from finetune.records import DataError

    try:
        run_floor(args.task, args.data_dir, args.output, args.split, args.eval_fraction, args.max_eval_examples,
                  args.max_words)
    except DataError as e:
        raise SystemExit(f"error: {e}") from None
    print((args.output / "summary.txt").read_text(encoding="utf-8").strip())


if __name__ == "__main__":
    main()
