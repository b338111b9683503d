"""The dataset card of an exported corpus (`klue export --corpus`, pretrain/publish_corpus.py): `README.md` in the
Hub's format, written with huggingface_hub's `DatasetCardData` / `DatasetCard`, every number read from the run's
manifests and the export's own counts.

It tells what FineWeb-2's, Dolma's and the KLUE corpus's descriptions tell, and what this pipeline knows besides:
the sources and their licences (each document carries its source's licence), the funnel per source and per drop
reason, deduplication, decontamination (which benchmark files, how many documents), PII (mode, types, counts,
the recognizers and, when measured, their recall on a gold file), toxicity, what was not done, and how to
reproduce the folder. The model card (pipeline/release/sections.py) shares the funnel, PII and decontamination
sections, so the two cards of one run say the same thing in the same words.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pipeline import io
from pipeline.plots import md_table
from pipeline.release.facts import CorpusFacts
from pipeline.release.licenses import HUB_LICENSES, LICENSE_FILE, OTHER, CardLicense
from pipeline.release.sections import decontamination_section, funnel_lines, language_name, pii_section
from pipeline.workdir import WorkdirError

CARD = "README.md"
CORPUS_STAGES = ("collect", "filter", "dedup", "decontaminate", "pii")  # the stages whose outputs are documents
# the Hub's size categories (huggingface/hub-docs, datasets-cards: `size_categories`), by document count
SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
         (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B"))
STAGE_WORDS = {"collect": "as read from the sources, normalised", "filter": "after the quality filters",
               "dedup": "after exact and near-duplicate removal", "decontaminate": "after decontamination",
               "pii": "after PII replacement: the text the tokenizer and the model were trained on"}


@dataclass
class CorpusExport:
    """What an export wrote and counted: the card's facts beside the corpus facts of the run."""

    facts: CorpusFacts
    stage: str
    files: dict[str, list[str]]  # split -> data files
    docs: dict[str, int]  # split -> documents
    by_source: dict[str, Counter[str]]  # split -> source -> documents
    columns: list[str]
    held_out: dict[str, Any] | None  # encode's split rule, when there is one: {"seed", "eval_fraction", "key"}
    pii_eval: dict[str, Any] | None = None  # `measure_pii_recall`'s result
    recipe: dict[str, Any] = field(default_factory=dict)  # the run's recipe snapshot
    run: dict[str, Any] = field(default_factory=dict)  # run.json's versions (klue, python, platform)
    model_repo: str | None = None
    repo_id: str | None = None


def size_category(n: int) -> str:
    return next((label for limit, label in SIZES if n < limit), "n>1B")


def card_data(export: CorpusExport) -> Any:
    """The metadata block: a `huggingface_hub.DatasetCardData` with the `configs` that point at the shards and a
    `klue_pipeline` record (recipe, arm, stage and its key, the repo ids) that a model export of the same run
    checks before it links the dataset."""
    from huggingface_hub import DatasetCardData

    f, lic = export.facts, export.facts.license
    pii = f.params("pii") if export.stage == "pii" else {}
    tags = ["klue-pipeline", "pretraining-corpus"]
    if export.stage == "pii":
        tags.append(f"pii-{pii.get('mode', 'placeholder')}" if pii.get("enabled", True) else "pii-not-replaced")
    configs = [{"config_name": "default",
                "data_files": [{"split": split, "path": f"data/{split}-*"} for split in export.files]}]
    stage = f.stages[export.stage]
    record = {"recipe": f.recipe, "arm": f.arm, "stage": export.stage, "stage_key": stage.manifest.get("key"),
              "klue_version": export.run.get("klue_version"), "repo_id": export.repo_id,
              "model_repo": export.model_repo}
    return DatasetCardData(
        language=[f.language], license=lic.license, license_name=lic.license_name, license_link=lic.license_link,
        size_categories=[size_category(sum(export.docs.values()))], task_categories=["fill-mask"],
        task_ids=["masked-language-modeling"], pretty_name=f.name, tags=tags, configs=configs,
        klue_pipeline={k: v for k, v in record.items() if v is not None})


