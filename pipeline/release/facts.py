"""The facts a model card states (`CardFacts`), gathered from one run's files: the upstream stage folders and
their manifests, the recipe's sources and licences, the pretrain params and summary, the model folder's
config.json and tokenizer_config.json; what a stage contributes through `Stage.card_facts` (the pretrain stage's
training facts, the finetune stage's `Evaluation`). pipeline/release/card.py turns them into the card;
pipeline/release/sections.py writes its sections.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.release.licenses import CardLicense, card_license
from pipeline.stage import StageInput


@dataclass(frozen=True)
class Evaluation:
    """The fine-tuning part of a card (the finetune stage's `card_facts`, finetune/card.py, builds it from its
    runs): the results table in markdown, the pretrained row as `EvalResult`s, and limitations read from the runs."""

    markdown: str
    results: list[Any]  # huggingface_hub.EvalResult
    limitations: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class CorpusFacts:
    """What a card says about the text: the run's upstream stage folders, the sources' licences, the language.
    The dataset card (`klue export --corpus`, pipeline/release/dataset_card.py) states these alone; a model card adds
    the model's (`CardFacts`)."""

    name: str  # the name in the card (a model's in `model-index`, a dataset's `pretty_name`)
    recipe: str | None
    language: str  # ISO 639 code, as the Hub's metadata takes it
    # the language's own words for the card, from its folder (corpora/lang/<code>/, through the vocab stage's
    # `card_facts`: the ground floor knows no language): its English name, and a fill-mask sentence with {mask}
    language_name: str | None = None
    card_example: str | None = None
    license: CardLicense
    stages: dict[str, StageInput]  # the upstream stage folders by name (collect .. encode, vocab)
    arm: str | None = None  # the arm, for `klue export`'s cards (the stage's card must not depend on it)
    provenance: dict[str, Any] = field(default_factory=dict)  # stage keys, klue version, ...

    def params(self, stage: str) -> dict[str, Any]:
        s = self.stages.get(stage)
        return (s.manifest.get("params") or {}) if s else {}

    def meta(self, stage: str) -> dict[str, Any]:
        s = self.stages.get(stage)
        return (s.manifest.get("meta") or {}) if s else {}

    def report(self, stage: str) -> dict[str, Any]:
        return self.meta(stage).get("report") or {}


@dataclass(kw_only=True)
class CardFacts(CorpusFacts):
    """Everything a model card states, gathered from one run's files (`gather`)."""

    train: dict[str, Any]  # the pretrain stage's params (train_config.json)
    summary: dict[str, Any]  # summary.json (or a checkpoint's own numbers)
    config: dict[str, Any]  # the model folder's config.json
    tokenizer: dict[str, Any]  # the model folder's tokenizer_config.json
    hardware: str | None = None
    order_verdict: str | None = None
    checkpoint: dict[str, Any] | None = None  # {"step", "tokens"} of an exported checkpoint
    evaluation: Evaluation | None = None
    files: tuple[str, ...] = ()  # extra files beside the card that it links (loss_curve.png, report.html)
    dataset: str | None = None  # the Hub id of the corpus exported from the same run (`klue export --corpus`)

    @property
    def mask_token(self) -> str:
        return str(self.tokenizer.get("mask_token") or "[MASK]")


def gather(model_dir: Path, stages: Mapping[str, StageInput], *, name: str | None, recipe: str | None,
           sources: list[tuple[str, str | None]], train: dict[str, Any], summary: dict[str, Any],
           **extra: Any) -> CardFacts:
    """The facts of a card for the model folder `model_dir` (its config.json and tokenizer_config.json), the
    run's upstream stage folders, the recipe's name and (source, licence) pairs, the pretrain params and
    summary; `extra` sets the optional `CardFacts` fields. Without a `name`, the model is named by what it is
    (`modernbert-tiny-ko`)."""
    language = extra.pop("language", None)
    if not language:  # the vocab stage's `card_facts` states it; a card of a run without one cannot guess it
        raise ValueError(f"{model_dir}: the card's language is unknown: no vocab stage folder among the run's "
                         f"stages ({', '.join(stages) or 'none'}) to read it from (a run made outside a workdir: "
                         "`klue export-checkpoint --language CODE`)")
    config = read_json(model_dir / "config.json")
    name = name or f"{config.get('model_type', 'encoder')}-{train.get('model', 'model')}-{language}"
    return CardFacts(name=model_name(name), recipe=recipe, language=language, license=card_license(sources),
                     stages=dict(stages), train=train, summary=summary, config=config,
                     tokenizer=read_json(model_dir / "tokenizer_config.json"), **extra)


def model_name(text: str) -> str:
    """A name as the Hub spells a repository: letters, digits, '-', '_' and '.' (an arm `pii=off` -> `pii-off`)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._") or "model"


def sources_of(recipe_sources: list[Any]) -> list[tuple[str, str | None]]:
    """(name, licence) of the recipe's sources: `SourceSpec` objects (a stage's `ctx.recipe`) or their JSON
    (run.json's recipe snapshot)."""
    out = []
    for s in recipe_sources:
        get = s.get if isinstance(s, dict) else (lambda k, _s=s: getattr(_s, k, None))
        out.append((str(get("name")), get("license")))
    return out


# -------------------------------------------------------------------------------------------------------
# facts that are not simply read


def hardware_recorded(meta: Mapping[str, Any], summary: Mapping[str, Any], manifest: Mapping[str, Any]) -> str | None:
    """What a finished run recorded about its machine: the stage's `hardware` meta (runs since the card), else
    the GPU its MFU was measured against, else "CPU" and the platform of its manifest."""
    if meta.get("hardware"):
        return str(meta["hardware"])
    peak = summary.get("peak") or {}
    world = summary.get("world_size") or 1
    if peak.get("label"):
        return f"{world} x {peak['label']}"
    plat = manifest.get("platform")
    return f"CPU ({plat})" if plat else None


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object file, {} when absent (an older run's folder lacks some), a ValueError naming it when broken."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except ValueError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from None
    return data if isinstance(data, dict) else {}
