"""The toxicity classifier: TF-IDF over character n-grams and a multinomial logistic regression (scikit-learn),
trained on BEEP! (`corpora.toxicity.data`), saved without pickle.

Why this model: Korean toxicity lives in short character sequences (씨발, 병신, -충, ...) that are spelled in many
ways and glued to particles, so character n-grams within eojeols (`char_wb`) catch them without a morphological
analyser; a linear model over them is the classic strong baseline for short-text toxicity (the fastText
classifiers behind Dolma's `jigsaw_hatespeech_*` taggers are the same family), trains in seconds on 7.9k
comments and scores a corpus at CPU speed. The hyperparameters were chosen by 3-fold cross-validation on BEEP!
train only (README.md here); dev is kept for the reported numbers.

Saved form (a folder), because a pickled scikit-learn object runs code when loaded and cannot be trusted from
a shared folder:
  - `model.json`: format, labels, scikit-learn's class order, the training config and seed, provenance (number
    of examples per label, sha256 of the training pairs), the vocabulary (n-grams in feature order) and the
    sha256 of the weights file;
  - `weights.safetensors`: `idf` (V,), `coef` (classes, V) and `intercept` (classes,), float64.
`ToxicityModel.load` rebuilds a `TfidfVectorizer` with that vocabulary and idf and a `LogisticRegression` with
those coefficients, so a loaded model computes exactly what the trained one did (tests/test_toxicity.py checks
bit-equal probabilities). Same data, config and seed give the same bytes (lbfgs is deterministic).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from corpora.toxicity.data import LABELS, TOXIC, Example, label_counts
from pipeline import io

FORMAT = "klue-toxicity-tfidf-lr/1"
MODEL_FILE = "model.json"
WEIGHTS_FILE = "weights.safetensors"
_HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")  # jamo, compatibility jamo, syllables


class TrainConfig(BaseModel):
    """Hyperparameters (stored in model.json). Defaults: the best of a 3-fold cross-validation on BEEP! train."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    analyzer: Literal["char_wb", "char"] = "char_wb"  # char_wb: n-grams inside eojeols, padded with spaces
    ngram_min: int = Field(1, ge=1, le=8)
    ngram_max: int = Field(4, ge=1, le=8)
    min_df: int = Field(2, ge=1, description="n-grams seen in fewer training comments are left out")
    sublinear_tf: bool = True
    C: float = Field(3.0, gt=0, description="inverse L2 strength of the logistic regression")
    class_weight: Literal["balanced"] | None = "balanced"  # weights inverse to label frequency
    max_iter: int = Field(3000, ge=10)


def _vectorizer_kwargs(cfg: TrainConfig) -> dict[str, Any]:
    # strip_accents stays None: NFKD-based accent stripping would decompose Hangul syllables into jamo
    return {"analyzer": cfg.analyzer, "ngram_range": (cfg.ngram_min, cfg.ngram_max), "lowercase": True,
            "sublinear_tf": cfg.sublinear_tf, "norm": "l2", "use_idf": True, "smooth_idf": True,
            "dtype": np.float64}