def build_dataset_card(export: CorpusExport) -> Any:
    """The `huggingface_hub.DatasetCard`: metadata, then the sections. `DatasetCard` parses the block back on
    construction, so a card huggingface_hub cannot read fails here."""
    from huggingface_hub import DatasetCard

    f = export.facts
    parts = [_title(export), _loading(export), _structure(export), _sources(export),
             _curation(export), _dedup(f), decontamination_section(f), _pii(export), _toxicity(f),
             _not_done(export), _reproduce(export)]
    body = "\n\n".join(p.strip() for p in parts if p) + "\n"
    return DatasetCard(f"---\n{card_data(export).to_yaml()}\n---\n\n{body}")


def check_dataset_metadata(data: Any, folder: Path) -> list[str]:
    """What the Hub would refuse or misread in the card's metadata, checked offline (empty when none): the licence
    is an id of the Hub's list (`other` with a name and a link), the language an ISO code, and every `configs`
    pattern matches data files in `folder`."""
    d = data.to_dict()
    problems = []
    lic = d.get("license")
    if lic not in HUB_LICENSES:
        problems.append(f"license: {lic!r} is not an id of the Hub's licence list")
    if lic == OTHER and not (d.get("license_name") and d.get("license_link")):
        problems.append("license: other needs license_name and license_link")
    if not all(re.fullmatch(r"[a-z]{2,3}", str(x)) for x in d.get("language") or [None]):
        problems.append(f"language: {d.get('language')!r} is not a list of ISO 639 codes")
    for config in d.get("configs") or []:
        for entry in config.get("data_files") or []:
            if not list(folder.glob(entry["path"])):
                problems.append(f"configs: {entry['path']!r} (split {entry['split']}) matches no file")
    return problems


def write_dataset_card(folder: Path, export: CorpusExport) -> list[str]:
    """`folder/README.md`, and `folder/LICENSE` when the licence is `other` (the Hub's rule); atomic writes."""
    card = build_dataset_card(export)
    problems = check_dataset_metadata(card.data, folder)
    if problems:
        raise ValueError(f"{folder / CARD}: the card's metadata is not what the Hub accepts: " + "; ".join(problems))
    io.write_text(folder / CARD, str(card))
    written = [CARD]
    if export.facts.license.needs_file:
        io.write_text(folder / LICENSE_FILE, license_file(export.facts.license))
        written.append(LICENSE_FILE)
    return written


def license_file(lic: CardLicense) -> str:
    """`LICENSE` of a dataset whose sources carry different licences: every source and its licence."""
    lines = ["Licences of the text in this dataset", "",
             "Each document comes from one source (column `source`) and stays under that source's licence",
             "(column `license`); no single licence covers the dataset.", ""]
    return "\n".join([*lines, *lic.source_lines()]) + "\n"


# -------------------------------------------------------------------------------------------------------
# sections


def _title(e: CorpusExport) -> str:
    f = e.facts
    n = sum(e.docs.values())
    chars = (f.stages[e.stage].manifest.get("funnel") or {}).get("chars_kept")
    lang = language_name(f)
    size = f" ({chars:,} characters)" if chars else ""
    recipe = f" by klue-pipeline's recipe `{f.recipe}`" if f.recipe else ""
    arm = f", arm `{f.arm}`" if f.arm else ""
    sources = len(f.license.sources)
    lines = [f"# {f.name}", "",
             f"{n:,} {lang} documents{size} from {sources} source{'s' if sources != 1 else ''}, curated{recipe}"
             f"{arm}: the output of its `{e.stage}` stage, {STAGE_WORDS[e.stage]}."]
    if e.model_repo:
        lines += ["", f"The model trained on it: [{e.model_repo}](https://huggingface.co/{e.model_repo})."]
    return "\n".join(lines)


