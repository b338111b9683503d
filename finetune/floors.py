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

Trivial floors: predictors that learn nothing but a constant, scored by the task's official metric on the same
evaluation examples. The first question a reviewer asks of a fine-tuned score is whether it beats a constant, and
some official metrics reward a constant more than one would guess: KLUE-RE's micro F1 leaves `no_relation` out
of its label set, so predicting "per:title" for every pair scores 10.00 on the 200 evaluation examples of the
embedded default's run (`pipeline/sample/klue`, `--max-train-examples 800 --max-eval-examples 200`), above its
pretrained model's 1.20 ± 1.70 and near its random-init model's 10.64 ± 1.01
(docs/experiments/2026-12-03-embedded-default.md), while the majority class there, `no_relation`, scores 0;
and a constant's one-hot probabilities score RE AUPRC 50 + 50 / k over k gold classes (ties on a trapezoid PR
curve: `finetune.metrics.re_auprc`; 52.78 there), above that run's 8.78 and 9.80. None of them reads the
evaluation examples' gold annotations (`reads_gold` false); the majority floors read the training labels:
- YNAT, KLUE-NLI, KLUE-RE, JNLI (`majority`): the most frequent label of the training examples, ties to the
  first in the task's label order; RE also writes the constant's one-hot `probs`, so its AUPRC is scored too.
- JCommonsenseQA (`majority`): the most frequent answer position (0-4) of the training questions.
- KLUE-NER (`all-o`): every character tagged O. Entity F1 is 0 wherever gold has an entity; the character macro
  F1 is not: its fixed 13-label set scores a label absent from gold and predictions as 1 (the official quirk,
  `finetune.metrics.ner_char_macro_f1`).
