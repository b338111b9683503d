"""F1 of the classifier on BEEP! dev against the majority-class and keyword baselines (`corpora.toxicity.baselines`),
with scikit-learn's metrics.

Two views. 3-class: macro-F1 over hate / offensive / none and the F1 of each (BEEP!'s own task). Binary: toxic =
hate ∪ offensive against none, which is the decision the pipeline makes; for the classifier a comment is toxic
when its score P(hate) + P(offensive) exceeds the threshold (the stage's rule), for the baselines when they
predict hate or offensive. Binary F1 is the F1 of the toxic class; binary macro-F1 averages it with the F1 of
`none`, which a constant answer cannot game (on dev, 66 % of the comments are toxic, so "always toxic" has a
toxic-class F1 of 0.795 and a binary macro-F1 of 0.40). For the classifier's score, ROC-AUC, average precision
and precision / recall at a few thresholds help choose the stage's `threshold`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from corpora.toxicity.baselines import keyword_predict, majority_label, majority_predict
from corpora.toxicity.data import LABELS, TOXIC, Example, label_counts
from corpora.toxicity.model import ToxicityModel

THRESHOLDS = (0.3, 0.5, 0.7, 0.9)


def _scores(gold: Sequence[str], pred: Sequence[str], gold_toxic: np.ndarray, pred_toxic: np.ndarray
            ) -> dict[str, Any]:
    from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

    per = f1_score(gold, pred, labels=list(LABELS), average=None, zero_division=0)
    return {
        "macro_f1": round(float(f1_score(gold, pred, labels=list(LABELS), average="macro", zero_division=0)), 4),
        "f1": {lab: round(float(v), 4) for lab, v in zip(LABELS, per, strict=True)},
        "accuracy": round(float(accuracy_score(gold, pred)), 4),
        "binary_f1": round(float(f1_score(gold_toxic, pred_toxic, zero_division=0)), 4),
        "binary_macro_f1": round(float(f1_score(gold_toxic, pred_toxic, average="macro", zero_division=0)), 4),
        "binary_precision": round(float(precision_score(gold_toxic, pred_toxic, zero_division=0)), 4),
        "binary_recall": round(float(recall_score(gold_toxic, pred_toxic, zero_division=0)), 4),
    }


def evaluate(model: ToxicityModel, train: Sequence[Example], dev: Sequence[Example], threshold: float = 0.5
             ) -> dict[str, Any]:
    """Every number of the table, as JSON-able data."""
    from sklearn.metrics import (
        average_precision_score,
        f1_score,
        precision_score,
        recall_score,
        roc_auc_score,
    )

    texts, gold = [e.text for e in dev], [e.label for e in dev]
    gold_toxic = np.array([g in TOXIC for g in gold])
    scores = model.toxic_scores(texts)
    preds = {
        "majority": majority_predict([e.label for e in train], len(dev)),
        "keywords": keyword_predict(texts),
        "classifier": model.predict(texts),
    }
    systems = {}
    for name, pred in preds.items():
        pred_toxic = scores > threshold if name == "classifier" else np.array([p in TOXIC for p in pred])
        systems[name] = _scores(gold, pred, gold_toxic, pred_toxic)
    at = []
    for t in THRESHOLDS:
        pt = scores > t
        at.append({"threshold": t, "flagged": int(pt.sum()),
                   "precision": round(float(precision_score(gold_toxic, pt, zero_division=0)), 4),
                   "recall": round(float(recall_score(gold_toxic, pt, zero_division=0)), 4),
                   "f1": round(float(f1_score(gold_toxic, pt, zero_division=0)), 4)})
    systems["classifier"]["roc_auc"] = round(float(roc_auc_score(gold_toxic, scores)), 4)
    systems["classifier"]["average_precision"] = round(float(average_precision_score(gold_toxic, scores)), 4)
    return {
        "train": {"examples": len(train), "labels": label_counts(list(train))},
        "dev": {"examples": len(dev), "labels": label_counts(list(dev))},
        "majority_label": majority_label([e.label for e in train]),
        "threshold": threshold,
        "systems": systems,
        "classifier_at_thresholds": at,
        "model": {"config": model.config.model_dump(mode="json"), "seed": model.seed,
                  "vocabulary": model.vocabulary_size, "training": model.training},
    }


def format_table(res: dict[str, Any]) -> str:
    """Markdown: the systems side by side, then the classifier's precision / recall by threshold."""
    dev = res["dev"]
    names = {"majority": f"majority class (`{res['majority_label']}`)", "keywords": "keyword stems",
             "classifier": "TF-IDF char n-grams + logistic regression"}
    n_bg = res["model"]["training"].get("background", 0)
    bg = f" + {n_bg} background sentences as none" if n_bg else ""
    head = (f"BEEP! dev: {dev['examples']} comments ({', '.join(f'{k} {v}' for k, v in dev['labels'].items())}); "
            f"trained on {res['train']['examples']}{bg}; binary: toxic = hate ∪ offensive, classifier toxic when "
            f"score > {res['threshold']}\n\n")
    lines = ["| system | macro-F1 | F1 hate | F1 offensive | F1 none | accuracy | binary F1 (toxic) "
             "| binary macro-F1 |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for key, label in names.items():
        s = res["systems"][key]
        lines.append(f"| {label} | {s['macro_f1']:.3f} | {s['f1']['hate']:.3f} | {s['f1']['offensive']:.3f} | "
                     f"{s['f1']['none']:.3f} | {s['accuracy']:.3f} | {s['binary_f1']:.3f} | "
                     f"{s['binary_macro_f1']:.3f} |")
    c = res["systems"]["classifier"]
    tail = [f"\nclassifier score (P(hate) + P(offensive)): ROC-AUC {c['roc_auc']:.3f}, average precision "
            f"{c['average_precision']:.3f}\n", "| threshold | flagged | precision | recall | F1 (toxic) |",
            "|---:|---:|---:|---:|---:|"]
    tail += [f"| {r['threshold']} | {r['flagged']} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} |"
             for r in res["classifier_at_thresholds"]]
    return head + "\n".join(lines + tail) + "\n"
