"""The model card: `README.md` beside a model folder's weights, in the Hub's format, from what the run recorded.

What users keep of a run is the model folder, so the card carries the run's story with it: which text the model
saw and under which licences (corpora/licenses.py), what curation removed, what PII replacement did, which
benchmarks the corpus was decontaminated against, the tokenizer, the training, the KLUE scores when the run
fine-tuned, and what the measurements say it cannot do. Every number is read from the run's files (manifests,
summary.json, config.json, the fine-tuning metrics), never typed in.

It is written with `huggingface_hub`'s `ModelCardData` / `EvalResult` / `ModelCard`, not by hand, so the
metadata block is what the Hub parses (language, licence, datasets, `pipeline_tag: fill-mask`, tags,
`model-index`). `check_metadata` validates it offline: `ModelCard.validate()` would ask the Hub over the network.

Three writers use it: the pretrain stage (`final/README.md`: data and training facts, no scores: fine-tuning
runs after it), `klue export-checkpoint` (the same for one checkpoint), and `klue export` (the full card, with
the fine-tuning table as `model-index` entries; pretrain/publish.py). The facts are gathered by
pretrain/card_facts.py (and card_run.py, card_scores.py), the sections written by pretrain/card_sections.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from corpora.licenses import HUB_LICENSES, LICENSE_FILE, OTHER, CardLicense
from pipeline import io
from pretrain.card_facts import CardFacts

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

    from pretrain.card_sections import body

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


def write_card(folder: Path, card: Any, lic: CardLicense) -> list[str]:
    """`folder/README.md`, and `folder/LICENSE` when the card's licence points at it; atomic writes. Returns
    the names written. A card whose metadata fails `check_metadata` is an error naming the folder."""
    problems = check_metadata(card.data)
    if problems:
        raise ValueError(f"{folder / CARD}: the card's metadata is not what the Hub accepts: " + "; ".join(problems))
    io.write_text(folder / CARD, str(card))
    written = [CARD]
    if lic.needs_file:
        io.write_text(folder / LICENSE_FILE, lic.license_file())
        written.append(LICENSE_FILE)
    return written


def write_model_card(folder: Path, facts: CardFacts) -> list[str]:
    """`build_card` + `write_card` into a model folder."""
    return write_card(folder, build_card(facts), facts.license)


def _sources(facts: CardFacts) -> list[tuple[str, str]]:
    return [(s.source, s.text) for s in facts.license.sources]