- KLUE-DP (`right-attach`, `left-attach`): every eojeol's head is the next one (the last one's ROOT), or the
  previous one (the first one's ROOT); the ROOT word takes the training split's most frequent DEPREL among
  ROOT-attached words, the others its most frequent DEPREL among the rest. KLUE-DP is strictly head-final (in
  the shared dev file no word of 22,496 has its head on its left, and each sentence's last word is its ROOT),
  so right attachment is the strong one (UAS 59.48, LAS 6.25 macro F1 on the shared file's 402-sentence
  dev split) and left attachment scores 0 on every metric there.
- KLUE-MRC (`no-answer`, `first-window`): the empty answer for every question, which scores exactly the
  questions without a gold answer (KLUE-MRC's unanswerable ones; KorQuAD has none); or the passage's first
  `max_words` whitespace words (3, the sliding-window floor's default).
- WoS DST (`none-state`): the empty state on every user turn, which scores exactly the turns whose gold state
  is empty. Unlike the previous-state floor it reads nothing of the gold.

Every floor's metrics.json says what it is under `floor`: `name` (its id: "no-model" for the TF-IDF, sliding-window and
previous-state floors, else the trivial floor's), `method`, `reads_gold` (true for the previous-state floor alone: an
oracle) and `kind` ("no-model" or "trivial"). `floors_for(TASK)` lists a task's floors, `run_any_floor` runs
one.

Usage: python -m finetune.floors ynat --data-dir $KLUE_DATA_DIR/klue --output out/ynat-floor
       python -m finetune.floors mrc --data-dir $KLUE_DATA_DIR/klue --output out/mrc-floor
       python -m finetune.floors dst --data-dir DIR_WITH_wos/ --output out/dst-floor
       python -m finetune.floors dp --floor right-attach --data-dir $KLUE_DATA_DIR/klue --output out/dp-floor
       python -m finetune.floors mrc --floor all --data-dir $KLUE_DATA_DIR/klue --output out/mrc-floors
(writes predictions.jsonl, metrics.json in the layout of a `klue finetune` run, so `python -m finetune.results`
tabulates it as a row under the floor's label, "sliding-window floor", "majority-class floor", ..., and
summary.txt; `--floor` defaults to the no-model floor where the task has one, else its first trivial floor, and
`--floor all` writes each floor of the task into OUTPUT/NAME/).
"""

from __future__ import annotations

import argparse
import math
import re
import string
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from finetune.data import SELECTION_FRACTION, load_task_data, write_json
from finetune.metrics import mrc_normalize
from finetune.records import DataError, Example
from finetune.registry import get_task, resolve_name
from pipeline import io
from pipeline.io import write_jsonl

if TYPE_CHECKING:
    from finetune.data import Protocol, SplitMode, TaskData

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


NO_MODEL = "no-model"  # the id (`--floor`, metrics.json `floor.name`) of a task's floor in FLOORS


def _no_model(method: str, reads_gold: bool = False) -> dict[str, Any]:
    """A FLOORS entry's metrics.json `floor` record; `reads_gold`: whether it reads the evaluation examples' gold."""
    return {"name": NO_MODEL, "method": method, "reads_gold": reads_gold, "kind": NO_MODEL}


FLOORS: dict[str, tuple[str, dict[str, Any]]] = {
    **{t: ("TF-IDF + LR floor" if t not in ("sts", "jsts") else "TF-IDF + ridge floor", _no_model(TFIDF["method"]))
       for t in ("ynat", "sts", "nli", "jsts", "jnli")},
    "mrc": ("sliding-window floor", _no_model("sliding window (Rajpurkar et al. 2016 after Richardson et al. 2013)")),
    "dst": ("previous-state floor", _no_model("the previous user turn's gold state, nothing added (oracle history)",
                                              reads_gold=True)),
}


@dataclass(frozen=True)
class TrivialFloor:
    """A floor that predicts a constant (module doc): `name` its id (`--floor NAME`, OUTPUT/NAME/ of `--floor
    all`), `label` its row in a results table, `method` what it predicts (metrics.json), `reads_gold` whether it
    reads the evaluation examples' gold annotations."""

    name: str
    label: str
    method: str
    reads_gold: bool

    def record(self) -> dict[str, Any]:
        """Its metrics.json `floor` record."""
        return {"name": self.name, "method": self.method, "reads_gold": self.reads_gold, "kind": "trivial"}


MAJORITY = TrivialFloor("majority", "majority-class floor", "the training examples' most frequent label for every "
                        "example (a tie: the first in the task's label order)", reads_gold=False)
MAJORITY_POSITION = TrivialFloor("majority", "majority-position floor", "the training questions' most frequent "
                                 "answer position for every question (a tie: the first)", reads_gold=False)
ALL_O = TrivialFloor("all-o", "all-O floor", "every character tagged O", reads_gold=False)
_DP_LABELS = ("the training split's most frequent DEPREL of ROOT-attached words for the ROOT word, of the other "
              "words for the rest")
RIGHT_ATTACH = TrivialFloor("right-attach", "right-attach floor", "each eojeol's head is the next one, the last's "
                            f"ROOT; {_DP_LABELS}", reads_gold=False)
LEFT_ATTACH = TrivialFloor("left-attach", "left-attach floor", "each eojeol's head is the previous one, the first's "
                           f"ROOT; {_DP_LABELS}", reads_gold=False)
NO_ANSWER = TrivialFloor("no-answer", "no-answer floor", "the empty answer (unanswerable) for every question",
                         reads_gold=False)
FIRST_WINDOW = TrivialFloor("first-window", "first-window floor", "the passage's first max_words whitespace words",
                            reads_gold=False)
NONE_STATE = TrivialFloor("none-state", "none-state floor", "the empty state on every user turn", reads_gold=False)

TRIVIAL: dict[str, tuple[TrivialFloor, ...]] = {
    "ynat": (MAJORITY,), "nli": (MAJORITY,), "re": (MAJORITY,), "jnli": (MAJORITY,),
    "jcommonsenseqa": (MAJORITY_POSITION,), "ner": (ALL_O,), "dp": (RIGHT_ATTACH, LEFT_ATTACH),
    "mrc": (NO_ANSWER, FIRST_WINDOW), "dst": (NONE_STATE,),
}


def most_frequent(values: Iterable[int], n: int) -> int:
    """The most frequent of the ids 0..n-1 in `values`; a tie goes to the lowest id (the first in the task's label
    order), and no values at all give 0."""
    count = Counter(values)
    return max(range(n), key=lambda i: (count[i], -i))


def majority_predictions(task: Any, train: Sequence[Example], evals: Sequence[Example]) -> list[dict[str, Any]]:
    """`{"guid", "label"}` records of the training examples' most frequent label: its name (JCommonsenseQA: the
    answer position, an int); RE adds the one-hot `probs` of that label (relation_list.json order)."""
    if task.name == "jcommonsenseqa":
        # lazy: a task module loads when its task runs (finetune.registry)
        from finetune.tasks.jcqa import N_CHOICES

        position = most_frequent((e["label"] for e in train), N_CHOICES)
        return [{"guid": e["guid"], "label": position} for e in evals]
    k = most_frequent((e["label"] for e in train), len(task.labels))
    if task.name == "re":
        return [{"guid": e["guid"], "label": task.labels[k], "probs": [float(i == k) for i in range(len(task.labels))]}
                for e in evals]
    return [{"guid": e["guid"], "label": task.labels[k]} for e in evals]


def all_o_predictions(evals: Sequence[Example]) -> list[dict[str, Any]]:
    """`{"guid", "tags"}` records with O for every character of each sentence (spaces included, as gold rows)."""
    return [{"guid": e["guid"], "tags": ["O"] * len(e["text"])} for e in evals]


def dp_constant_labels(train: Sequence[Example]) -> tuple[str, str]:
    """The DEPREL names the attachment floors give: the training split's most frequent among ROOT-attached words
    and among the other words (a tie: the first in KLUE-DP's label order)."""
    # lazy: a task module loads when its task runs (finetune.registry)
    from finetune.tasks.dp import DEP_LABELS

    pairs = [(h, d) for e in train for h, d in zip(e["heads"], e["deprels"], strict=True)]
    root = most_frequent((d for h, d in pairs if h == 0), len(DEP_LABELS))
    other = most_frequent((d for h, d in pairs if h != 0), len(DEP_LABELS))
    return DEP_LABELS[root], DEP_LABELS[other]


def attach_predictions(train: Sequence[Example], evals: Sequence[Example], right: bool) -> list[dict[str, Any]]:
    """`{"guid", "heads", "deprels"}` records (heads 1-based, 0 = ROOT; DEPREL names, as `klue score dp` reads)
    of right attachment (word i's head is i + 1, the last word's ROOT) or left attachment (i - 1, the first's)."""
    root, other = dp_constant_labels(train)
    out = []
    for e in evals:
        n = len(e["words"])
        heads = [*range(2, n + 1), 0] if right else list(range(n))
        out.append({"guid": e["guid"], "heads": heads, "deprels": [root if h == 0 else other for h in heads]})
    return out


def first_window_answer(context: str, max_words: int = 3) -> str:
    """The passage's text from its first whitespace word through its `max_words`-th ("" for an empty passage)."""
    words = [m for _, m in zip(range(max_words), _WORD.finditer(context), strict=False)]
    return context[words[0].start():words[-1].end()] if words else ""


def mrc_constant_predictions(evals: Sequence[Example], max_words: int | None) -> list[dict[str, str]]:
    """`{"guid", "answer"}` records: the first `max_words` words of each passage, or "" (no answer) for None."""
    return [{"guid": e["guid"], "answer": "" if max_words is None else first_window_answer(e["context"], max_words)}
            for e in evals]


def none_state_predictions(evals: Sequence[Example]) -> list[dict[str, Any]]:
    """`{"guid", "turn", "state"}` records with the empty state for every user turn."""
    return [{"guid": e["dialogue_guid"], "turn": e["turn"], "state": []} for e in evals]


def floors_for(task_name: str) -> list[str]:
    """Every floor id of a task: "no-model" first where FLOORS has the task, then its trivial floors."""
    key = resolve_name(task_name)
    return ([NO_MODEL] if key in FLOORS else []) + [f.name for f in TRIVIAL.get(key, ())]


def trivial_floor(task_name: str, name: str) -> TrivialFloor:
    """A task's trivial floor by id, or a ValueError naming the task's floors."""
    key = resolve_name(task_name)
    for floor in TRIVIAL.get(key, ()):
        if floor.name == name:
            return floor
    raise ValueError(f"{key}: no trivial floor {name!r} (its floors: {', '.join(floors_for(key)) or 'none'})")


def trivial_floor_predictions(task: Any, name: str, train: Sequence[Example], evals: Sequence[Example],
                              max_words: int = 3) -> list[dict[str, Any]]:
    """Prediction records of trivial floor `name` for `evals` (the format `task.compute_metrics` and `klue score`
    read); `train` gives the majority floors their constant, `max_words` the first-window floor its length."""
    floor = trivial_floor(task.name, name)
    if floor in (MAJORITY, MAJORITY_POSITION):
        return majority_predictions(task, train, evals)
    if floor is ALL_O:
        return all_o_predictions(evals)
    if floor in (RIGHT_ATTACH, LEFT_ATTACH):
        return attach_predictions(train, evals, right=floor is RIGHT_ATTACH)
    if floor in (NO_ANSWER, FIRST_WINDOW):
        return mrc_constant_predictions(evals, max_words if floor is FIRST_WINDOW else None)
    return none_state_predictions(evals)


def _load(task_name: str, data_dir: Path, split: SplitMode, eval_fraction: float, max_train: int | None,
          max_eval: int | None, protocol: Protocol = "selection-split",
          selection_fraction: float = SELECTION_FRACTION) -> tuple[Any, TaskData]:
    """The task and the training and evaluation examples `klue finetune TASK` reads with the same arguments: under
    the default protocol the floors fit on the same 90 % of train as the model (the selection split is left out:
    a floor chooses nothing)."""
    task = get_task(task_name, data_dir=data_dir)
    return task, load_task_data(task, data_dir, split=split, eval_fraction=eval_fraction, max_train=max_train,
                                max_eval=max_eval, protocol=protocol, selection_fraction=selection_fraction)


def _write_floor(task: Any, data: TaskData, preds: list[dict[str, Any]], output: Path, label: str,
                 floor: dict[str, Any]) -> dict[str, Any]:
    """Scores `preds` with the task's metrics and writes `predictions.jsonl`, `metrics.json` (a run's layout,
    seeds empty: a floor is deterministic; `floor` its record) and `summary.txt` under `output`."""
    metrics = task.compute_metrics(preds, data.eval)
    output = Path(output)
    write_jsonl(output / "predictions.jsonl", preds)
    summary = {"task": task.name, "label": label, "model": None, "random_init": False, "floor": floor,
               "metric_names": list(task.metric_names), "main_metric": task.main_metric,
               "mean": {k: metrics.get(k) for k in task.metric_names},
               "std": {k: 0.0 for k in task.metric_names}, "seeds": [], "per_seed": {}, "metrics": metrics,
               "data": data.source}
    write_json(output / "metrics.json", summary)
    shown = "  ".join(f"{k} {'–' if metrics.get(k) is None else format(metrics[k], '.2f')}" for k in task.metric_names)
    line = f"{task.name}  {label}  {shown}  [eval: {data.source['split']}, n={data.source['n_eval']}]"
    io.write_text(output / "summary.txt", line + "\n")
    return summary


def run_floor(task_name: str, data_dir: Path, output: Path, split: SplitMode = "auto", eval_fraction: float = 0.2,
              max_eval: int | None = None, max_words: int = 3, max_train: int | None = None,
              label: str | None = None, *, protocol: Protocol = "selection-split",
              selection_fraction: float = SELECTION_FRACTION) -> dict[str, Any]:
    """A task's no-model floor (FLOORS) on the evaluation examples of `klue finetune TASK` with the same data
    arguments; writes `predictions.jsonl`, `metrics.json` (a run's layout, seeds empty: it is deterministic) and
    `summary.txt` under `output` (`label`: the row's name in a results table, default the floor's).
    `max_train` caps the training examples (as `klue finetune --max-train-examples` does: the same sample; only
    the TF-IDF floors read them)."""
    key = resolve_name(task_name)
    if key not in FLOORS:
        raise ValueError(f"{key}: no no-model floor (its floors: {', '.join(floors_for(key)) or 'none'})")
    task, data = _load(key, data_dir, split, eval_fraction, max_train, max_eval, protocol, selection_fraction)
    name, floor = FLOORS[key]
    if key == "mrc":
        preds: list[dict[str, Any]] = mrc_floor_predictions(data.eval, max_words)
        floor = {**floor, "max_words": max_words}
    elif key == "dst":
        preds = dst_floor_predictions(data.eval)
    else:
        preds = tfidf_floor_predictions(task, data.train, data.eval)
    return _write_floor(task, data, preds, output, label or name, floor)


def run_mrc_floor(data_dir: Path, output: Path, split: SplitMode = "auto", eval_fraction: float = 0.2,
                  max_eval: int | None = None, max_words: int = 3, label: str | None = None) -> dict[str, Any]:
    """The sliding-window floor of KLUE-MRC: `run_floor("mrc", ...)`."""
    return run_floor("mrc", data_dir, output, split, eval_fraction, max_eval, max_words, label=label)


def run_trivial_floor(task_name: str, name: str, data_dir: Path, output: Path, split: SplitMode = "auto",
                      eval_fraction: float = 0.2, max_eval: int | None = None, max_train: int | None = None,
                      label: str | None = None, max_words: int = 3, *, protocol: Protocol = "selection-split",
                      selection_fraction: float = SELECTION_FRACTION) -> dict[str, Any]:
    """Trivial floor `name` of a task on the evaluation examples of `klue finetune TASK` with the same data
    arguments (`max_train`: the same training sample, whose labels give the majority floors their constant);
    writes what `run_floor` writes, under `output`."""
    floor = trivial_floor(task_name, name)
    task, data = _load(resolve_name(task_name), data_dir, split, eval_fraction, max_train, max_eval, protocol,
                       selection_fraction)
    preds = trivial_floor_predictions(task, name, data.train, data.eval, max_words)
    record = floor.record() | ({"max_words": max_words} if floor is FIRST_WINDOW else {})
    return _write_floor(task, data, preds, output, label or floor.label, record)


def run_any_floor(task_name: str, floor_name: str, data_dir: Path, output: Path, split: SplitMode = "auto",
                  eval_fraction: float = 0.2, max_eval: int | None = None, max_words: int = 3,
                  max_train: int | None = None, label: str | None = None, *, protocol: Protocol = "selection-split",
                  selection_fraction: float = SELECTION_FRACTION) -> dict[str, Any]:
    """Floor `floor_name` (one of `floors_for(task_name)`) of a task: `run_floor` for "no-model", else
    `run_trivial_floor`."""
    if floor_name == NO_MODEL:
        return run_floor(task_name, data_dir, output, split, eval_fraction, max_eval, max_words, max_train, label,
                         protocol=protocol, selection_fraction=selection_fraction)
    return run_trivial_floor(task_name, floor_name, data_dir, output, split, eval_fraction, max_eval, max_train,
                             label, max_words, protocol=protocol, selection_fraction=selection_fraction)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m finetune.floors", description=__doc__.split("\n\n")[0])
    parser.add_argument("task", choices=sorted(set(FLOORS) | set(TRIVIAL)))
    parser.add_argument("--floor", help="which floor: 'no-model' (FLOORS) or a trivial floor's id (default: the "
                        "no-model floor where the task has one, else its first trivial floor); 'all': every floor "
                        "of the task, each into OUTPUT/NAME/")
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--split", choices=["auto", "official", "dev-split"], default="auto")
    parser.add_argument("--eval-fraction", type=float, default=0.2)
    parser.add_argument("--max-eval-examples", type=int)
    parser.add_argument("--max-train-examples", type=int, help="cap on training examples (the same sample as "
                        "`klue finetune --max-train-examples`)")
    parser.add_argument("--max-words", type=int, default=3, help="MRC: longest candidate answer, in words")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    available = floors_for(args.task)
    names = available if args.floor == "all" else [args.floor or available[0]]
    if names[0] not in available:
        parser.error(f"--floor {names[0]}: {args.task} has the floors {', '.join(available)} (or all)")

    for name in names:
        output = args.output / name if args.floor == "all" else args.output
        try:
            run_any_floor(args.task, name, args.data_dir, output, args.split, args.eval_fraction,
                          args.max_eval_examples, args.max_words, args.max_train_examples)
        except DataError as e:
            raise SystemExit(f"error: {e}") from None
        print((output / "summary.txt").read_text(encoding="utf-8").strip())


if __name__ == "__main__":
    main()
