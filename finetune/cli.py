"""`klue finetune` and `klue score`. Only click is imported at module level (`klue --help` imports this
module); torch and transformers load inside the commands, the task modules when a task is named or the task list
is shown (`klue finetune --help`, `--task-list`)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Literal

import click

from finetune.data import json_safe, load_task_data
from finetune.registry import SUITES, RegistryError, get_task, resolve_name, task_list_text
from finetune.score import score_file


def _task_help() -> str:
    return "\n\n".join(
        f"\b\n{suite.upper()} tasks (metrics, the one that selects the checkpoint, title):\n" + "\n".join(
            f"  {name:<5} {', '.join(e.metrics)} (selects on {e.main_metric}): {e.title}"
            for name, e in tasks.items())
        for suite, tasks in SUITES.items())


class _TaskHelpCommand(click.Command):
    """A command whose help ends with every suite's tasks (`_task_help`), built when the help is shown: the list
    reads each task's `entry`, which imports the task modules, and `klue --help`, which shows only this
    command's first sentence, should not pay for that."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text(inspect.cleandoc(f"{self.help}{_task_help()}"))


def _print_task_list(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo("\n\n".join(f"# {suite}\n{task_list_text(suite)}" for suite in SUITES))
        ctx.exit()


def _seeds(_ctx: click.Context, _param: click.Parameter, value: str) -> list[int]:
    try:
        seeds = [int(s) for s in value.replace(",", " ").split()]
    except ValueError:
        raise click.BadParameter(f"expected integers separated by commas or spaces, got {value!r}") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise click.BadParameter("give at least one seed, each once")
    return seeds


@click.command(cls=_TaskHelpCommand,
               help="Fine-tune a model on KLUE tasks, select the best checkpoint on a selection split carved from "
                    "the training examples (--protocol), score it on the evaluation split, "
                    "and write metrics.json, predictions and a one-line summary.\n\n"
                    "TASK is one task, a comma-separated list (ynat,sts), 'all' (the eight KLUE tasks) or 'jglue' "
                    "(the four JGLUE tasks). With more than one task, or "
                    "with --vs-random-init, OUTPUT holds one folder per run (TASK/, TASK-random-init/) and "
                    "results.md / results.json, the table of every run beside KLUE's published scores.\n\n")
@click.argument("task", required=False)
@click.option("--task-list", is_flag=True, expose_value=False, is_eager=True, callback=_print_task_list,
              help="List the registered tasks of every suite with their metrics and exit.")
@click.option("--model", "model_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Folder that AutoModel/AutoTokenizer load offline (safetensors).")
@click.option("--data-dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="KLUE data folder (official files, e.g. $KLUE_DATA_DIR/klue) or a HF datasets copy.")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), help="Output folder.")
@click.option("--seeds", default="42", show_default=True, callback=_seeds,
              help="Seeds, e.g. '1,2,3': one run each, reported as mean ± std.")
@click.option("--split", type=click.Choice(["auto", "official", "dev-split"]), default="auto", show_default=True,
              help="official: train file -> dev; dev-split: dev split 80/20 by guid hash (MRC: by article); "
                   "auto: official if a train file exists.")
@click.option("--eval-fraction", type=float, default=0.2, show_default=True, help="Evaluation share for dev-split.")
@click.option("--protocol", type=click.Choice(["selection-split", "klue-baseline"]), default="selection-split",
              show_default=True,
              help="Where the checkpoint is chosen and early stopping looks. selection-split: on --selection-fraction "
                   "of the training examples (by guid hash; MRC by article, DST by dialogue), never on the reported "
                   "split; klue-baseline: on the reported split itself, as KLUE-baseline's dev table (marked in "
                   "tables). seed-N/split.json lists both splits' guids.")
@click.option("--selection-fraction", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.1,
              show_default=True, help="selection-split: the share of the training examples that chooses the "
                                      "checkpoint (the model trains on the rest).")
@click.option("--random-init", is_flag=True, help="Same architecture, fresh weights (the no-pretraining baseline).")
@click.option("--vs-random-init", is_flag=True,
              help="Run every task twice, with the model and with fresh weights of the same shape, under the same "
                   "seeds, data and hyperparameters: what pretraining bought.")
@click.option("--max-train-examples", type=int, help="Cap on training examples (fixed guid-hash sample).")
@click.option("--max-eval-examples", type=int, help="Cap on evaluation examples (fixed guid-hash sample).")
@click.option("--max-steps", type=int, help="Cap on optimiser steps.")
@click.option("--epochs", type=int, help="Override the task's default epochs.")
@click.option("--lr", "learning_rate", type=float, help="Override the default learning rate.")
@click.option("--batch-size", type=int, help="Override the default train batch size.")
@click.option("--max-length", type=int, help="Override the default max sequence length.")
@click.option("--group-by-length/--no-group-by-length", default=None,
              help="Batches of similar length (faster; a departure, marked in tables) or KLUE-baseline's uniform "
                   "shuffle (the default: the same batches as transformers' Trainer).")
@click.option("--hp", "task_hp", multiple=True, metavar="TASK.FIELD=VALUE",
              help="A hyperparameter for one task of the run, after the overrides above, e.g. "
                   "--hp sts.epochs=10 --hp ynat.max_length=64 --hp nli.pooling=mean --hp sts.patience=null "
                   "--hp re.evals_per_epoch=1. Repeatable.")
@click.option("--eval-every", type=int,
              help="Also evaluate every N steps (default: the task's evals_per_epoch, KLUE-baseline's four an "
                   "epoch).")
@click.option("--save-model/--no-save-model", default=True, show_default=True,
              help="Save the selected checkpoint under seed-N/model.")
@click.option("--label", help="Name of this model in reports (default: the model folder's name).")
@click.option("--resume", is_flag=True,
              help="Keep every seed that already has OUTPUT/.../seed-N/metrics.json and run only the others "
                   "(a killed run continues where it stopped; same arguments, same bytes).")
@click.option("--quiet", is_flag=True, help="No progress bars, and no transformers load reports (new head weights).")
def finetune(task: str | None, model_dir: Path | None, data_dir: Path | None, output: Path | None,
             seeds: list[int], split: Literal["auto", "official", "dev-split"], eval_fraction: float,
             protocol: Literal["selection-split", "klue-baseline"], selection_fraction: float, random_init: bool,
             vs_random_init: bool,
             max_train_examples: int | None, max_eval_examples: int | None, max_steps: int | None,
             epochs: int | None, learning_rate: float | None, batch_size: int | None, max_length: int | None,
             group_by_length: bool | None, task_hp: tuple[str, ...], eval_every: int | None, save_model: bool,
             label: str | None, resume: bool, quiet: bool) -> None:
    missing = [n for n, v in (("TASK", task), ("--model", model_dir), ("--data-dir", data_dir),
                              ("--output", output)) if v is None]
    if missing:
        raise click.UsageError(f"missing {', '.join(missing)}")
    assert task is not None and model_dir is not None and data_dir is not None and output is not None
    if random_init and vs_random_init:
        raise click.UsageError("--random-init and --vs-random-init exclude each other")
    names = _task_names(task)
    per_task = _per_task_hp(task_hp, names)
    arms = [False, True] if vs_random_init else [random_init]
    suite = len(names) > 1 or vs_random_init
    # The random-init arm's row: "random init", or "LABEL (random init)" under a label the user chose, so that two
    # runs of the same model with different settings (--label "X cls", --label "X mean") fit in one table
    fresh_label = "random init" if label is None else f"{label} (random init)"
    if suite and label is None:
        label = model_dir.resolve().name  # the same row name for every task of the pretrained arm

    from finetune.tasks.base import DataError
    from finetune.trainer import run_finetune, summary_line

    if quiet:  # transformers' own load reports and bars too; restored when the command ends (in-process callers)
        from transformers.utils import logging as hf_logging

        verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()

        def restore() -> None:
            hf_logging.set_verbosity(verbosity)
            if bars:
                hf_logging.enable_progress_bar()

        click.get_current_context().call_on_close(restore)

    # Every task's data is read before the first run trains, so a broken file fails in seconds, not after hours.
    jobs = []
    for name in names:
        try:
            task_obj = get_task(name, data_dir=data_dir)
            overrides: dict[str, Any] = {"epochs": epochs, "learning_rate": learning_rate,
                                         "batch_size": batch_size, "max_length": max_length,
                                         "group_by_length": group_by_length}
            hp = task_obj.defaults.replace(**{k: v for k, v in overrides.items() if v is not None},
                                           **per_task.get(name, {}))
            data = load_task_data(task_obj, data_dir, split=split, eval_fraction=eval_fraction,
                                  max_train=max_train_examples, max_eval=max_eval_examples, protocol=protocol,
                                  selection_fraction=selection_fraction)
        except DataError as e:
            raise click.ClickException(str(e)) from None
        jobs.append((name, task_obj, hp, data))

    run_dirs = []
    for name, task_obj, hp, data in jobs:
        if not quiet:
            click.echo(f"{name}: {data.source['n_train']} train / {data.source['n_select']} selection / "
                       f"{data.source['n_eval']} eval examples — "
                       f"{data.source['note']}", err=True)
        for fresh in arms:
            out = output / (name + ("-random-init" if fresh and vs_random_init else "")) if suite else output
            arm_label = fresh_label if fresh and vs_random_init else label
            summary = run_finetune(task_obj, model_dir, data, out, seeds, hp, max_steps=max_steps,
                                   eval_every=eval_every, random_init=fresh, save_model=save_model,
                                   label=arm_label, progress=not quiet, resume=resume)
            click.echo(summary_line(summary))
            run_dirs.append(out)
    if suite:
        from finetune.results import write_results

        click.echo(write_results(output / "results", run_dirs))


def _per_task_hp(specs: tuple[str, ...], names: list[str]) -> dict[str, dict[str, Any]]:
    """`--hp TASK.FIELD=VALUE` -> {task: {field: value}}, typed like the Hyperparams field."""
    import yaml

    from finetune.tasks.base import Hyperparams, check_hyperparams, check_task_hyperparam

    types = Hyperparams.model_fields
    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        key, eq, value = spec.partition("=")
        task, dot, field = key.partition(".")
        if not eq or not dot:
            raise click.BadParameter(f"{spec!r}: expected TASK.FIELD=VALUE, e.g. sts.epochs=10", param_hint="--hp")
        try:
            name = resolve_name(task.strip())
        except RegistryError as e:
            raise click.BadParameter(str(e), param_hint="--hp") from None
        if name not in names:
            raise click.BadParameter(f"{spec!r}: task {name!r} is not part of this run ({', '.join(names)})",
                                     param_hint="--hp")
        field = field.strip()
        if field not in types:
            raise click.BadParameter(f"{spec!r}: unknown hyperparameter {field!r}; one of {', '.join(types)}",
                                     param_hint="--hp")
        try:
            check_task_hyperparam(name, field)
        except ValueError as e:
            raise click.BadParameter(f"{spec!r}: {e}", param_hint="--hp") from None
        try:  # the value as YAML reads it (null, true, 3, 1.0e-3), then as the model converts it
            value = check_hyperparams({field: yaml.safe_load(value.strip() or "''")}, f"{task.strip()}")[field]
        except (ValueError, yaml.YAMLError) as e:
            raise click.BadParameter(f"{spec!r}: {e}", param_hint="--hp") from None
        out.setdefault(name, {})[field] = value
    return out


def _task_names(spec: str) -> list[str]:
    """A suite ('all' or 'klue': the KLUE tasks; 'jglue'), one task or a comma-separated list -> registered
    names, in registry order for a suite."""
    suite = {"all": "klue"}.get(spec.strip().lower(), spec.strip().lower())
    if suite in SUITES:
        return list(SUITES[suite])
    names = []
    for part in spec.split(","):
        try:
            name = resolve_name(part.strip())
        except RegistryError as e:
            raise click.BadParameter(str(e), param_hint="TASK") from None
        if name in names:
            raise click.BadParameter(f"task {name!r} is named twice", param_hint="TASK")
        names.append(name)
    return names


@click.command(help="Score a predictions file (JSON lines keyed by guid) against an official gold file.\n\n"
                    "\b\nYNAT/NLI/RE: {\"guid\": ..., \"label\": NAME}; RE may add \"probs\": 30 numbers in "
                    "relation_list.json order (needed for AUPRC)\nSTS: {\"guid\": ..., \"score\": FLOAT}\n"
                    "NER: {\"guid\": ..., \"tags\": [one of the 13 tags per character of the sentence, spaces "
                    "included; tags on spaces are not scored]}\n"
                    "DP: {\"guid\": ..., \"heads\": [0..n per eojeol, 0 = ROOT], \"deprels\": [one of the 38 "
                    "labels per eojeol]}\n"
                    "MRC: {\"guid\": ..., \"answer\": TEXT} (\"\" = unanswerable)\n"
                    "DST: {\"guid\": DIALOGUE, \"turn\": K (user turns from 0), \"state\": "
                    "[\"domain-slot-value\", ...]}, one record per user turn; ontology.json beside the gold file")
@click.argument("task")
@click.option("--gold", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Official gold file (e.g. klue-sts-v1.1_dev.json, klue-ner-v1.1_dev.tsv, klue-mrc-v1.1_dev.json).")
@click.option("--pred", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Predictions, JSON lines.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--allow-subset", is_flag=True,
              help="Score only the predicted guids (e.g. a dev-split run) instead of failing on missing ones.")
def score(task: str, gold: Path, pred: Path, fmt: str, allow_subset: bool) -> None:
    import json

    from finetune.tasks.base import DataError

    try:
        name = resolve_name(task)
    except RegistryError as e:
        raise click.BadParameter(str(e), param_hint="TASK") from None
    try:
        result = score_file(name, gold, pred, allow_subset=allow_subset)
    except DataError as e:
        raise click.ClickException(str(e)) from None
    if fmt == "json":
        click.echo(json.dumps(json_safe(result), ensure_ascii=False, indent=2))
        return
    parts = []
    for k, v in json_safe(result["metrics"]).items():
        if isinstance(v, float):
            parts.append(f"{k} {v:.2f}")
        elif v is None:
            parts.append(f"{k} n/a")
        else:
            parts.append(f"{k} {v}")
    subset = f" (subset: {result['n_scored']} of {result['n_gold']} gold examples)" if result["subset"] else ""
    click.echo(f"{result['task']}  " + "  ".join(parts) + f"  n={result['n_scored']}{subset}")
