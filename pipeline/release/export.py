"""`klue export WORKDIR [--arm A] --to DIR`: one arm's model as a folder the Hub takes as it is.

DIR gets the model and tokenizer files of `arms/<arm>/pretrain/final`, the full model card (`README.md`: the
data's story, the training and, when the run fine-tuned, the KLUE table with its `model-index`; card.py),
`LICENSE` when the sources' licences differ (licenses.py), `loss_curve.png` and the run's `report.html`.
`huggingface_hub.upload_folder(repo_id=..., folder_path=DIR)` uploads it unchanged; nothing here uploads. The
command itself, with `--corpus`, is pretrain/publish.py.

It reads a finished workdir and writes only DIR (and the workdir's report, when the run has none yet, as
`klue report` would): stage folders are never touched, so it works on any workdir `klue run` made, older ones
included (their card says "not recorded" where they recorded less).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pipeline import io
from pipeline.manifest import pruned_note
from pipeline.release.card import write_model_card
from pipeline.release.dataset_card import read_corpus_card
from pipeline.release.facts import model_name, sources_of
from pipeline.release.licenses import LICENSE_FILE
from pipeline.report import write_report
from pipeline.workdir import WorkdirError, arm_stages, choose_arm, read_run

MODEL_FILES_SKIPPED = {"README.md", LICENSE_FILE}  # the stage's own card: the export writes the full one


def export_run(workdir: Path, to: Path, arm: str | None = None, force: bool = False,
               dataset: Path | None = None) -> dict[str, Any]:
    """Write the publishable folder of `arm` (default: the only arm) of the run in `workdir` to `to`, atomically
    (a folder at `to` is replaced only with `force`). `dataset`: a folder `klue export --corpus --repo-id ID`
    wrote from the same arm; the card links its Hub id. Returns what was written: arm, files, licence.

    The card is `write_model_card`'s, as the pretrain stage's own: the arm's stage folders are handed to it, and
    the pretrain and finetune stages contribute their facts (training, word order, the KLUE table) through their
    `Stage.card_facts` hooks."""
    run = read_run(workdir)
    rec = choose_arm(run, arm, workdir)
    stages = arm_stages(workdir, rec)
    pre = stages.get("pretrain")
    if pre is None:
        raise WorkdirError(f"{workdir}: arm {rec['name']!r} has no finished pretrain stage; run `klue run` to "
                              "pretrain first")
    if (note := pruned_note(pre.manifest)) is not None:
        raise WorkdirError(f"{pre.path}: {note}; rebuild it with `klue run RECIPE --workdir {workdir} --force "
                           "pretrain` (or `klue merge` a whole copy) to export the model")
    finetune = stages.get("finetune")
    linked = linked_dataset(dataset, stages, rec["name"]) if dataset is not None else None
    model_dir = pre.path / pre.meta.get("final_dir", "final")
    if not (model_dir / "config.json").is_file():
        raise WorkdirError(f"{model_dir}: no config.json (not a model folder)")
    if to.exists() and not (force and to.is_dir()):
        raise WorkdirError(f"{to}: already exists; choose another --to or pass --force to replace it")
    report = workdir / "report.html"
    if not report.is_file() and run.get("status") == "ok":
        write_report(workdir)
    recipe = run.get("recipe") or {}
    several = len(run["arms"]) > 1 or rec["name"] != "default"
    files = [f for f in ("loss_curve.png",) if (pre.path / f).is_file()] + (["report.html"] if report.is_file() else [])
    provenance = {"klue-pipeline": pre.manifest.get("klue_version", "unknown"),
                  "pretrain stage": f"pretrain/{pre.path.name}"}
    if finetune is not None:
        provenance["finetune stage"] = f"finetune/{finetune.path.name}"
    with io.atomic_path(to, replace_dir=force) as tmp:
        tmp.mkdir()
        for f in sorted(model_dir.iterdir()):
            if f.is_file() and f.name not in MODEL_FILES_SKIPPED:
                shutil.copy2(f, tmp / f.name)
        for name in files:
            shutil.copy2((pre.path if name == "loss_curve.png" else workdir) / name, tmp / name)
        facts = write_model_card(tmp, stages, model_dir=model_dir,
                                 name=model_name(f"{recipe.get('name', workdir.name)}"
                                                 + (f"-{rec['name']}" if several else "")),
                                 recipe=recipe.get("name"), sources=sources_of(recipe.get("sources") or []),
                                 arm=rec["name"] if several else None, files=tuple(files), provenance=provenance,
                                 dataset=linked)
    return {"arm": rec["name"], "files": sorted(p.name for p in to.iterdir()), "license": facts.license,
            "results": len(facts.evaluation.results) if facts.evaluation else 0}


def linked_dataset(folder: Path, stages: dict[str, Any], arm: str) -> str:
    """The Hub id of the corpus exported to `folder`, once it is checked to be this arm's: the stage it exported
    has the key of this arm's stage of that name (the same bytes), and it was given a `--repo-id` to link."""
    rec = read_corpus_card(folder)
    mine = stages.get(rec.get("stage", ""))
    if mine is None or mine.manifest.get("key") != rec["stage_key"]:
        raise WorkdirError(f"--dataset {folder}: exported from another run or arm (its {rec.get('stage')} stage "
                           f"key {str(rec['stage_key'])[:16]} is not arm {arm!r}'s)")
    if not rec.get("repo_id"):
        raise WorkdirError(f"--dataset {folder}: no Hub id recorded; export the corpus with --repo-id ID so the "
                           "model card can link it")
    return str(rec["repo_id"])
