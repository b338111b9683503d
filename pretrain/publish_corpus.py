"""`klue export WORKDIR --corpus --to DIR`: an arm's curated corpus as a dataset folder the Hub takes as it is.

DIR gets the documents of one corpus stage (`pii` by default: the text the tokenizer and the model read) as
Parquet shards in the Hub's layout, `data/train-00000-of-000NN.parquet` and, when the arm has an `encode` stage
that held documents out, `data/validation-...` (the same documents its held-out loss was measured on: the split
is encode's id hash, `pretrain.encode.is_held_out`), and a dataset card (`README.md`,
pipeline/release/dataset_card.py) that tells the data's story from the run's manifests, with `LICENSE` when the
sources' licences differ.
`datasets.load_dataset("parquet", data_dir=DIR)` and the Hub's viewer read it as it is; nothing here uploads.

Columns: `id`, `text`, `source`, and what users filter on: `license` (the recipe's licence of the document's
source), `language`, `pii_types` (the PII types replaced in the document, sorted; empty where nothing was
replaced or the stage is before `pii`) and, when the `toxicity` stage scored the corpus, `toxicity` (its
stored score). The shards' `meta` column (provenance and the sources' own fields, e.g. a petition's title) is
left out: PII detection reads `text` only, so those fields were never checked for personal data.

Like the model export it reads a finished workdir and writes only DIR; every count is checked against the
stage's manifest before anything is written (an export that does not reconcile is an error, not a card).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from corpora.lang import get_language
from corpora.pii.evaluate import evaluate_file
from corpora.pii.spans import read_spans, spans_name
from corpora.shards import iter_docs, list_shards
from corpora.stages.pii_detect import PiiDetectParams
from corpora.toxicity.scores import read_scores, scores_name
from pipeline import io
from pipeline.manifest import sha256_file
from pipeline.release.dataset_card import CORPUS_STAGES, CorpusExport, write_dataset_card
from pipeline.release.facts import CorpusFacts, model_name, sources_of
from pipeline.release.licenses import card_license
from pipeline.stage import StageInput
from pipeline.workdir import WorkdirError, arm_stages, choose_arm, read_run
from pretrain.encode import is_held_out

DATA = "data"  # the Hub's folder for data files; `configs` in the card points at it
SHARD_MB = 256  # text per shard: the Hub's viewer and `datasets` streaming want files of a few hundred MB at most
ROW_GROUP = 1024  # rows per Parquet row group: small groups let the viewer and streaming read a page cheaply


@dataclass
class SplitWriter:
    """Rows of one split into `data/<split>-NNNNN.parquet.part` files of at most `shard_bytes` of text, renamed to
    the Hub's `<split>-00000-of-000NN.parquet` once the count is known (`finish`)."""

    folder: Path
    split: str
    schema: pa.Schema
    shard_bytes: int
    files: list[Path] = field(default_factory=list)
    rows: int = 0
    _writer: pq.ParquetWriter | None = None
    _bytes: int = 0
    _batch: list[dict[str, Any]] = field(default_factory=list)

    def add(self, row: dict[str, Any]) -> None:
        size = len(row["text"].encode("utf-8"))
        if self._writer is None or (self._bytes and self._bytes + size > self.shard_bytes):
            self._close()
            path = self.folder / f"{self.split}-{len(self.files):05d}.parquet.part"
            # fixed settings (no statistics), as the corpus shards: the same documents give the same bytes
            self._writer = pq.ParquetWriter(path, self.schema, compression="zstd", write_statistics=False)
            self.files.append(path)
            self._bytes = 0
        self._batch.append(row)
        self._bytes += size
        self.rows += 1
        if len(self._batch) >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        if self._batch and self._writer is not None:
            self._writer.write_table(pa.Table.from_pylist(self._batch, schema=self.schema))
            self._batch = []

    def _close(self) -> None:
        self._flush()
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def finish(self) -> list[str]:
        """Close the last file and give every file its final name; the names, relative to the dataset folder."""
        self._close()
        n = len(self.files)
        names = []
        for i, part in enumerate(self.files):
            final = part.with_name(f"{self.split}-{i:05d}-of-{n:05d}.parquet")
            io.move_into_place(part, final, io.temp_name(final))  # inside the export's temp folder
            names.append(f"{DATA}/{final.name}")
        return names


