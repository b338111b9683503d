"""`klue export WORKDIR [--arm A] --to DIR`: one arm's model as a folder the Hub takes as it is.

DIR gets the model and tokenizer files of `arms/<arm>/pretrain/final`, the full model card (`README.md`: the
data's story, the training and, when the run fine-tuned, the KLUE table with its `model-index`; pretrain/card.py),
`LICENSE` when the sources' licences differ (corpora/licenses.py), `loss_curve.png` and the run's `report.html`.
`huggingface_hub.upload_folder(repo_id=..., folder_path=DIR)` uploads it unchanged; nothing here uploads.

It reads a finished workdir and writes only DIR (and the workdir's report, when the run has none yet, as
`klue report` would): stage folders are never touched, so it works on any workdir `klue run` made, older ones
included (their card says "not recorded" where they recorded less).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import click

from corpora.licenses import LICENSE_FILE
from pipeline.workdir import WorkdirError, arm_stages, choose_arm, read_run
from pretrain.publish_corpus import export_corpus, read_corpus_card

MODEL_FILES_SKIPPED = {"README.md", LICENSE_FILE}  # the stage's own card: the export writes the full one
UPLOAD = ('from huggingface_hub import create_repo, upload_folder\n'
          'create_repo("{repo}", repo_type="model", exist_ok=True)\n'
          'upload_folder(repo_id="{repo}", folder_path="{folder}", repo_type="model")')


def export_run(workdir: Path, to: Path, arm: str | None = None, force: bool = False,
               dataset: Path | None = None) -> dict[str, Any]:
    """Write the publishable folder of `arm` (default: the only arm) of the run in `workdir` to `to`, atomically
    (a folder at `to` is replaced only with `force`). `dataset`: a folder `klue export --corpus --repo-id ID`
    wrote from the same arm; the card links its Hub id. Returns what was written: arm, files, licence."""
    from pipeline import io
    from pipeline.report import write_report
    from pretrain.card import write_card
    from pretrain.card_facts import gather, hardware_recorded, model_name, read_json, sources_of
    from pretrain.card_scores import evaluation
    from pretrain.stages.pretrain import run_order_verdict

    run = read_run(workdir)
    rec = choose_arm(run, arm, workdir)
    stages = arm_stages(workdir, rec)
    pre = stages.pop("pretrain", None)
    if pre is None:
        raise WorkdirError(f"{workdir}: arm {rec['name']!r} has no finished pretrain stage; run `klue run` to "
                              "pretrain first")
    finetune = stages.pop("finetune", None)
    linked = linked_dataset(dataset, stages, rec["name"]) if dataset is not None else None
    model_dir = pre.path / pre.meta.get("final_dir", "final")
    if not (model_dir / "config.json").is_file():
        raise WorkdirError(f"{model_dir}: no config.json (not a model folder)")
    if to.exists() and not (force and to.is_dir()):
        raise WorkdirError(f"{to}: already exists; choose another --to or pass --force to replace it")
    summary = read_json(pre.path / "summary.json")
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
    facts = gather(model_dir, stages, name=model_name(f"{recipe.get('name', workdir.name)}"
                                                      + (f"-{rec['name']}" if several else "")),
                   recipe=recipe.get("name"), sources=sources_of(recipe.get("sources") or []),
                   train=pre.manifest.get("params") or {}, summary=summary,
                   hardware=hardware_recorded(pre.meta, summary, pre.manifest),
                   order_verdict=run_order_verdict(pre.path, summary),
                   arm=rec["name"] if several else None, evaluation=evaluation(finetune) if finetune else None,
                   files=tuple(files), provenance=provenance, dataset=linked)
    from pretrain.card import build_card

    card = build_card(facts)
    with io.atomic_path(to, replace_dir=force) as tmp:
        tmp.mkdir()
        for f in sorted(model_dir.iterdir()):
            if f.is_file() and f.name not in MODEL_FILES_SKIPPED:
                shutil.copy2(f, tmp / f.name)
        for name in files:
            shutil.copy2((pre.path if name == "loss_curve.png" else workdir) / name, tmp / name)
        write_card(tmp, card, facts.license)
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


@click.command("export")
@click.argument("workdir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--arm", default=None, help="The arm to export (e.g. 'pii=off'); default: the run's only arm.")
@click.option("--to", "to", required=True, type=click.Path(path_type=Path),
              help="The folder to write (model, tokenizer, README.md card, LICENSE, loss curve, report).")
@click.option("--force", is_flag=True, help="Replace DIR if it exists.")
@click.option("--corpus", is_flag=True, help="Export the arm's curated corpus (Parquet shards and a dataset card) "
                                             "instead of the model.")
@click.option("--stage", default="pii", show_default=True, help="--corpus: the corpus stage whose documents to "
                                                                 "export (collect, filter, dedup, decontaminate, pii).")
@click.option("--pii-eval", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="--corpus: a gold PII file (`klue pii eval`'s format) to measure the run's detector on for the "
                   "card.")
@click.option("--repo-id", default=None, help="--corpus: the Hub id the dataset is meant for (in its card and "
                                              "loading example; a model export's --dataset links it).")
@click.option("--model-repo", default=None, help="--corpus: the Hub id of the model exported from the same run, "
                                                 "linked from the dataset card.")
@click.option("--dataset", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Model export: the folder `klue export --corpus --repo-id ID` wrote from the same arm; the model "
                   "card links the dataset by its Hub id.")
def export_cmd(workdir: Path, arm: str | None, to: Path, force: bool, corpus: bool, stage: str,
               pii_eval: Path | None, repo_id: str | None, model_repo: str | None, dataset: Path | None) -> None:
    """Export an arm's pretrained model as a publishable folder: the model and tokenizer of
    WORKDIR/arms/<arm>/pretrain/final, a model card in the Hub's format (README.md: sources and licences, what
    curation and PII replacement removed, decontamination, tokenizer, training, the KLUE table as model-index
    when the run fine-tuned, limitations), LICENSE for mixed licences, the loss curve and the run's report.

    With --corpus, the arm's curated corpus instead (after the pii stage; --stage picks another): Parquet shards
    in the Hub's layout (data/train-*, and data/validation-* for the documents pretraining held out) and a
    dataset card telling the data's story from the run's manifests (pretrain/publish_corpus.py).

    \b
    Nothing is uploaded. To publish the folder on the Hugging Face Hub (after `huggingface-cli login`):
      from huggingface_hub import create_repo, upload_folder
      create_repo("you/klue-tiny", repo_type="model", exist_ok=True)
      upload_folder(repo_id="you/klue-tiny", folder_path="DIR", repo_type="model")

    \b
    Examples:
      klue export runs/klue-sample --to out/klue-sample
      klue export runs/ablation-pii --arm pii=off --to out/pii-off
      klue export runs/klue-sample --corpus --repo-id you/klue-sample-corpus --to out/corpus
      klue export runs/klue-sample --dataset out/corpus --to out/model
    """
    corpus_only = {"--stage": stage != "pii", "--pii-eval": pii_eval, "--repo-id": repo_id,
                   "--model-repo": model_repo}
    if not corpus and any(corpus_only.values()):
        raise click.UsageError(f"{', '.join(k for k, v in corpus_only.items() if v)}: only with --corpus")
    if corpus and dataset is not None:
        raise click.UsageError("--dataset links a model to its corpus: not with --corpus")
    if corpus:
        _export_corpus(workdir, to, arm, stage, force, pii_eval, repo_id, model_repo)
        return
    try:
        res = export_run(workdir, to, arm, force, dataset)
    except (WorkdirError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    lic = res["license"]
    click.echo(f"exported arm {res['arm']} of {workdir} to {to}: {', '.join(res['files'])}")
    named = f"{lic.license} ({lic.license_name}, see {LICENSE_FILE})" if lic.license_name else lic.license
    click.echo(f"licence: {named}"
               + (f"; share-alike sources: {', '.join(s.source for s in lic.share_alike)}" if lic.share_alike else "")
               + (f"; sources without a licence: {', '.join(s.source for s in lic.missing)}" if lic.missing else ""))
    click.echo(f"model-index: {res['results']} results" if res["results"] else "model-index: none (no fine-tuning)")
    click.echo("nothing was uploaded; to publish it on the Hub:\n"
               + "\n".join("  " + line for line in UPLOAD.format(repo="you/name", folder=to).splitlines()))


def _export_corpus(workdir: Path, to: Path, arm: str | None, stage: str, force: bool, pii_eval: Path | None,
                   repo_id: str | None, model_repo: str | None) -> None:
    try:
        e = export_corpus(workdir, to, arm=arm, stage=stage, force=force, pii_eval=pii_eval, repo_id=repo_id,
                          model_repo=model_repo)
    except (WorkdirError, ValueError) as err:
        raise click.ClickException(str(err)) from None
    splits = ", ".join(f"{split} {n:,} documents in {len(e.files[split])} file{'s' if len(e.files[split]) > 1 else ''}"
                       for split, n in e.docs.items())
    click.echo(f"exported the {stage} stage of arm {e.facts.arm or 'default'} of {workdir} to {to}: {splits}")
    click.echo(f"licence: {e.facts.license.license}" + (f" ({e.facts.license.license_name}, see LICENSE)"
                                                        if e.facts.license.license_name else ""))
    repo = repo_id or "you/name"
    click.echo("nothing was uploaded; to publish it on the Hub:\n"
               + "\n".join("  " + line for line in UPLOAD.format(repo=repo, folder=to).replace(
                   'repo_type="model"', 'repo_type="dataset"').splitlines()))
