"""`klue export WORKDIR`: the command. The model folder and its card are pipeline/release/export.py's
(`export_run`); with `--corpus`, the corpus is pretrain/publish_corpus.py's (`export_corpus`), its dataset card
pipeline/release/dataset_card.py's. Nothing here uploads.
"""

from __future__ import annotations

from pathlib import Path

import click

from pipeline.release.export import export_run
from pipeline.release.licenses import LICENSE_FILE
from pipeline.workdir import WorkdirError
from pretrain.publish_corpus import export_corpus

UPLOAD = ('from huggingface_hub import create_repo, upload_folder\n'
          'create_repo("{repo}", repo_type="model", exist_ok=True)\n'
          'upload_folder(repo_id="{repo}", folder_path="{folder}", repo_type="model")')


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
