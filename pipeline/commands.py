"""`klue run` and `klue report`. Imports only click at module level: `klue --help` loads this file."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import click


@click.command()
@click.argument("recipe", type=click.Path(dir_okay=False, path_type=Path))
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
@click.option("--set", "overrides", metavar="KEY=VALUE", multiple=True,
              help="Override a recipe value; VALUE is YAML. E.g. --set stages.filter.min_chars=20 "
                   "--set sources.0.max_docs=100. Repeatable.")
@click.option("--verify", is_flag=True,
              help="Recheck the sha256 of every output file of stages that are skipped as done.")
@click.option("--registry", metavar="MODULE:ATTR", default=None, hidden=True,
              help="Use another stage graph (a dict stage name -> class), e.g. for tests of custom stages.")
def run(recipe: Path, workdir: Path | None, until: str | None, force: tuple[str, ...], workers: int,
        executor: str | None, ray_address: str | None, overrides: tuple[str, ...], verify: bool,
        registry: str | None) -> None:
    """Run the stages of a RECIPE (YAML), skipping every stage that is already done.

    Each stage writes to WORKDIR/<stage>/<key>/, where the key hashes the stage's code version, params and
    inputs: rerunning the same recipe is nearly instant, changing one stage's params reruns that stage and
    what follows it, and a killed run continues where it stopped. Variants in the recipe (`pii: [on, off]`)
    run as arms that share every stage whose inputs and params agree; WORKDIR/arms/<arm>/<stage> links to
    each arm's folders.

    \b
    Examples:
      klue run recipes/klue-tiny-cpu.yaml                       # everything, into runs/klue-tiny-cpu
      klue run recipes/klue-tiny-cpu.yaml --until dedup         # curation only
      klue run recipes/klue-tiny-cpu.yaml --set sources.0.max_docs=1000 --workdir runs/smoke
      klue run recipes/klue-tiny-cpu.yaml --force vocab         # rebuild the vocabulary and what follows
      klue run recipes/klue-tiny-cpu.yaml --executor ray --ray-address auto   # on a Ray cluster
      klue report runs/klue-tiny-cpu                            # then look at the funnel and results
    """
    from rich.console import Console

    from pipeline.parallel import Executor
    from pipeline.recipe import RecipeError, load_recipe
    from pipeline.registry import RegistryError
    from pipeline.runner import Runner, StageFailed
    from pipeline.stages import registry_from_spec

    console = Console(highlight=False, soft_wrap=True)
    t0 = time.monotonic()
    try:
        try:
            reg = registry_from_spec(registry) if registry else None
        except RegistryError as e:
            raise RecipeError(f"--registry {registry}: {e}") from None
        rec = load_recipe(recipe, overrides, registry=reg, until=until)
        workdir = workdir or Path("runs") / rec.name
        exe = Executor(executor or rec.executor, ray_address)  # type: ignore[arg-type]
        runner = Runner(rec, workdir, reg, until=until, force=force, workers=workers, verify=verify,
                        console=console, executor=exe)
    except RecipeError as e:
        raise click.ClickException(str(e)) from None
    arms = rec.arms
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
    except StageFailed as e:
        console.print(f"[bold red]stopped:[/] stage {e.stage} failed; the stages before it are done and "
                      f"will be skipped when you rerun.")
        sys.exit(1)
    console.print(f"done in {time.monotonic() - t0:.1f} s. Next: klue report {workdir}")


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
      klue report runs/klue-tiny-cpu                     # markdown to stdout and runs/klue-tiny-cpu/report.md
      klue report runs/ablation --arm pii=off
      klue report runs/klue-tiny-cpu --format json | jq '.arms[0].stages[0].funnel'
    """
    import json

    from pipeline import io
    from pipeline.report import ReportError, build_report, render_markdown

    try:
        data = build_report(workdir, arm)
    except ReportError as e:
        raise click.ClickException(str(e)) from None
    if fmt == "json":
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    text = render_markdown(data)
    name = "report.md" if arm is None else f"report.{arm}.md"
    io.write_text(workdir / name, text)
    click.echo(text, nl=False)