def export_corpus(workdir: Path, to: Path, *, arm: str | None = None, stage: str = "pii", force: bool = False,
                  pii_eval: Path | None = None, repo_id: str | None = None, model_repo: str | None = None,
                  shard_mb: float = SHARD_MB) -> CorpusExport:
    """Write the dataset folder of `stage`'s documents of `arm` of the run in `workdir` to `to`, atomically (a
    folder at `to` is replaced only with `force`). `pii_eval`: a gold PII file (`klue pii eval`'s format) to
    measure the run's detector on for the card; `repo_id`: the Hub id the folder is meant for (in the card, and
    what a model export links); `model_repo`: the Hub id of the model exported from the same run."""
    if stage not in CORPUS_STAGES:
        raise WorkdirError(f"--stage {stage!r}: not a corpus stage; the documents are in {', '.join(CORPUS_STAGES)}")
    run = read_run(workdir)
    rec = choose_arm(run, arm, workdir)
    stages = arm_stages(workdir, rec)
    if stage not in stages:
        raise WorkdirError(f"{workdir}: arm {rec['name']!r} has no finished {stage!r} stage (finished: "
                           f"{', '.join(stages) or 'none'}); run `klue run` up to it first")
    if to.exists() and not (force and to.is_dir()):
        raise WorkdirError(f"{to}: already exists; choose another --to or pass --force to replace it")
    upto = {k: v for k, v in stages.items() if k in CORPUS_STAGES[:CORPUS_STAGES.index(stage) + 1]
            or k in ("pii_detect", "toxicity", "encode")}
    recipe = run.get("recipe") or {}
    several = len(run["arms"]) > 1 or rec["name"] != "default"
    # the filter stage's language (every corpus stage has the recipe's), else the recipe's: never a guess
    language = (stages["filter"].manifest.get("params") or {}).get("language") if "filter" in stages \
        else recipe.get("language")
    if not language:
        raise WorkdirError(f"{workdir}: arm {rec['name']!r}: neither its filter stage nor its recipe names a language")
    lang = get_language(str(language))
    facts = CorpusFacts(name=model_name(f"{recipe.get('name', workdir.name)}" + (f"-{rec['name']}" if several
                                                                                   else "") + "-corpus"),
                        recipe=recipe.get("name"), language=lang.code, language_name=lang.name,
                        license=card_license(sources_of(recipe.get("sources") or [])), stages=upto,
                        arm=rec["name"] if several else None)
    held = _held_out(stages.get("encode"))
    measured = measure_pii_recall(pii_eval, stages["pii_detect"]) if pii_eval and "pii_detect" in stages else None
    if pii_eval and measured is None:
        raise WorkdirError(f"{workdir}: arm {rec['name']!r} has no pii_detect stage to measure on {pii_eval}")
    licences = {s.source: s.text or "unknown" for s in facts.license.sources}
    with io.atomic_path(to, replace_dir=force) as tmp:
        (tmp / DATA).mkdir(parents=True)
        out = _write_splits(tmp / DATA, stages, stage, licences, language, held, int(shard_mb * 2**20))
        export = CorpusExport(facts=facts, stage=stage, files=out["files"], docs=out["docs"],
                              by_source=out["by_source"], columns=out["columns"], held_out=held, pii_eval=measured,
                              recipe=portable(recipe, run.get("recipe_file")),
                              run={k: run.get(k) for k in ("klue_version", "python", "platform")},
                              model_repo=model_repo, repo_id=repo_id)
        _reconcile(export, stages[stage])
        write_dataset_card(tmp, export)
    return export


def portable(value: Any, recipe_file: str | None) -> Any:
    """The recipe snapshot as a card may publish it: an absolute path under the recipe's folder relative to it,
    any other absolute path as its last two parts (`…/klue/ynat-v1_dev.json`), so the card does not give away
    the layout of the machine that ran it."""
    if isinstance(value, dict):
        return {k: portable(v, recipe_file) for k, v in value.items()}
    if isinstance(value, list):
        return [portable(v, recipe_file) for v in value]
    if isinstance(value, str) and value.startswith("/"):
        path, root = Path(value), Path(recipe_file).parent if recipe_file else None
        if root is not None and path.is_relative_to(root):
            return path.relative_to(root).as_posix()
        return "…/" + "/".join(path.parts[-2:])
    return value


def _held_out(encode: StageInput | None) -> dict[str, Any] | None:
    if encode is None:
        return None
    fraction = float((encode.manifest.get("params") or {}).get("eval_fraction") or 0.0)
    if fraction <= 0:
        return None
    return {"seed": int(encode.manifest["seed"]), "eval_fraction": fraction, "key": encode.manifest.get("key")}


def _schema(toxicity: bool) -> pa.Schema:
    fields = [pa.field("id", pa.string(), nullable=False), pa.field("text", pa.string(), nullable=False),
              pa.field("source", pa.string(), nullable=False), pa.field("license", pa.string(), nullable=False),
              pa.field("language", pa.string(), nullable=False),
              pa.field("pii_types", pa.list_(pa.string()), nullable=False)]
    if toxicity:
        fields.append(pa.field("toxicity", pa.float32()))
    return pa.schema(fields)


