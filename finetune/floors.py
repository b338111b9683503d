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

Sentence-level tasks (YNAT, KLUE-STS, KLUE-NLI; JSTS and JNLI): TF-IDF + a linear model, trained on the
training examples of the same split. Features are TF-IDF weights of character 1-3-grams within words
(`char_wb`, `sublinear_tf`, min_df 2: no tokenizer to choose, and robust to Korean particles and to Japanese
text without spaces); for a pair, the pair features of InferSent (Conneau et al. 2017, arXiv 1705.02364: the
element-wise |a - b| and a * b of the two texts' vectors) and their cosine, stacked: what the two texts share
and where they differ, which similarity and entailment first depend on. (Measured: stacking the raw vectors a, b
and a * b instead gave JSTS Pearson 12.5 and KLUE-STS 41.5 against 72.5 and 67.3 with these; JNLI 57.6 vs
74.4.) Classification is
scikit-learn's `LogisticRegression` (lbfgs, C=1, max_iter 1000); STS is `Ridge` (alpha 1), its output clipped to
0-5. It says what surface n-grams alone get on the same split, so a fine-tuned score below it means the model
has not learnt even that; it is deterministic.

Usage: python -m finetune.floors ynat --data-dir $KLUE_DATA_DIR/klue --output out/ynat-floor
       python -m finetune.floors mrc --data-dir $KLUE_DATA_DIR/klue --output out/mrc-floor
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
            # fsum: exactly rounded whatever the set's order (str hashes, so the order, change per process;
            # a plain sum's last bit did, and with it which of two tied spans won)
            score = math.fsum(weight[q] for q in around if q is not None)
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


TFIDF = {"method": "TF-IDF (char_wb 1-3-grams, sublinear tf, min_df 2; pairs: |a-b|, a*b, cosine) + "
                   "LogisticRegression (C=1) / Ridge (alpha=1, STS)"}


def tfidf_floor_predictions(task: Any, train: Sequence[Example], evals: Sequence[Example]) -> list[dict[str, Any]]:
    """Prediction records (`{"guid", "label"}` or, for STS, `{"guid", "score"}`) of the TF-IDF + linear floor,
    fitted on `train`, for `evals`."""
    import numpy as np
    from scipy.sparse import csr_matrix, hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression, Ridge

    def pairs(examples: Sequence[Example]) -> tuple[list[str], list[str] | None]:
        # classification tasks name their texts; the STS tasks' examples are sentence1 / sentence2
        texts = [task.texts(e) if hasattr(task, "texts") else (e["sentence1"], e["sentence2"]) for e in examples]
        return [a for a, _ in texts], None if texts and texts[0][1] is None else [b or "" for _, b in texts]

    (a_train, b_train), (a_eval, b_eval) = pairs(train), pairs(evals)
    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3), min_df=2, sublinear_tf=True)
    vec.fit(a_train + (b_train or []))

    def features(a: list[str], b: list[str] | None) -> Any:
        xa = vec.transform(a)
        if b is None:
            return xa
        xb = vec.transform(b)
        product = xa.multiply(xb)
        cosine = csr_matrix(np.asarray(product.sum(axis=1)))  # rows are L2-normalised: the sum is the cosine
        return hstack([abs(xa - xb), product, cosine]).tocsr()

    x_train, x_eval = features(a_train, b_train), features(a_eval, b_eval)
    y_train = [e["label"] for e in train]
    if task.name in ("sts", "jsts"):
        scores = np.clip(Ridge(alpha=1.0).fit(x_train, y_train).predict(x_eval), 0.0, 5.0)
        return [{"guid": e["guid"], "score": float(s)} for e, s in zip(evals, scores, strict=True)]
    clf = LogisticRegression(C=1.0, max_iter=1000).fit(x_train, y_train)
    return [{"guid": e["guid"], "label": task.labels[int(i)]} for e, i in zip(evals, clf.predict(x_eval), strict=True)]


