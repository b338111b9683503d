"""The `klue` command. Subcommands live beside the code they drive and are imported only when used, so
`klue --help` is instant and needs neither torch nor MeCab."""

from __future__ import annotations

import click

from pipeline.plugins import plugin_command, plugin_commands
from pipeline.registry import Registry

# name -> "module:attribute" of a click command or group. One place that lists every subcommand of the product;
# the commands of installed add-ons (the workshop's `klue pii gen`) come from entry points (pipeline/plugins.py).
COMMANDS: Registry[click.Command] = Registry("command", {
    "run": "pipeline.commands:run",
    "report": "pipeline.commands:report",
    "status": "pipeline.commands:status",
    "gc": "pipeline.commands:gc",
    "merge": "pipeline.commands:merge",
    "pii": "corpora.pii.cli:pii",
    "toxicity": "corpora.toxicity.cli:toxicity",
    "tokenizer-report": "tokenizer.cli:tokenizer_report",
    "finetune": "finetune.cli:finetune",
    "score": "finetune.cli:score",
    "export-checkpoint": "pretrain.export:export_checkpoint_cmd",
    "export": "pretrain.publish:export_cmd",
})


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS.names) | set(plugin_commands()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS.names:  # exact names only; click says "No such command"
            return plugin_command("", cmd_name)
        return COMMANDS.get(cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="klue-pipeline")
def main() -> None:
    """klue-pipeline: raw Korean text to a pretrained RoBERTa, proven on the KLUE tasks.

    \b
    Typical use:
      klue run recipes/klue-tiny-cpu.yaml --workdir runs/tiny      # run every stage of a recipe
      klue run recipes/klue-tiny-cpu.yaml --until decontaminate     # stop after a stage
      klue run                                                      # the embedded default, offline
      klue report runs/tiny                                         # funnel and results
      klue status runs/tiny                                         # while it runs: stage and progress
      klue gc runs/tiny [--yes]                                     # folders no arm uses any more
      klue gc runs/tiny --weights [--yes]                           # and the weights; results stay
      klue merge runs/arm-b --into runs/tiny                        # arms run side by side, into one workdir
      klue pii eval $KLUE_DATA_DIR/pii/ko_pii_eval_corpus.jsonl     # PII precision/recall
      klue toxicity eval --data $KLUE_DATA_DIR/toxicity              # toxicity tagger F1 vs baselines
      klue finetune ynat --model runs/tiny/.../final --data-dir $KLUE_DATA_DIR/klue --output out/ynat
      klue finetune all --model DIR --data-dir $KLUE_DATA_DIR/klue --output out/suite --vs-random-init
      klue export-checkpoint runs/tiny/arms/default/pretrain --step 5000 --output out/step-5000
      klue export runs/tiny --to out/tiny                           # model + card (README.md) for the Hub
      klue score ynat --gold GOLD.json --pred PRED.jsonl            # score any model's predictions
    """


if __name__ == "__main__":  # pragma: no cover
    main()
