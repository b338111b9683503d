"""The model card: `README.md` beside a model folder's weights, in the Hub's format, from what the run recorded.

What users keep of a run is the model folder, so the card carries the run's story with it: which text the model
saw and under which licences (pipeline/release/licenses.py), what curation removed, what PII replacement did, which
benchmarks the corpus was decontaminated against, the tokenizer, the training, the KLUE scores when the run
fine-tuned, and what the measurements say it cannot do. Every number is read from the run's files (manifests,
summary.json, config.json, the fine-tuning metrics), never typed in.

It is written with `huggingface_hub`'s `ModelCardData` / `EvalResult` / `ModelCard`, not by hand, so the
metadata block is what the Hub parses (language, licence, datasets, `pipeline_tag: fill-mask`, tags,
`model-index`). `check_metadata` validates it offline: `ModelCard.validate()` would ask the Hub over the network.

It is written by one function, `write_model_card`, for three callers: the pretrain stage (`final/README.md`:
data and training facts, no scores: fine-tuning runs after it), `klue export-checkpoint` (the same for one
checkpoint), and `klue export` (the full card, with the fine-tuning table as `model-index` entries;
pipeline/release/export.py). The facts are gathered by pipeline/release/facts.py from the stage folders' manifests
and from what each stage class contributes through `Stage.card_facts` (the pretrain stage's training facts, the
finetune stage's scores: finetune/card.py), the sections written by pipeline/release/sections.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipeline import io
from pipeline.release.facts import CardFacts, gather
from pipeline.release.licenses import HUB_LICENSES, LICENSE_FILE, OTHER
from pipeline.release.sections import body
from pipeline.stage import StageInput
from pipeline.stages import STAGES

CARD = "README.md"  # the file name the Hub reads a card from
LICENSE_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]*$")


def card_data(facts: CardFacts) -> Any:
    """The metadata block: a `huggingface_hub.ModelCardData`."""
    from huggingface_hub import ModelCardData

    arch = facts.config.get("model_type")
    pii = facts.params("pii")
    tags = ["klue-pipeline", "masked-lm", "pretrained-from-scratch", *([arch] if arch else [])]
    if facts.stages.get("pii") is not None:
        tags.append(f"pii-{pii.get('mode', 'placeholder')}" if pii.get("enabled", True) else "pii-not-replaced")
    if facts.params("pretokenize").get("analyzer") == "mecab":
        tags.append("mecab-pretokenized")
    if facts.params("vocab").get("algorithm"):
        tags.append(str(facts.params("vocab")["algorithm"]))
    lic = facts.license
    results = facts.evaluation.results if facts.evaluation and facts.evaluation.results else None
    return ModelCardData(
        language=facts.language, license=lic.license, license_name=lic.license_name,
        license_link=lic.license_link,
        datasets=[facts.dataset] if facts.dataset else [name for name, _ in _sources(facts)] or None,
        library_name="transformers", pipeline_tag="fill-mask", tags=tags,
        model_name=facts.name if results else None, eval_results=results)


def build_card(facts: CardFacts) -> Any:
    """The `huggingface_hub.ModelCard`: the metadata block as `ModelCardData.to_yaml` writes it, then the
    sections (`card_sections.body`). `ModelCard` parses the block back on construction (the `model-index`
    included), so a card that huggingface_hub cannot read fails here, not on the Hub."""
    from huggingface_hub import ModelCard

    return ModelCard(f"---\n{card_data(facts).to_yaml()}\n---\n\n{body(facts)}")


def check_metadata(data: Any) -> list[str]:
    """What the Hub would refuse or misread in a card's metadata, checked offline (empty when none): the licence
    is an id of the Hub's list, `other` comes with a `license_name` the Hub accepts and a `license_link`, the
    language is an ISO code, `pipeline_tag` is fill-mask, and the `model-index` round-trips through
    `huggingface_hub`'s own parser (`model_index_to_eval_results`) to the same results."""
    from huggingface_hub import ModelCardData
    from huggingface_hub.repocard_data import eval_results_to_model_index, model_index_to_eval_results

    problems = []
    d = data.to_dict()
    lic = d.get("license")
    if lic not in HUB_LICENSES:
        problems.append(f"license: {lic!r} is not an id of the Hub's licence list")
    if lic == OTHER:
        if not LICENSE_NAME.match(str(d.get("license_name") or "")):
            problems.append(f"license_name: {d.get('license_name')!r} (license: other needs one of [a-z0-9.-])")
        if not d.get("license_link"):
            problems.append("license_link: missing (license: other needs the licence's file or URL)")
    if not re.fullmatch(r"[a-z]{2,3}", str(d.get("language") or "")):
        problems.append(f"language: {d.get('language')!r} is not an ISO 639 code")
    if d.get("pipeline_tag") != "fill-mask":
        problems.append(f"pipeline_tag: {d.get('pipeline_tag')!r}, expected fill-mask")
    if "model-index" in d:
        try:
            name, results = model_index_to_eval_results(d["model-index"])
            again = eval_results_to_model_index(name, results)
        except (KeyError, TypeError, ValueError) as e:
            problems.append(f"model-index: not parseable ({type(e).__name__}: {e})")
        else:
            if again != d["model-index"]:
                problems.append("model-index: does not round-trip through huggingface_hub's parser")
            if any(not isinstance(r.metric_value, (int, float)) for r in results):
                problems.append("model-index: a metric value is not a number")
    try:
        ModelCardData(**d)
    except ValueError as e:
        problems.append(f"metadata: huggingface_hub refuses it ({e})")
    return problems


def write_model_card(folder: Path, stages: Mapping[str, StageInput], *, model_dir: Path | None = None,
                     registry: Any = None, **facts: Any) -> CardFacts:
    """The one writer of a model card: `folder/README.md`, and `folder/LICENSE` when the card's licence points at
    it (atomic writes), for the model folder `model_dir` (default: `folder`; its config.json and
    tokenizer_config.json). Returns the facts the card states.

    `stages`: the run's stage folders by name. Every stage class of the registry (default: the pipeline's stage
    graph) contributes through its `Stage.card_facts` hook, as the report asks `Stage.verdict`: the pretrain
    stage its training facts, the finetune stage the KLUE table and `model-index`; the data stages' facts are
    read from their manifests (facts.py, sections.py). `facts`: `gather`'s arguments and `CardFacts` fields the
    caller knows (the name, the recipe and its sources, provenance; a stage's own facts while it runs). A card
    whose metadata fails `check_metadata` is an error naming the folder."""
    registry = registry or STAGES
    contributed: dict[str, Any] = {}
    for name, stage in stages.items():
        if name in registry.names:
            contributed.update(registry.get(name).card_facts(stage))
    stated = gather(model_dir or folder, stages, **{**contributed, **facts})
    card = build_card(stated)
    problems = check_metadata(card.data)
    if problems:
        raise ValueError(f"{folder / CARD}: the card's metadata is not what the Hub accepts: " + "; ".join(problems))
    io.write_text(folder / CARD, str(card))
    if stated.license.needs_file:
        io.write_text(folder / LICENSE_FILE, stated.license.license_file())
    return stated


def _sources(facts: CardFacts) -> list[tuple[str, str]]:
    return [(s.source, s.text) for s in facts.license.sources]