FLOORS: dict[str, tuple[str, dict[str, Any]]] = {
    **{t: ("TF-IDF + LR floor" if t not in ("sts", "jsts") else "TF-IDF + ridge floor", TFIDF)
       for t in ("ynat", "sts", "nli", "jsts", "jnli")},
    "mrc": ("sliding-window floor", {"method": "sliding window (Rajpurkar et al. 2016 after Richardson et al. 2013)"}),
    "dst": ("previous-state floor", {"method": "the previous user turn's gold state, nothing added (oracle history)"}),
}


def run_floor(task_name: str, data_dir: Path, output: Path, split: SplitMode = "auto", eval_fraction: float = 0.2,
              max_eval: int | None = None, max_words: int = 3, max_train: int | None = None,
              label: str | None = None) -> dict[str, Any]:
    """A task's floor on the evaluation examples of `klue finetune TASK` with the same data arguments;
    writes `predictions.jsonl`, `metrics.json` (a run's layout, seeds empty: it is deterministic) and
    `summary.txt` under `output` (`label`: the row's name in a results table, default the floor's).
    `max_train` caps the training examples of the TF-IDF floors (as `klue
    finetune --max-train-examples` does: the same sample)."""
    if task_name == "mrc":
        return run_mrc_floor(data_dir, output, split, eval_fraction, max_eval, max_words, label=label)
    from finetune.data import load_task_data, write_json
    from finetune.registry import get_task
    from pipeline import io
    from pipeline.io import write_jsonl

    task = get_task(task_name, data_dir=data_dir)
    data = load_task_data(task, data_dir, split=split, eval_fraction=eval_fraction, max_train=max_train,
                          max_eval=max_eval)
    preds = dst_floor_predictions(data.eval) if task_name == "dst" else tfidf_floor_predictions(
        task, data.train, data.eval)
    metrics = task.compute_metrics(preds, data.eval)
    name, floor = FLOORS[task_name]
    label = label or name
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
                  max_eval: int | None = None, max_words: int = 3, label: str | None = None) -> dict[str, Any]:
    """Scores the floor on the evaluation examples of `klue finetune mrc` with the same data arguments and
    writes `predictions.jsonl`, `metrics.json` (the layout of a run's, seeds empty: it is deterministic) and
    `summary.txt` under `output`."""
    from finetune.data import load_task_data, write_json
    from finetune.registry import get_task
    from pipeline import io
    from pipeline.io import write_jsonl

    task = get_task("mrc", data_dir=data_dir)
    data = load_task_data(task, data_dir, split=split, eval_fraction=eval_fraction, max_eval=max_eval)
    preds = mrc_floor_predictions(data.eval, max_words)
    metrics = task.compute_metrics(preds, data.eval)
    output = Path(output)
    write_jsonl(output / "predictions.jsonl", preds)
    summary = {"task": task.name, "label": label or "sliding-window floor", "model": None, "random_init": False,
               "floor": {"method": "sliding window (Rajpurkar et al. 2016 after Richardson et al. 2013)",
                         "max_words": max_words},
               "metric_names": list(task.metric_names), "main_metric": task.main_metric,
               "mean": {k: metrics.get(k) for k in task.metric_names},
               "std": {k: 0.0 for k in task.metric_names}, "seeds": [], "per_seed": {}, "metrics": metrics,
               "data": data.source}
    write_json(output / "metrics.json", summary)
    line = (f"{task.name}  {summary['label']}  "
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
    parser.add_argument("--max-train-examples", type=int, help="TF-IDF floors: cap on training examples")
    parser.add_argument("--max-words", type=int, default=3, help="MRC: longest candidate answer, in words")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    from finetune.records import DataError

    try:
        run_floor(args.task, args.data_dir, args.output, args.split, args.eval_fraction, args.max_eval_examples,
                  args.max_words, args.max_train_examples)
    except DataError as e:
        raise SystemExit(f"error: {e}") from None
    print((args.output / "summary.txt").read_text(encoding="utf-8").strip())


if __name__ == "__main__":
    main()