class ToxicityModel:
    """A trained (or loaded) classifier. Probabilities come in `LABELS` order (hate, offensive, none)."""

    def __init__(self, vectorizer: Any, classifier: Any, config: TrainConfig, seed: int,
                 training: dict[str, Any]):
        self.vectorizer = vectorizer
        self.classifier = classifier
        self.config = config
        self.seed = seed
        self.training = training
        classes = [str(c) for c in classifier.classes_]
        self._order = np.array([classes.index(lab) for lab in LABELS])
        vocab = vectorizer.vocabulary_
        self._korean = np.array(sorted(i for t, i in vocab.items() if _HANGUL.search(t)), dtype=np.int64)

    @property
    def vocabulary_size(self) -> int:
        return len(self.vectorizer.vocabulary_)

    def proba(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(probabilities (n, 3) in LABELS order, number of distinct known Korean n-grams per text (n,))."""
        if not texts:
            return np.zeros((0, len(LABELS))), np.zeros(0, dtype=np.int64)
        x = self.vectorizer.transform(list(texts))
        return self.classifier.predict_proba(x)[:, self._order], x[:, self._korean].getnnz(axis=1)

    def predict(self, texts: Sequence[str]) -> list[str]:
        """The most probable label of each text (ties: the first in LABELS order)."""
        p, _ = self.proba(texts)
        return [LABELS[i] for i in p.argmax(axis=1)]

    def toxic_scores(self, texts: Sequence[str]) -> np.ndarray:
        """P(hate) + P(offensive) per text; 0.0 for a text without any known n-gram that holds Hangul.

        Why 0 there: such a text (empty, Latin script, digits, tables) carries no evidence the model can weigh,
        and its answer there is little more than its intercept, i.e. BEEP!'s label prior (56 % of the training
        comments are toxic), plus the weights of spaces and punctuation (`char_wb` pads every word with spaces,
        so no text is entirely unknown); a corpus of English lines must not be flagged by the prior of a Korean
        news-comment set."""
        p, known = self.proba(texts)
        return np.where(known > 0, p[:, 0] + p[:, 1], 0.0)

    # ---- saving and loading ------------------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        """Write `folder/model.json` and `folder/weights.safetensors`, the folder atomically."""
        from safetensors.numpy import save as st_save

        vocab = self.vectorizer.vocabulary_
        terms = sorted(vocab, key=vocab.__getitem__)
        weights = st_save({"idf": np.ascontiguousarray(self.vectorizer.idf_, dtype=np.float64),
                           "coef": np.ascontiguousarray(self.classifier.coef_, dtype=np.float64),
                           "intercept": np.ascontiguousarray(self.classifier.intercept_, dtype=np.float64)})
        doc = {
            "format": FORMAT,
            "labels": list(LABELS),
            "toxic_labels": list(TOXIC),
            "classes": [str(c) for c in self.classifier.classes_],
            "config": self.config.model_dump(mode="json"),
            "seed": self.seed,
            "training": self.training,
            "scikit_learn": _sklearn_version(),
            "weights": {"file": WEIGHTS_FILE, "sha256": hashlib.sha256(weights).hexdigest()},
            "vocabulary": terms,
        }
        with io.atomic_path(Path(folder), replace_dir=True) as tmp:
            tmp.mkdir()
            io.write_bytes(tmp / WEIGHTS_FILE, weights)
            io.write_json(tmp / MODEL_FILE, doc, indent=1)

    @classmethod
    def load(cls, folder: Path) -> ToxicityModel:
        """Rebuild the scikit-learn objects from a saved folder; a damaged or foreign folder is a `ValueError`
        naming the file."""
        from safetensors.numpy import load as st_load
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression

        folder = Path(folder)
        mpath, wpath = folder / MODEL_FILE, folder / WEIGHTS_FILE
        try:
            doc = json.loads(mpath.read_text(encoding="utf-8"))
            raw = wpath.read_bytes()
        except FileNotFoundError as e:
            raise ValueError(f"{folder}: not a toxicity model folder ({e.filename} is missing; write one with "
                             f"`klue toxicity train`)") from None
        except (OSError, ValueError) as e:
            raise ValueError(f"{mpath}: unreadable: {e}") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ValueError(f"{mpath}: format {doc.get('format') if isinstance(doc, dict) else None!r}, "
                             f"expected {FORMAT!r}")
        if hashlib.sha256(raw).hexdigest() != doc["weights"]["sha256"]:
            raise ValueError(f"{wpath}: sha256 differs from the one {mpath.name} records: the files do not belong "
                             "together or one was changed")
        arrays = st_load(raw)
        terms, classes = doc["vocabulary"], doc["classes"]
        idf, coef, intercept = arrays["idf"], arrays["coef"], arrays["intercept"]
        if sorted(classes) != sorted(LABELS) or idf.shape != (len(terms),) or coef.shape != (len(classes), len(terms)) \
                or intercept.shape != (len(classes),):
            raise ValueError(f"{folder}: shapes do not agree: {len(terms)} n-grams, classes {classes}, idf "
                             f"{idf.shape}, coef {coef.shape}, intercept {intercept.shape}")
        config = TrainConfig.model_validate(doc["config"])
        vec = TfidfVectorizer(**_vectorizer_kwargs(config), vocabulary={t: i for i, t in enumerate(terms)})
        vec.idf_ = idf
        vec.vocabulary_ = vec.vocabulary  # what fit() sets; transform() reads it
        clf = LogisticRegression(C=config.C, max_iter=config.max_iter, class_weight=config.class_weight,
                                 random_state=doc["seed"])
        clf.classes_ = np.array(classes)
        clf.coef_, clf.intercept_, clf.n_features_in_ = coef, intercept, len(terms)
        return cls(vec, clf, config, int(doc["seed"]), doc["training"])


def train(examples: Sequence[Example], config: TrainConfig | None = None, seed: int = 42,
          background: Sequence[str] = ()) -> ToxicityModel:
    """Fit the vectorizer and the classifier on labelled examples; every label of LABELS must occur.

    `background`: unlabelled clean prose (`data.read_background`, e.g. encyclopedia sentences) added as `none`.
    Why: BEEP!'s `none` comments are chatty praise, so to a comment-only model formal declarative prose looks
    like nothing it saw as `none`; it scores most Wikipedia sections and every law text above 0.5 (README.md
    here has the measurements, with and without)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    config = config or TrainConfig()
    if config.ngram_min > config.ngram_max:
        raise ValueError(f"ngram_min={config.ngram_min} > ngram_max={config.ngram_max}")
    counts = label_counts(list(examples))
    missing = [lab for lab, n in counts.items() if n == 0]
    if missing:
        raise ValueError(f"training data has no example labelled {missing}; every label of {LABELS} is needed")
    texts = [e.text for e in examples] + list(background)
    labels = [e.label for e in examples] + ["none"] * len(background)
    vec = TfidfVectorizer(**_vectorizer_kwargs(config), min_df=config.min_df)
    x = vec.fit_transform(texts)
    clf = LogisticRegression(C=config.C, max_iter=config.max_iter, class_weight=config.class_weight,
                             random_state=seed)
    clf.fit(x, labels)
    h = hashlib.sha256()
    for t, lab in zip(texts, labels, strict=True):
        h.update(f"{lab}\t{t}\n".encode())
    training = {"examples": len(examples), "labels": counts, "background": len(background),
                "data_sha256": h.hexdigest(),
                "converged": bool(np.all(clf.n_iter_ < config.max_iter))}
    return ToxicityModel(vec, clf, config, seed, training)


def _sklearn_version() -> str:
    try:
        return metadata.version("scikit-learn")
    except metadata.PackageNotFoundError:  # pragma: no cover - sklearn is a dependency
        return "unknown"