def _write_splits(folder: Path, stages: dict[str, StageInput], stage: str, licences: dict[str, str],
                  language: str, held: dict[str, Any] | None, shard_bytes: int) -> dict[str, Any]:
    """Stream the stage's shards into the split writers: one input shard's spans and scores in memory at a time."""
    tox = stages.get("toxicity")
    scored = tox is not None and bool((tox.meta.get("report") or {}).get("enabled"))
    schema = _schema(scored)
    writers = {split: SplitWriter(folder, split, schema, shard_bytes) for split in
               (("train", "validation") if held else ("train",))}
    by_source: dict[str, Counter[str]] = {s: Counter() for s in writers}
    replaced = _replaced_types(stages, stage)
    for shard in list_shards(stages[stage].path):
        types_of = replaced(shard)
        scores = read_scores(tox.path / scores_name(shard)) if scored and tox is not None else {}
        for d in iter_docs(shard):
            split = "validation" if held and is_held_out(d.id, held["seed"], held["eval_fraction"]) else "train"
            row: dict[str, Any] = {"id": d.id, "text": d.text, "source": d.source,
                                   "license": licences.get(d.source, "unknown"), "language": language,
                                   "pii_types": types_of(d.id)}
            if scored:
                score = scores.get(d.id)
                row["toxicity"] = None if score is None else float(score.score)
            writers[split].add(row)
            by_source[split][d.source] += 1
    files = {split: w.finish() for split, w in writers.items() if w.rows}
    return {"files": files, "docs": {s: w.rows for s, w in writers.items() if w.rows},
            "by_source": {s: c for s, c in by_source.items() if writers[s].rows}, "columns": schema.names}


def _replaced_types(stages: dict[str, StageInput], stage: str) -> Callable[[Path], Callable[[str], list[str]]]:
    """Per input shard, a function from document id to the PII types replaced in it: the `pii` stage's
    selection of `pii_detect`'s spans when it replaced (placeholder, surrogate); nothing otherwise (drop mode
    keeps the documents it keeps unchanged; a stage before `pii` replaced nothing)."""
    p = (stages["pii"].manifest.get("params") or {}) if stage == "pii" else {}
    if stage != "pii" or not p.get("enabled", True) or p.get("mode", "placeholder") == "drop":
        return lambda shard: lambda doc_id: []
    keep = set(p["types"]) if p.get("types") is not None else None
    det = stages["pii_detect"].path

    def for_shard(shard: Path) -> Callable[[str], list[str]]:
        spans = read_spans(det / spans_name(shard))
        types = {i: sorted({s.type for s in ss if keep is None or s.type in keep}) for i, ss in spans.items()}
        return lambda doc_id: types.get(doc_id, [])

    return for_shard


def _reconcile(export: CorpusExport, source: StageInput) -> None:
    """The exported documents, per source, are exactly the stage's kept ones (its manifest's funnel)."""
    total = sum(export.docs.values())
    kept = (source.manifest.get("funnel") or {}).get("docs_kept")
    if kept is not None and total != kept:
        raise WorkdirError(f"{source.path}: exported {total} documents but its manifest kept {kept}; the folder's "
                           "shards do not match its manifest")
    per = Counter[str]()
    for c in export.by_source.values():
        per.update(c)
    for name, f in (source.manifest.get("by_source") or {}).items():
        if per.get(name, 0) != f.get("docs_kept", 0):
            raise WorkdirError(f"{source.path}: source {name!r} exported {per.get(name, 0)} documents, its "
                               f"manifest kept {f.get('docs_kept', 0)}")


def measure_pii_recall(gold: Path, detect: StageInput) -> dict[str, Any]:
    """Precision and recall per type of the run's own detector (the `pii_detect` stage's params) on the gold
    file `gold` (`klue pii eval`'s scores, corpora/pii/evaluate.py), with the file's name, sha256 and size."""
    # lazy: presidio and spaCy (corpora.pii.engine)
    from corpora.pii.engine import PiiDetector
    p = PiiDetectParams(**(detect.manifest.get("params") or {}))
    try:
        res = evaluate_file(gold, PiiDetector(types=p.types, threshold=p.threshold, doc_timeout_s=p.doc_timeout_s,
                                              language=p.language))
    except (OSError, ValueError) as e:
        raise WorkdirError(f"--pii-eval {gold}: {e}") from None
    return {"file": gold.name, "sha256": sha256_file(gold), "documents": res["documents"],
            "per_type": res["per_type"], "overall": res["overall"]}