def _loading(e: CorpusExport) -> str:
    where = f'"{e.repo_id}"' if e.repo_id else '"parquet", data_dir="path/to/this/folder"'
    return ("## How to load\n\n```python\nfrom datasets import load_dataset\n"
            f"corpus = load_dataset({where})\nprint(corpus)\n```\n\n"
            "The files are plain Parquet (zstd): pyarrow, pandas or DuckDB read them as they are.")


COLUMNS = {"id": "the document's id in the pipeline: a hash of (source, file, record), stable across runs",
           "text": "the document's text",
           "source": "the recipe's name of the source it was read from",
           "license": "that source's licence, as the recipe states it",
           "language": "the corpus language (ISO 639-1)",
           "pii_types": "the PII types replaced in this document (sorted; empty: none replaced)",
           "toxicity": "the toxicity stage's score, P(hate) + P(offensive) of the document's most toxic unit"}


def _structure(e: CorpusExport) -> str:
    rows = [[split, f"{e.docs[split]:,}", ", ".join(f"`{name}`" for name in names)]
            for split, names in e.files.items()]
    lines = ["## Structure", "", *md_table(["split", "documents", "files"], rows), ""]
    if e.held_out:
        lines += [f"`validation` holds the documents the `encode` stage held out (an xxhash of the id with seed "
                  f"{e.held_out['seed']}, {e.held_out['eval_fraction']:.2%} of them): the model of the same run "
                  "measured its held-out loss on them and never trained on them.", ""]
    else:
        lines += ["One split: the run held no documents out (no `encode` stage, or `eval_fraction: 0`).", ""]
    lines += md_table(["column", "meaning"], [[f"`{c}`", COLUMNS[c]] for c in e.columns])
    lines += ["", "Left out: the shards' `meta` column (provenance and fields of the sources such as a petition's "
                  "title). PII detection reads `text` only, so those fields were never checked for personal data."]
    return "\n".join(lines)


def _sources(e: CorpusExport) -> str:
    lic = e.facts.license
    splits = list(e.files)
    rows = []
    for s in lic.sources:
        rows.append([f"`{s.source}`", s.text or "none given", s.hub_id or "-", "yes" if s.share_alike else "no",
                     *(f"{e.by_source[split].get(s.source, 0):,}" for split in splits)])
    if lic.missing:
        head = (f"`license: unknown`: the recipe gives no licence for "
                f"{', '.join(f'`{s.source}`' for s in lic.missing)}; add `license:` to those sources.")
    elif lic.license == OTHER:
        head = (f"`license: other` (`{lic.license_name}`): the sources carry different licences (or one the Hub "
                f"does not list); each document keeps its source's, in the `license` column, and `{LICENSE_FILE}` "
                "lists them.")
    else:
        head = f"`license: {lic.license}`: every source is under \"{lic.sources[0].text}\"." if lic.sources \
            else "The run records no sources: the licence is unknown."
    if lic.share_alike:
        head += (" Share-alike sources (" + ", ".join(f"`{s.source}`" for s in lic.share_alike) + ") ask that "
                 "adaptations of their text carry their licence on.")
    return "\n".join(["## Sources and licences", "", head, "",
                      *md_table(["source", "licence", "Hub id", "share-alike", *(f"{s} documents" for s in splits)],
                                rows)])


def _curation(e: CorpusExport) -> str:
    f = e.facts
    if "collect" not in f.stages:
        return "## Curation\n\nNot recorded (no `collect` stage in this run's folders)."
    lines = ["## Curation", "", *funnel_lines(f, "in this dataset", until=e.stage)]
    table = removals(f, e.stage)
    if table:
        sources = sorted({src for per in table.values() for src in per})
        rows = [[stage, reason, *(f"{per.get(src, 0):,}" for src in sources), f"{sum(per.values()):,}"]
                for (stage, reason), per in table.items()]
        lines += ["", "Documents removed, per stage, reason and source (reason codes: corpora/filters and the "
                      "stages' docstrings):", "", *md_table(["stage", "reason", *(f"`{s}`" for s in sources),
                                                             "total"], rows)]
    return "\n".join(lines)


