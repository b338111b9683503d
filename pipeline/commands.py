"""`klue run` and `klue report`. Imports only click at module level: `klue --help` loads this file."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from pipeline.parallel import Executor
from pipeline.registry import RegistryError
from pipeline.sample import SAMPLE_DIR


@click.command()
@click.argument("recipe", type=click.Path(dir_okay=False, path_type=Path), required=False)
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where stage folders go (default: ./runs/<recipe name>). Reuse it to resume or extend a run.")
@click.option("--until", metavar="STAGE", default=None,
              help="Stop after this stage (e.g. decontaminate); later stages are not run.")
@click.option("--force", "force", metavar="STAGE", multiple=True,
              help="Rebuild STAGE and everything downstream of it, even if done. Repeatable.")
@click.option("--workers", type=click.IntRange(min=1), default=min(os.cpu_count() or 1, 8), show_default=True,
              help="Processes for stages that split work by shard (default: CPU cores, at most 8, since each "
                   "process loads its own analyzers). Outputs do not depend on it.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default=None,
              help="Where shard tasks run (default: the recipe's `executor:`, else local). ray: Ray core tasks on "
                   "the cluster at --ray-address; outputs and keys are the same either way.")
@click.option("--ray-address", metavar="ADDRESS", default=None, envvar="RAY_ADDRESS",
              help="The Ray cluster to run on (auto, host:port, ray://host:10001); default $RAY_ADDRESS, else a "
                   "Ray instance started on this machine.")
@click.option("--launcher", type=click.Choice(["local", "slurm", "ray"]), default=None,
              help="Where the pretrain stage trains (default: the recipe's `stages.pretrain.launcher`, else local). "
                   "slurm: an sbatch job of `stages.pretrain.slurm`'s allocation, waited for; a rerun re-attaches "
                   "to it. ray: Ray Train workers (`stages.pretrain.ray`) on the --executor ray cluster. Not in "
                   "the stage key.")
@click.option("--set", "overrides", metavar="KEY=VALUE", multiple=True,
              help="Override a recipe value; VALUE is YAML. E.g. --set stages.filter.min_chars=20 "
                   "--set sources.0.max_docs=100. Repeatable.")
@click.option("--verify", is_flag=True,
              help="Recheck the sha256 of every output file of stages that are skipped as done.")
@click.option("--dry-run", is_flag=True,
              help="Validate the recipe and print the plan (stages and arms, what is cached, what would run, "
                   "parameter counts, tokens per step, the DeepSpeed config) without running anything.")
@click.option("--registry", metavar="MODULE:ATTR", default=None, hidden=True,
              help="Use another stage graph (a dict stage name -> class), e.g. for tests of custom stages.")
def run(recipe: Path | None, workdir: Path | None, until: str | None, force: tuple[str, ...], workers: int,
        executor: str | None, ray_address: str | None, launcher: str | None, overrides: tuple[str, ...],
        verify: bool, dry_run: bool, registry: str | None) -> None:
    """Run the stages of a RECIPE (YAML), skipping every stage that is already done; without RECIPE, the
    embedded default (pipeline/sample/recipe.yaml: the whole pipeline, fine-tuning and report included, on the
    sample corpus and task files shipped in the package; no data folder, no network). A run that reaches the
    last stage writes the report (report.md, report.html) and prints its path.

    Each stage writes to WORKDIR/<stage>/<key>/, where the key hashes the stage's code version, params and
    inputs: rerunning the same recipe is nearly instant, changing one stage's params reruns that stage and
    what follows it, and a killed run continues where it stopped. Variants in the recipe (`pii: [on, off]`)
    run as arms that share every stage whose inputs and params agree; WORKDIR/arms/<arm>/<stage> links to
    each arm's folders.

    \b
    Examples:
      klue run                                                  # the embedded default, into runs/klue-sample
      klue run recipes/klue-tiny-cpu.yaml                       # everything, into runs/klue-tiny-cpu
      klue run recipes/klue-tiny-cpu.yaml --until dedup         # curation only
      klue run recipes/klue-tiny-cpu.yaml --set sources.0.max_docs=1000 --workdir runs/smoke
      klue run recipes/klue-tiny-cpu.yaml --force vocab         # rebuild the vocabulary and what follows
      klue run recipes/klue-tiny-cpu.yaml --executor ray --ray-address auto   # on a Ray cluster
      klue run recipes/klue-roberta-base.yaml --dry-run         # the plan, sizes and configs; runs nothing
      klue report runs/klue-tiny-cpu                            # then look at the funnel and results
    """
    from rich.console import Console
    from rich.markup import escape

    from pipeline.recipe import RecipeError, load_recipe
    from pipeline.runner import Runner, StageFailed
    from pipeline.stage import EXIT_PREEMPTED, Preempted
    from pipeline.stages import registry_from_spec

    console = Console(highlight=False, soft_wrap=True)
    t0 = time.monotonic()
    if recipe is None:
        recipe = SAMPLE_DIR / "recipe.yaml"
    try:
        try:
            reg = registry_from_spec(registry) if registry else None
        except RegistryError as e:
            raise RecipeError(f"--registry {registry}: {e}") from None
        if launcher:  # pretrain/slurm.py, pretrain/ray_train.py
            overrides = (*overrides, f"stages.pretrain.launcher={launcher}")
        rec = load_recipe(recipe, overrides, registry=reg, until=until)
        workdir = workdir or Path("runs") / rec.name
        exe = Executor(executor or rec.executor, ray_address)  # type: ignore[arg-type]
        runner = Runner(rec, workdir, reg, until=until, force=force, workers=workers, verify=verify,
                        console=console, executor=exe)
    except RecipeError as e:
        raise click.ClickException(str(e)) from None
    arms = rec.arms
    for warning in runner.recipe_warnings():  # before any work: what the outputs will carry
        console.print(f"[bold yellow]warning:[/] {escape(warning)}")
    if dry_run:
        try:
            print_plan(console, runner, workdir)
        except RecipeError as e:
            raise click.ClickException(str(e)) from None
        return
    console.print(f"[bold]klue run[/] {rec.name}: {len(runner.stages)} stages ({runner.stages[0]} .. "
                  f"{runner.stages[-1]}), {len(arms)} arm{'s' if len(arms) > 1 else ''} "
                  f"({', '.join(a.name for a in arms)}), workers={workers}, executor {exe.kind}, workdir {workdir}")
    try:
        runner.run()
    except RecipeError as e:
        raise click.ClickException(str(e)) from None
    except KeyboardInterrupt:
        console.print("[bold red]interrupted[/]: finished stages are kept; rerun the same command to continue.")
        sys.exit(130)
    except Preempted as e:  # SIGTERM/SIGUSR1: the stage saved its progress (pretrain: a checkpoint) and stopped
        console.print(f"[bold yellow]preempted:[/] stage {e.stage}: {escape(e.message)}. The stages before it are "
                      "done; the same command continues from here.")
        sys.exit(EXIT_PREEMPTED)
    except StageFailed as e:
        console.print(f"[bold red]stopped:[/] stage {e.stage} failed; the stages before it are done and "
                      f"will be skipped when you rerun.")
        sys.exit(1)
    partial_graph = until is not None and until != runner.stages[-1]
    if partial_graph or registry:  # the report needs the production stages, to the last one
        console.print(f"done in {time.monotonic() - t0:.1f} s. Next: klue report {workdir}")
        return
    from pipeline.report import build_report, build_verdict, write_report

    _, html, _ = write_report(workdir)
    console.print(f"done in {time.monotonic() - t0:.1f} s. Report: {html}")
    print_verdict(console, build_verdict(workdir, build_report(workdir)))


def print_verdict(console: Any, lines: list[str]) -> None:
    """The report's Verdict lines, last on the terminal: what the run concluded, without opening the report.
    Printed as plain text: no rich markup or emoji codes (an arm's label may hold brackets or colons)."""
    if not lines:
        return
    console.print("Verdict:", markup=False)
    for line in lines:
        console.print(f"- {line}", markup=False, emoji=False)


@click.command()
@click.argument("workdir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True,
              help="md: print markdown and write WORKDIR/report.md; json: print JSON to stdout.")
@click.option("--arm", default=None, help="Only this arm (e.g. 'pii=off'); default: every arm, side by side.")
def report(workdir: Path, fmt: str, arm: str | None) -> None:
    """Report a run: per arm and stage, the document funnel (in, kept, dropped per reason, quarantined; per
    source) with its reconciliation check, and what each stage reports about itself (PII spans, vocab size,
    losses, plots). Mismatched counts are flagged at the top.

    \b
    Examples:
      klue report runs/klue-tiny-cpu                     # markdown to stdout; report.md, report.html there
      klue report runs/ablation --arm pii=off
      klue report runs/klue-tiny-cpu --format json | jq '.arms[0].stages[0].funnel'
    """
    import json

    from pipeline.report import ReportError, build_report, write_report

    try:
        if fmt == "json":
            click.echo(json.dumps(build_report(workdir, arm), indent=2, ensure_ascii=False))
            return
        md_path, html_path, text = write_report(workdir, arm)
    except ReportError as e:
        raise click.ClickException(str(e)) from None
    click.echo(text, nl=False)
    click.echo(f"report: {html_path} (and {md_path.name}, figures in {md_path.parent / 'report_files'})", err=True)


def print_plan(console: Any, runner: Any, workdir: Path) -> None:
    """`klue run --dry-run`: the stages in run order, each folder once with the arms it serves, cached or to
    run, and what each stage says it would do (`Stage.describe`)."""
    import json

    from pipeline.runner import StageFailed

    rec = runner.recipe
    try:
        plan = runner.plan()
    except StageFailed as e:
        raise click.ClickException(f"dry run: {e}") from None
    n_arms = len(rec.arms)
    console.print(f"[bold]klue run --dry-run[/] {rec.name}: {len(runner.stages)} stages, {n_arms} "
                  f"arm{'s' if n_arms > 1 else ''} ({', '.join(a.name for a in rec.arms)}), workdir {workdir}, "
                  f"language {rec.language}, seed {rec.seed}")
    todo = [p for p in plan if not p.cached]
    console.print(f"{len(plan)} stage folders: {len(plan) - len(todo)} cached, {len(todo)} would run")
    warnings: list[str] = []
    for p in plan:
        which = "all arms" if len(p.arms) == n_arms else ", ".join(p.arms)
        state = "[dim]cached[/]" if p.cached else "[bold]would run[/]"
        console.print(f"  {p.stage:<14} {state:<18} key {p.key[:8]}  {which}")
        for k, v in p.details.items():
            text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            console.print(f"      {k}: {text}")
            if "MISSING" in text or k == "describe failed":
                warnings.append(f"{p.stage} ({which}): {k}: {text}")
    for w in warnings:
        console.print(f"[bold yellow]warning:[/] {w}")
    console.print("nothing was run.")


@click.command()
@click.argument("workdir", type=click.Path(file_okay=False, path_type=Path))
def status(workdir: Path) -> None:
    """Where a run stands: the run's state, every arm's finished stages, and, while it runs, the stage it is in
    (for which arms) and that stage's progress (shard tasks recorded, pretraining step and loss, fine-tuning
    runs done and the one now running). Reads files only; safe beside a running `klue run`."""
    import json

    from pipeline.runner import RUN_JSON, STATUS_JSON
    from pipeline.stages import STAGES

    try:
        run_rec = json.loads((workdir / RUN_JSON).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise click.ClickException(f"{workdir}: no {RUN_JSON}; nothing has run here") from None
    except ValueError as e:
        raise click.ClickException(f"{workdir / RUN_JSON}: not valid JSON ({e})") from None
    click.echo(f"{workdir}: recipe {run_rec.get('recipe', {}).get('name')}, run {run_rec.get('status')} "
               f"(started {run_rec.get('started')}, last update {run_rec.get('finished')})")
    stages = run_rec.get("stages", [])
    for arm in run_rec.get("arms", []):
        done = [s["stage"] for s in arm["stages"] if s["status"] in ("ran", "skipped")]
        failed = [s["stage"] for s in arm["stages"] if s["status"] == "failed"]
        left = [s for s in stages if s not in done and s not in failed]
        click.echo(f"  arm {arm['name']}: {len(done)} of {len(stages)} stages done"
                   + (f"; failed: {', '.join(failed)}" if failed else "")
                   + (f"; to do: {', '.join(left)}" if left else ""))
    path = workdir / STATUS_JSON
    if not path.is_file():
        click.echo("  no stage is running")
        return
    cur = json.loads(path.read_text(encoding="utf-8"))
    alive = _pid_alive(int(cur.get("pid", 0)))
    line = f"  now: {cur['stage']} (arm {cur['arm']}, key {cur['key'][:8]}, since {cur['started']})"
    if not alive:
        line += f" -- but process {cur.get('pid')} is gone: the run was killed; rerun it to continue"
    click.echo(line)
    partial = workdir / cur["partial"]
    params = run_rec.get("recipe", {}).get("stages", {}).get(cur["stage"], {})  # the recipe's, as validated
    if cur["stage"] in STAGES.names and partial.is_dir():
        progress = STAGES.get(cur["stage"]).progress(partial, params)
        if progress:
            click.echo(f"  progress: {progress}")


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@click.command()
@click.argument("workdir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--yes", is_flag=True, help="Remove them (default: only list).")
@click.option("--weights", is_flag=True,
              help="Also the model weights and checkpoints in the folders the last run uses (each stage's "
                   "`weights`: pretraining's checkpoints and final weights), keeping their metrics, predictions and "
                   "cards: the run stays cached and reportable, and a stage that needs the weights says so.")
@click.option("--registry", metavar="MODULE:ATTR", default=None, hidden=True,
              help="The stage graph that says which files are weights (as `klue run --registry`).")
def gc(workdir: Path, yes: bool, weights: bool, registry: str | None) -> None:
    """List the stage folders that no arm of the last run uses (older keys, leftovers of killed runs:
    `.partial` and `.old` folders), with their sizes; with --yes, remove them. The last run is run.json's:
    the folders it links under arms/ are kept, and so is everything while a run is going. With --weights,
    also the weight files of the folders it uses (each stage's `weights`), removed with --yes and recorded in
    the folders' manifests (`pipeline.workdir.prune_weights`)."""
    import json
    import shutil

    from pipeline.runner import RUN_JSON, STATUS_JSON
    from pipeline.workdir import prune_weights, weights_in

    try:
        run_rec = json.loads((workdir / RUN_JSON).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise click.ClickException(f"{workdir}: no {RUN_JSON}; not a workdir of `klue run`") from None
    if (workdir / STATUS_JSON).is_file() and _pid_alive(
            int(json.loads((workdir / STATUS_JSON).read_text(encoding="utf-8")).get("pid", 0))):
        raise click.ClickException(f"{workdir}: a run is going (status.json); gc would race it")
    used = {s["path"] for a in run_rec.get("arms", []) for s in a["stages"] if s.get("path")}
    stages = run_rec.get("stages", [])
    unused: list[tuple[Path, int]] = []
    for stage in stages:
        for folder in sorted((workdir / stage).glob("*")) if (workdir / stage).is_dir() else []:
            if folder.is_dir() and folder.relative_to(workdir).as_posix() not in used:
                size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
                unused.append((folder, size))
    total = sum(size for _, size in unused)
    for folder, size in unused:
        click.echo(f"{_human(size):>9}  {folder.relative_to(workdir)}")
    click.echo(f"{len(unused)} folder{'s' if len(unused) != 1 else ''} not used by the last run "
               f"({_human(total)})" + ("" if yes or not unused else "; rerun with --yes to remove them"))
    heavy = []
    if weights:
        try:
            heavy = weights_in(workdir, sorted(used), registry)
        except RegistryError as e:
            raise click.ClickException(f"--registry {registry}: {e}") from None
        for folder, _, _, found in heavy:
            size = sum(b for _, b in found)
            click.echo(f"{_human(size):>9}  {folder.relative_to(workdir)}: {len(found)} weight "
                       f"file{'s' if len(found) != 1 else ''}")
        freed = sum(b for *_, found in heavy for _, b in found)
        click.echo(f"weights in {len(heavy)} folder{'s' if len(heavy) != 1 else ''} the last run uses "
                   f"({_human(freed)})" + ("" if yes or not heavy else "; rerun with --yes to remove them, "
                                           "keeping the results"))
    if yes:
        for folder, _ in unused:
            shutil.rmtree(folder)
        if unused:
            click.echo(f"removed {len(unused)} folders, {_human(total)} freed")
        pruned = [prune_weights(folder, manifest, patterns) for folder, manifest, patterns, _ in heavy]
        if pruned:
            click.echo(f"removed {sum(n for n, _ in pruned)} weight files from {len(pruned)} folders, "
                       f"{_human(sum(b for _, b in pruned))} freed")


def _human(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


@click.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--into", "into", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The workdir to link them into (made if missing).")
@click.option("--verify", is_flag=True, help="Check every file against its manifest's sha256 first.")
def merge(sources: tuple[Path, ...], into: Path, verify: bool) -> None:
    """Hard-link the finished stage folders of SOURCES (workdirs where arms or pretraining replicates ran side by
    side) into one workdir, where `klue run` of the whole recipe then finds them cached and writes the report
    with every arm and replicate (docs/usage.md, "Arms side by side"). Unfinished folders are left out; a key
    already there with other files is refused. Safe beside runs in SOURCES; refused while one runs in --into."""
    import json

    from pipeline.runner import STATUS_JSON
    from pipeline.workdir import WorkdirError, merge_stage_folders

    status_file = into / STATUS_JSON
    if status_file.is_file() and _pid_alive(int(json.loads(status_file.read_text(encoding="utf-8")).get("pid", 0))):
        raise click.ClickException(f"{into}: a run is going (status.json); merge would race it")
    try:
        done = merge_stage_folders(list(sources), into, verify=verify)
    except WorkdirError as e:
        raise click.ClickException(str(e)) from None
    for stage, folder, how in done:
        click.echo(f"{how:>13}  {stage}/{folder.name}  from {folder.parent.parent}")
    new = sum(how != "already there" for _, _, how in done)
    click.echo(f"{new} stage folder{'s' if new != 1 else ''} merged into {into}, "
               f"{len(done) - new} already there")
