"""Per-example sufficient statistics of each task's main metric (`finetune.example_stats`,
`Task.main_metric_stats`): on the fixtures, with predictions made by perturbing gold deterministically, the
statistics give exactly what `compute_metrics` gives, over all examples and over resamples of them (each
example repeated W[i] times); and the builders on hand-computed cases."""

from __future__ import annotations

import math
import pickle
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest

from finetune.example_stats import (
    ExampleStats,
    accuracy_stats,
    fixed_macro_f1_stats,
    macro_f1_stats,
    mean_stats,
    micro_f1_stats,
    pearson_stats,
    per_class_counts,
)
from finetune.metrics import ner_entity_macro_f1
from finetune.records import Example
from finetune.registry import ALL_TASKS, get_task
from finetune.tasks.base import ClassificationTask, Task
from finetune.tasks.dp import DEP_LABELS
from finetune.tasks.ner import NER_LABELS, NerTask, entity_counts, scored_tags

FX = Path(__file__).parent / "fixtures" / "finetune"
FXJ = Path(__file__).parent / "fixtures" / "jglue"
GOLD = {"ynat": FX / "ynat" / "ynat-v1.1_dev.json", "sts": FX / "sts" / "klue-sts-v1.1_dev.json",
        "nli": FX / "nli" / "klue-nli-v1.1_dev.json", "ner": FX / "ner" / "klue-ner-v1.1_dev.tsv",
        "re": FX / "re" / "klue-re-v1.1_dev.json", "dp": FX / "dp" / "klue-dp-v1.1_dev.tsv",
        "mrc": FX / "mrc" / "klue-mrc-v1.1_dev.json", "dst": FX / "wos" / "wos-v1.1_dev.json",
        "jsts": FXJ / "jsts-v1.3" / "valid-v1.3.json", "jnli": FXJ / "jnli-v1.3" / "valid-v1.3.json",
        "jsquad": FXJ / "jsquad-v1.3" / "valid-v1.3.json",
        "jcommonsenseqa": FXJ / "jcommonsenseqa-v1.3" / "valid-v1.3.json"}


def test_every_registered_task_has_a_fixture_here():
    assert set(GOLD) == set(ALL_TASKS)


# ---- predictions: gold, perturbed deterministically ----------------------------------------------------------

def _flip(rng: np.random.Generator, value: object, choices: list, p: float) -> object:
    return choices[rng.integers(len(choices))] if rng.random() < p else value


def _ner_tags(rng: np.random.Generator, tags: list[str]) -> list[str]:
    """Gold entities dropped, retyped or shortened; a spurious entity and an orphan I- tag now and then."""
    out = list(tags)
    types = ["PS", "LC", "OG", "DT", "TI", "QT"]
    starts = [i for i, t in enumerate(tags) if t.startswith("B-")]
    for s in starts:
        e = s + 1
        while e < len(tags) and tags[e] == "I-" + tags[s][2:]:
            e += 1
        r = rng.random()
        if r < 0.2:
            out[s:e] = ["O"] * (e - s)
        elif r < 0.35:
            new = types[rng.integers(len(types))]
            out[s:e] = ["B-" + new] + ["I-" + new] * (e - s - 1)
        elif r < 0.5 and e - s > 1:
            out[e - 1] = "O"
    outside = [i for i, t in enumerate(out) if t == "O"]
    if outside and rng.random() < 0.3:
        out[outside[rng.integers(len(outside))]] = "B-" + types[rng.integers(len(types))]
    if outside and rng.random() < 0.1:
        out[outside[rng.integers(len(outside))]] = "I-TI"
    return out


