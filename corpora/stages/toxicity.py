"""The `toxicity` stage: a toxicity score for every document, stored stand-off (`corpora.toxicity.scores`) beside
the corpus, as `pii_detect` stores spans; with `action: drop`, the ids above `threshold` for the `pii` stage to
leave out (reason code `toxicity`). Off by default (`enabled: false`): it then reads nothing and writes nothing,
and `pii` gives the same bytes as without this stage.

Why the decision is applied in `pii` and not here: `pii` writes the corpus the tokenizer reads; a stage here that
rewrote the shards would double the corpus on disk and move every later stage's input. The pattern is
`pii_detect`'s `failed_ids.json`, which `pii` also applies.

The model is either a folder written by `klue toxicity train` (`model:`) or trained here from a BEEP! TSV
(`train_data:`, with the recipe seed; saved in `model/` of this stage's folder for reuse). Its files' contents,
not their paths, enter the key, with scikit-learn's version. Recipe keys: corpora/toxicity/README.md.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np
import pyarrow.parquet as pq
from pydantic import Field, field_validator, model_validator

from corpora.lang import LanguageCode, get_language
from corpora.shards import list_shards
from corpora.toxicity.data import read_background, read_beep
from corpora.toxicity.model import MODEL_FILE, WEIGHTS_FILE, ToxicityModel, train
from corpora.toxicity.scores import DROP_FILE, scores_name, write_scores
from corpora.toxicity.tagger import Level, score_documents
from pipeline import io
from pipeline.filehash import file_digests
from pipeline.stage import FunnelSum, Stage, StageContext, StageParams, StageResult, shard_funnels, tally
from pipeline.versions import package_versions

EXCERPT = 300  # characters of the scored unit kept per sample
BINS = 10  # score histogram in the report


class ToxicityParams(StageParams):
    """The tagger (which model, sentence or document level) and what to do above the threshold."""

    enabled: bool = Field(False, description="score documents; off: nothing is read or written")
    model: str | None = Field(None, description="a model folder written by `klue toxicity train`")
    train_data: str | None = Field(None, description="a BEEP! TSV to train the model on in this stage "
                                                     "(recipe seed); instead of `model`")
    background_data: str | None = Field(None, description="with train_data: a text file of clean prose whose "
                                                          "first sentences are added as `none`")
    background_sentences: int = Field(4000, ge=1, description="how many background sentences")
    level: Literal["sentence", "document"] = Field("sentence", description="score the most toxic sentence, or "
                                                                           "the whole text")
    action: Literal["keep", "drop"] = Field("keep", description="drop: `pii` leaves out documents whose score "
                                                                "is above `threshold` (reason `toxicity`)")
    threshold: float = Field(0.5, gt=0, lt=1, description="score = P(hate) + P(offensive); drop when above")
    sources: list[str] | None = Field(None, description="drop only documents of these sources (None: every "
                                                        "source); all are scored")
    language: LanguageCode = Field(description="sentence splitting")
    samples_per_source: int = Field(5, ge=0, le=1000, description="documents above the threshold kept in "
                                                                 "samples.jsonl, per source")

    @field_validator("language")
    @classmethod
    def _lang(cls, v: str) -> str:
        get_language(v)
        return v

    @model_validator(mode="after")
    def _consistent(self) -> ToxicityParams:
        if self.enabled and (self.model is None) == (self.train_data is None):
            raise ValueError("enabled: set exactly one of `model` (a folder from `klue toxicity train`) and "
                             "`train_data` (a BEEP! TSV to train on)")
        if self.background_data is not None and self.train_data is None:
            raise ValueError("background_data is training data: it needs train_data (a saved `model` was trained "
                             "with whatever background it had)")
        if self.action == "drop" and not self.enabled:
            raise ValueError("action: drop needs enabled: true (and a model)")
        return self


def _model_files(p: ToxicityParams) -> list[Path]:
    if p.model is not None:
        return [Path(p.model) / MODEL_FILE, Path(p.model) / WEIGHTS_FILE]
    files = [Path(p.train_data)] if p.train_data is not None else []
    return files + ([Path(p.background_data)] if p.background_data is not None else [])


_model_cache: dict[str, Any] = {}


def _load(model_dir: str) -> Any:
    """The model of a folder, loaded once per process (keyed on the files' identity: a forced rerun may train a
    new model into the same folder)."""
    key = model_dir + "".join(f"|{st.st_ino}:{st.st_size}:{st.st_mtime_ns}" for st in
                              (os.stat(Path(model_dir) / n) for n in (MODEL_FILE, WEIGHTS_FILE)))
    if key not in _model_cache:
        _model_cache.clear()
        _model_cache[key] = ToxicityModel.load(Path(model_dir))
    return _model_cache[key]


def _score_shard(task: tuple[str, str, str, str, str, float, int, list[str] | None]) -> dict[str, Any]:
    """Worker: score one shard, write its scores file; return counts, the ids above the threshold, samples."""
    in_path, out_path, model_dir, level, language, threshold, k, drop_sources = task
    model = _load(model_dir)
    cols = pq.read_table(in_path, columns=["id", "text", "source"]).to_pydict()
    ids, texts, sources = cols["id"], cols["text"], cols["source"]
    scored = score_documents(model, texts, cast(Level, level), language)
    score32 = np.array([s.score for s in scored], dtype=np.float32)
    write_scores(Path(out_path), [ids, score32.tolist(), [s.hate for s in scored], [s.offensive for s in scored],
                                  [s.start for s in scored], [s.end for s in scored]])
    kept: dict[str, list[int]] = {}
    drop_ids: list[str] = []
    above_by_source: Counter[str] = Counter()
    samples: dict[str, list[dict[str, Any]]] = {}
    # the decision is taken on the stored float32 score, so anyone re-applying the threshold to the file agrees
    above = score32 > np.float32(threshold)
    bins = np.minimum((score32 * BINS).astype(np.int64), BINS - 1)
    for i, (doc_id, text, source) in enumerate(zip(ids, texts, sources, strict=True)):
        tally(kept, source, text)
        if above[i]:
            if drop_sources is None or source in drop_sources:
                drop_ids.append(doc_id)
            above_by_source[source] += 1
            lst = samples.setdefault(source, [])
            if len(lst) < k:
                s = scored[i]
                lst.append({"id": doc_id, "source": source, "score": round(float(score32[i]), 4),
                            "start": s.start, "end": s.end, "text": text[s.start:s.end][:EXCERPT]})
    return {**shard_funnels(kept, {}), "drop": drop_ids, "above_by_source": dict(above_by_source), "samples": samples,
            "bins": np.bincount(bins, minlength=BINS).tolist()}


class ToxicityStage(Stage[ToxicityParams]):
    """Score every document for toxicity, stand-off; optionally name the ones above a threshold for `pii` to drop."""

    name = "toxicity"
    version = "1"
    inputs = ("decontaminate",)
    shard_resume = True  # a rerun after a kill runs only the shards whose task had not finished
    variant_field = "action"  # `variants: {toxicity: [keep, drop]}`: the same scores, with and without the drop
    input_paths = ("model", "train_data", "background_data")

    def fingerprint(self, ctx: StageContext[ToxicityParams]) -> dict[str, Any]:
        p = ctx.params
        if not p.enabled:
            return {}
        # contents, not paths; a missing file is None here and a clear error in run()
        files = _model_files(p)
        digests = file_digests(f for f in files if f.is_file())
        return {"files": [digests.get(f) for f in files], **package_versions("scikit-learn")}

    def run(self, ctx: StageContext[ToxicityParams]) -> StageResult:
        p = ctx.params
        if not p.enabled:
            return StageResult(funnel=None, meta={"report": {"enabled": False}})
        model_dir, model = self._model(ctx)
        shards = list_shards(ctx.inputs["decontaminate"].path)
        tasks = [(str(s), str(ctx.out_dir / scores_name(s)), str(model_dir), p.level, p.language, p.threshold,
                  p.samples_per_source, p.sources) for s in shards]
        funnels = FunnelSum()
        drop: list[str] = []
        above_by_source: Counter[str] = Counter()
        samples: dict[str, list[dict[str, Any]]] = {}
        bins = np.zeros(BINS, dtype=np.int64)
        for res in ctx.map(_score_shard, tasks, desc="toxicity"):
            funnels.add(res)
            drop += res["drop"]
            above_by_source.update(res["above_by_source"])
            for src, lst in res["samples"].items():
                mine = samples.setdefault(src, [])
                mine += lst[: p.samples_per_source - len(mine)]
            bins += np.array(res["bins"], dtype=np.int64)
        funnel, by_source = funnels.funnel, funnels.by_source
        if p.action == "drop":
            io.write_json(ctx.out_dir / DROP_FILE, sorted(drop), indent=1)
        io.write_jsonl(ctx.out_dir / "samples.jsonl", [r for s in sorted(samples) for r in samples[s]])
        docs_by_source = {s: f.docs_in for s, f in sorted(by_source.items())}
        n_above = sum(above_by_source.values())
        report = {
            "enabled": True, "level": p.level, "action": p.action, "threshold": p.threshold,
            "docs": funnel.docs_in, "docs_above": n_above,
            "share_above": round(n_above / funnel.docs_in, 6) if funnel.docs_in else 0.0,
            "docs_to_drop": len(drop) if p.action == "drop" else 0,
            "drop_sources": p.sources,
            "above_by_source": {s: above_by_source.get(s, 0) for s in docs_by_source},
            "share_above_by_source": {s: round(above_by_source.get(s, 0) / n, 6) if n else 0.0
                                      for s, n in docs_by_source.items()},
            "score_histogram": {f"{i / BINS:.1f}-{(i + 1) / BINS:.1f}": int(n) for i, n in enumerate(bins)},
            "model": {"vocabulary": model.vocabulary_size, "trained_here": p.train_data is not None,
                      "training_examples": model.training.get("examples"),
                      "background_sentences": model.training.get("background", 0),
                      "data_sha256": model.training.get("data_sha256")},
        }
        return StageResult(funnel=funnel, by_source=by_source, meta={"report": report})

    def _model(self, ctx: StageContext[ToxicityParams]) -> tuple[Path, Any]:
        p = ctx.params
        for f in _model_files(p):
            if not f.is_file():
                what = "model" if p.model is not None else "background_data" if str(f) == p.background_data \
                    else "train_data"
                raise FileNotFoundError(f"toxicity.{what}: file not found: {f}")
        if p.model is not None:
            return Path(p.model), ToxicityModel.load(Path(p.model))
        assert p.train_data is not None
        bg = read_background(Path(p.background_data), p.background_sentences, language=p.language) \
            if p.background_data else []
        model = train(read_beep(Path(p.train_data)), seed=ctx.seed, background=bg)
        model_dir = ctx.out_dir / "model"
        model.save(model_dir)
        return model_dir, model