def removals(f: CorpusFacts, until: str) -> dict[tuple[str, str], dict[str, int]]:
    """(stage, reason) -> source -> documents removed, from each stage's per-source funnel up to `until`;
    quarantined records as the reason "quarantined"."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for stage in _upto(until):
        if stage not in f.stages:
            continue
        for source, fun in sorted((f.stages[stage].manifest.get("by_source") or {}).items()):
            counts = {**{r: n for r, n in (fun.get("dropped") or {}).items() if n},
                      **({"quarantined": fun["quarantined"]} if fun.get("quarantined") else {})}
            for reason, n in counts.items():
                out.setdefault((stage, reason), {})[source] = n
    return {k: out[k] for k in sorted(out, key=lambda k: (_upto(until).index(k[0]), k[1]))}


def _upto(stage: str) -> tuple[str, ...]:
    return CORPUS_STAGES[:CORPUS_STAGES.index(stage) + 1]


def _dedup(f: CorpusFacts) -> str:
    if "dedup" not in f.stages:
        return "## Deduplication\n\nNot done (no `dedup` stage before the exported one)."
    p, rep = f.params("dedup"), f.report("dedup")
    dropped = (f.stages["dedup"].manifest.get("funnel") or {}).get("dropped") or {}
    near = (f"near duplicates by MinHash LSH ({rep.get('ngram', p.get('ngram'))}-word shingles, Jaccard "
            f"threshold {rep.get('threshold', p.get('threshold'))}, {rep.get('num_perm', p.get('num_perm'))} "
            f"permutations in {rep.get('bands', '?')} bands x {rep.get('rows', '?')} rows; one document kept per "
            f"cluster, {rep.get('clusters', 0):,} clusters)") if p.get("near", True) else "no near-duplicate pass"
    return (f"## Deduplication\n\nExact duplicates (same normalised text) and {near}: "
            f"{dropped.get('exact_duplicate', 0):,} exact and {dropped.get('near_duplicate', 0):,} near duplicates "
            "removed.")


def _pii(e: CorpusExport) -> str:
    f = e.facts
    if e.stage != "pii":
        return (f"## PII\n\nNot replaced: this export is of the `{e.stage}` stage, before `pii`; personal data in "
                "the sources is still in the text.")
    lines = [pii_section(f, what="dataset").replace("## PII replacement", "## PII", 1)]
    m = e.pii_eval
    if m is None:
        lines += ["", "Recall was not measured for this export (`klue export WORKDIR --corpus --pii-eval FILE` "
                      "measures the run's detector on a gold file); klue-pipeline's own measurements on its held-out "
                      "evaluation split are in corpora/pii/README.md. Spans the detector missed are still in the "
                      "text."]
    else:
        rows = [[t, f"{s['support']:,}", f"{s['recall']:.3f}", f"{s['recall_cover']:.3f}", f"{s['precision']:.3f}"]
                for t, s in sorted(m["per_type"].items()) if s.get("targeted")]
        o = m["overall"]
        rows.append(["**all targeted**", f"{o['support']:,}", f"{o['recall']:.3f}", f"{o['recall_cover']:.3f}",
                     f"{o['precision']:.3f}"])
        lines += ["", f"The run's detector (the `pii_detect` stage's settings) measured on `{m['file']}` ("
                      f"{m['documents']:,} documents, sha256 `{m['sha256'][:16]}`; corpora/pii/evaluate.py: recall "
                      "by overlap, and with >= 80 % of the span's characters covered):", "",
                  *md_table(["type", "gold spans", "recall", "recall (covered)", "precision"], rows), "",
                  "A span the detector missed stays in the text: at this recall, about "
                  f"{1 - o['recall']:.1%} of the personal data of the kind in that file would."]
    return "\n".join(lines)


def _toxicity(f: CorpusFacts) -> str:
    if "toxicity" not in f.stages or not f.report("toxicity").get("enabled"):
        return ("## Toxicity\n\nNot scored: the run's `toxicity` stage was off, so the text was neither tagged nor "
                "filtered for hate or offensive language.")
    p, rep = f.params("toxicity"), f.report("toxicity")
    action = p.get("action", "keep")
    dropped = ((f.stages["pii"].manifest.get("funnel") or {}).get("dropped") or {}).get("toxicity", 0) \
        if "pii" in f.stages else 0
    what = (f"documents above {p.get('threshold')} were left out ({dropped:,})" if action == "drop"
            else "nothing was removed for it")
    summary = ", ".join(f"{k} {v}" for k, v in sorted(rep.items()) if isinstance(v, (int, float))
                        and not isinstance(v, bool))
    return (f"## Toxicity\n\nEvery document was scored by the `toxicity` stage (column `toxicity`); action "
            f"`{action}`: {what}." + (f" Its report: {summary}." if summary else ""))


def _not_done(e: CorpusExport) -> str:
    f = e.facts
    out = []
    if e.stage != "pii" or not f.params("pii").get("enabled", True):
        out.append("PII was not replaced: names, numbers and addresses of the sources are in the text.")
    else:
        out.append("PII was found by automatic recognizers (presidio-analyzer with klue-pipeline's rules), not by "
                   "people: what they missed is still in the text.")
    if not f.report("toxicity").get("enabled"):
        out.append("No toxicity filtering.")
    benches = f.report("decontaminate").get("benchmarks") or {}
    out.append("Decontamination covers " + (f"only the {len(benches)} benchmark files listed above, by n-gram "
                                             "overlap: paraphrases and other benchmarks are not covered."
                                             if benches else "nothing: no benchmark files were given."))
    out.append("No document-level language identification beyond the filters' script check.")
    out.append("Nothing was checked by a person; the filters' thresholds are FineWeb-2's and Gopher's (see "
               "corpora/filters), not tuned on this text.")
    return "## What was not done\n\n" + "\n".join(f"- {line}" for line in out)


def _reproduce(e: CorpusExport) -> str:
    f = e.facts
    rows = [[stage, f"`{s.manifest.get('key')}`"] for stage, s in f.stages.items()
            if stage in (*_upto(e.stage), "pii_detect", "toxicity")]
    names = {"klue_version": "klue-pipeline", "python": "Python", "platform": "on"}
    versions = ", ".join(f"{names.get(k, k)} {v}" for k, v in e.run.items() if v)
    recipe = yaml.safe_dump(e.recipe, allow_unicode=True, sort_keys=False).strip() if e.recipe else ""
    arm = f" --arm '{f.arm}'" if f.arm else ""
    stage = (f" --stage {e.stage}" if e.stage != "pii" else "") + (" --pii-eval FILE" if e.pii_eval else "")
    lines = ["## How to reproduce", "",
             f"`klue run RECIPE --until {e.stage}` then `klue export WORKDIR --corpus{arm}{stage} --to DIR` "
             f"({versions}). The same recipe and seed give byte-identical shards, whatever the "
             "worker count. The stages' keys (each the hash of its params, code version and inputs' keys; its "
             "folder is `<stage>/<first 16 characters>`):", "", *md_table(["stage", "key"], rows)]
    if recipe:
        lines += ["", "<details><summary>The recipe, as the run recorded it</summary>", "", "```yaml", recipe,
                  "```", "", "</details>"]
    return "\n".join(lines)


def read_corpus_card(folder: Path) -> dict[str, Any]:
    """The klue-pipeline facts a corpus export recorded in its card (`klue_pipeline` in the metadata): what a model
    export checks before it links the dataset."""
    from huggingface_hub import DatasetCard

    path = folder / CARD
    if not path.is_file():
        raise WorkdirError(f"{path}: not found; {folder} is not a folder written by `klue export --corpus`")
    data = DatasetCard.load(path).data.to_dict()
    facts = data.get("klue_pipeline")
    if not isinstance(facts, dict) or "stage_key" not in facts:
        raise WorkdirError(f"{path}: no klue_pipeline record; {folder} was not written by `klue export --corpus`")
    return facts