def _span(rng: np.random.Generator, gold: list[str], context: str, abstain: bool) -> str:
    """A predicted answer: a gold answer, a longer or shorter one, another span of the passage, or nothing."""
    first = gold[0] if gold else ""
    r = rng.random()
    if r < 0.4:
        return first
    if r < 0.55:
        return first + context[rng.integers(len(context))]
    if r < 0.7:
        return first[: max(1, len(first) // 2)]
    if r < 0.85 or not abstain:
        start = int(rng.integers(max(1, len(context) - 6)))
        return context[start:start + int(rng.integers(2, 7))]
    return ""


def _dst_state(rng: np.random.Generator, state: list[str]) -> list[str]:
    out = []
    for item in state:
        r = rng.random()
        if r < 0.15:
            continue
        out.append(item + "요" if r < 0.25 else item)
    return out


def predictions(name: str, task: Task, golds: list[Example], seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    labels: list = getattr(task, "labels", [])
    if name in ("ynat", "nli", "jnli"):
        return [{"guid": g["guid"], "label": _flip(rng, labels[g["label"]], labels, 0.35)} for g in golds]
    if name == "re":
        return [{"guid": g["guid"], "label": _flip(rng, labels[g["label"]],
                                                   ["no_relation", *labels[1:4], labels[g["label"]]], 0.4)}
                for g in golds]
    if name == "jcommonsenseqa":
        return [{"guid": g["guid"], "label": _flip(rng, g["label"], list(range(5)), 0.3)} for g in golds]
    if name in ("sts", "jsts"):
        return [{"guid": g["guid"], "score": float(np.clip(g["label"] + rng.normal(0, 0.8), 0, 5))} for g in golds]
    if name == "ner":
        return [{"guid": g["guid"], "tags": _ner_tags(rng, [NER_LABELS[t] for t in g["tags"]])} for g in golds]
    if name == "dp":
        return [{"guid": g["guid"],
                 "heads": [_flip(rng, h, list(range(len(g["heads"]) + 1)), 0.15) for h in g["heads"]],
                 "deprels": [_flip(rng, DEP_LABELS[d], DEP_LABELS, 0.15) for d in g["deprels"]]} for g in golds]
    if name in ("mrc", "jsquad"):
        return [{"guid": g["guid"], "answer": _span(rng, [a["text"] for a in g["answers"]], g["context"],
                                                    abstain=name == "mrc")} for g in golds]
    if name == "dst":
        return [{"guid": g["dialogue_guid"], "turn": g["turn"], "state": _dst_state(rng, g["state"])}
                for g in golds]
    raise AssertionError(f"no predictions for {name}")


def load(name: str) -> tuple[Task, list[dict], list[Example]]:
    task = get_task(name, data_dir=GOLD[name].parent)
    golds = task.read_file(GOLD[name])
    preds = [task.check_prediction(p, f"{name} prediction {i}")
             for i, p in enumerate(predictions(name, task, golds))]
    for p, g in zip(preds, golds, strict=True):
        task.check_aligned(p, g, name)
    return task, preds, golds


def repeated(items: list, w: np.ndarray) -> list:
    return [x for x, k in zip(items, w, strict=True) for _ in range(int(k))]


def same(got: float, want: float | None) -> None:
    if want is None or math.isnan(want):
        assert math.isnan(got), f"{got} where the metric is undefined"
    else:
        assert got == pytest.approx(want, abs=1e-9)


def multiplicities(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Every example once, bootstrap resamples, uneven ones, and tiny ones (which drop most classes)."""
    return [np.ones(n, dtype=int),
            *(rng.multinomial(n, np.full(n, 1 / n)) for _ in range(3)),
            rng.multinomial(n, rng.dirichlet(np.full(n, 0.3))),
            *(rng.multinomial(size, np.full(n, 1 / n)) for size in (1, 2, 4, 4))]


# ---- every task: the statistics give compute_metrics' number --------------------------------------------------

@pytest.fixture(scope="module", params=list(GOLD))
def scored(request) -> tuple[str, Task, list[dict], list[Example], ExampleStats]:
    task, preds, golds = load(request.param)
    stats = task.main_metric_stats(preds, golds)
    assert isinstance(stats, ExampleStats)
    return request.param, task, preds, golds, stats


def test_total_is_the_main_metric(scored):
    name, task, preds, golds, stats = scored
    assert stats.values.shape[0] == len(golds)
    want = task.compute_metrics(preds, golds)[task.main_metric]
    assert want is not None and not math.isnan(want) and 0 < want < 100, (name, want)  # a real, imperfect score
    same(stats.total(), want)


def test_resamples_score_as_the_repeated_lists(scored):
    name, task, preds, golds, stats = scored
    rng = np.random.default_rng(sum(map(ord, name)))
    ws = multiplicities(rng, len(golds))
    batch = stats.score(np.stack(ws) @ stats.values)
    assert batch.shape == (len(ws),)
    for w, from_batch in zip(ws, batch, strict=True):
        want = task.compute_metrics(repeated(preds, w), repeated(golds, w))[task.main_metric]
        same(float(stats.score(w @ stats.values)), want)
        same(float(from_batch), want)
    np.testing.assert_array_equal(stats.resampled(np.stack(ws)), batch)


def test_perfect_predictions_score_full_marks():
    for name in ("ynat", "nli", "re", "dp", "jcommonsenseqa"):
        task = get_task(name, data_dir=GOLD[name].parent)
        golds = task.read_file(GOLD[name])
        labels: list = getattr(task, "labels", [])
        if name == "dp":
            preds = [{"guid": g["guid"], "heads": g["heads"], "deprels": [DEP_LABELS[d] for d in g["deprels"]]}
                     for g in golds]
        elif name == "jcommonsenseqa":
            preds = [{"guid": g["guid"], "label": g["label"]} for g in golds]
        else:
            preds = [{"guid": g["guid"], "label": labels[g["label"]]} for g in golds]
        stats = task.main_metric_stats(preds, golds)
        assert stats is not None
        assert stats.total() == pytest.approx(100.0, abs=1e-9), name


def test_a_resample_without_a_topic_leaves_it_out_of_the_macro_mean():
    task, preds, golds = load("ynat")
    assert isinstance(task, ClassificationTask)
    stats = task.main_metric_stats(preds, golds)
    assert stats is not None
    p, g = task.gold_and_pred_indices(preds, golds)
    for c in sorted(set(g) | set(p)):
        w = np.array([int(a != c and b != c) for a, b in zip(p, g, strict=True)])
        want = task.compute_metrics(repeated(preds, w), repeated(golds, w))["macro_f1"]
        same(float(stats.score(w @ stats.values)), want)


def test_sts_constant_resamples_are_undefined_as_pearson_r():
    task, preds, golds = load("sts")
    golds = [{**g, "label": round(g["label"], 1)} for g in golds]  # as the official files (0.1 steps): ties
    stats = task.main_metric_stats(preds, golds)
    assert stats is not None
    labels = [g["label"] for g in golds]
    value = max(set(labels), key=labels.count)
    assert labels.count(value) >= 2
    one_label = np.array([3 * int(x == value) for x in labels])  # gold constant, predictions not
    single = np.eye(len(golds), dtype=int)[5] * 7  # one example, repeated
    for w in (one_label, single):
        assert math.isnan(task.compute_metrics(repeated(preds, w), repeated(golds, w))["pearsonr"])
        assert math.isnan(float(stats.score(w @ stats.values)))
    constant = [{**p, "score": 2.2} for p in preds]  # 2.2 is no binary fraction: sums do not cancel exactly
    assert math.isnan(pearson_stats([2.2] * 5, [1, 2, 3, 4, 5.5]).total())
    assert math.isnan(task.main_metric_stats(constant, golds).total())  # type: ignore[union-attr]


def test_ner_entity_macro_f1_by_seqeval_entities_per_sentence(monkeypatch):
    task, preds, golds = load("ner")
    gold_sents, pred_sents = scored_tags(preds, golds)
    stats = macro_f1_stats(*entity_counts(pred_sents, gold_sents))
    same(stats.total(), ner_entity_macro_f1(pred_sents, gold_sents))
    rng = np.random.default_rng(7)
    for w in multiplicities(rng, len(golds)):
        same(float(stats.score(w @ stats.values)), ner_entity_macro_f1(repeated(pred_sents, w), repeated(gold_sents, w)))
    # what main_metric_stats gives were entity F1 the main metric, and None for a metric it does not know
    monkeypatch.setattr(NerTask, "main_metric", property(lambda self: "entity_macro_f1"))
    via_task = task.main_metric_stats(preds, golds)
    assert via_task is not None
    np.testing.assert_array_equal(via_task.values, stats.values)
    monkeypatch.setattr(NerTask, "main_metric", property(lambda self: "something_else"))
    assert task.main_metric_stats(preds, golds) is None


def test_no_entity_at_all_is_undefined_on_both_sides():
    gold = [["O", "O"], ["O"]]
    for pred in ([["O", "O"], ["O"]], [["O", "I-PS"], ["O"]]):  # an orphan I- tag is no entity (strict IOB2)
        with pytest.warns(RuntimeWarning) if pred != gold else nullcontext():
            want = ner_entity_macro_f1(pred, gold)
        assert math.isnan(want)
        assert math.isnan(macro_f1_stats(*entity_counts(pred, gold)).total())


def test_a_task_without_statistics_returns_none():
    class Plain(Task):
        parse_record = encode = build_model = predictions = check_prediction = compute_metrics = None  # type: ignore

    assert Task.main_metric_stats(Plain.__new__(Plain), [], []) is None


# ---- builders on hand-computed cases ----------------------------------------------------------------------

def test_macro_f1_of_two_classes_as_the_class_set_changes():
    # gold 0 0 1, predicted 0 1 1: class 0 TP 1 FN 1 -> F1 2/3; class 1 TP 1 FP 1 -> F1 2/3
    stats = macro_f1_stats(*per_class_counts([0, 0, 1], [0, 1, 1], [0, 1]))
    np.testing.assert_array_equal(stats.values, [[1, 0, 0, 0, 0, 0], [0, 0, 0, 1, 1, 0], [0, 1, 0, 0, 0, 0]])
    assert stats.total() == pytest.approx(200 / 3)
    w = np.array([[1, 0, 0],   # class 0 only, right: 100
                  [0, 1, 0],   # gold 0 predicted 1: both classes occur, both 0
                  [0, 0, 5],   # class 1 only: 100
                  [2, 1, 0],   # class 0 TP 2 FN 1 -> 0.8; class 1 FP 1 -> 0: mean 40
                  [0, 0, 0]])  # nothing: undefined
    np.testing.assert_allclose(stats.score(w @ stats.values), [100, 0, 100, 40, np.nan])
    # a fixed set of three classes with zero_division=1: an absent class scores 1 and counts ([2, 1, 0]:
    # (0.8 + 0 + 1) / 3)
    fixed = fixed_macro_f1_stats(*per_class_counts([0, 0, 1], [0, 1, 1], [0, 1, 2]))
    np.testing.assert_allclose(fixed.score(w @ fixed.values), [100, 100 / 3, 100, 180 / 3, 100])
    assert fixed.total() == pytest.approx((2 / 3 + 2 / 3 + 1) / 3 * 100)


def test_per_class_counts_group_items_by_example_and_ignore_unlisted_classes():
    # three words in two sentences; class "x" is not scored (RE's no_relation)
    tp, fp, fn = per_class_counts(["a", "x", "b"], ["a", "b", "x"], ["a", "b"], example=[0, 0, 1])
    np.testing.assert_array_equal(tp, [[1, 0], [0, 0]])
    np.testing.assert_array_equal(fp, [[0, 1], [0, 0]])
    np.testing.assert_array_equal(fn, [[0, 0], [0, 1]])
    # micro F1 over a, b: TP 1, predicted 2, gold 2 -> 50
    stats = micro_f1_stats(tp.sum(1), (tp + fp).sum(1), (tp + fn).sum(1))
    assert stats.total() == pytest.approx(50.0)
    assert stats.score(np.zeros(3)) == 0.0  # nothing predicted or gold: zero_division 0


def test_pearson_mean_and_accuracy():
    # x 1 2 3, y 1 2 4: cov 3, Sxx 2, Syy 42/9 -> r = 3 / sqrt(2 * 42 / 9)
    stats = pearson_stats([1, 2, 3], [1, 2, 4])
    assert stats.total() == pytest.approx(100 * 3 / math.sqrt(2 * 42 / 9), abs=1e-12)
    assert math.isnan(float(stats.score(np.array([0, 4, 0]) @ stats.values)))  # one distinct example
    assert float(stats.score(np.array([1, 0, 1]) @ stats.values)) == pytest.approx(100.0)
    assert math.isnan(pearson_stats([1, 1, 1], [1, 2, 3]).total())
    m = mean_stats([0.5, 1.0, 0.0])
    assert m.total() == pytest.approx(50.0)
    np.testing.assert_allclose(m.score(np.array([[2, 1, 1], [0, 0, 3]]) @ m.values), [50.0, 0.0])
    assert accuracy_stats([True, False, True, True]).total() == pytest.approx(75.0)


def test_scores_are_vectorised_over_leading_axes_and_pickle():
    stats = fixed_macro_f1_stats(*per_class_counts([0, 1, 2, 2], [0, 2, 2, 1], [0, 1, 2, 3]))
    w = np.random.default_rng(1).integers(0, 3, size=(2, 5, 4))
    sums = w @ stats.values
    got = stats.score(sums)
    assert got.shape == (2, 5)
    for idx in np.ndindex(2, 5):
        assert got[idx] == stats.score(sums[idx])
    again = pickle.loads(pickle.dumps(stats))
    np.testing.assert_array_equal(again.score(sums), got)
    with pytest.raises(ValueError, match="n_examples"):
        ExampleStats(np.zeros(3), stats.score)
