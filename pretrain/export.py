"""`klue export-checkpoint`: a training checkpoint -> a model folder that fine-tuning and fill-mask load.

Why: the pretrain stage exports only the final model, but users fine-tune intermediate checkpoints too (KLUE
score against pretraining steps, or a run that was stopped before its last step). A checkpoint holds the
training wrapper's weights (`mlm.` prefix) beside optimizer and RNG state; this rebuilds the stock
`RobertaForMaskedLM` from the run's own `train_config.json`, loads the weights strictly (a missing or extra
tensor is an error, not a silently re-initialised layer) and writes the same folder layout as `final/`.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

PREFIX = "mlm."


class ExportError(ValueError):
    """A run folder or checkpoint that cannot be exported; the message names the path."""


def find_step(run_dir: Path, step: int | None) -> Path:
    """The checkpoint folder of `step`, or the newest complete one when `step` is None."""
    from pretrain.train import CHECKPOINTS, STATE_FILE

    ckpts = sorted(c for c in (run_dir / CHECKPOINTS).glob("step-*") if (c / STATE_FILE).is_file())
    if not ckpts:
        raise ExportError(f"{run_dir / CHECKPOINTS}: no complete checkpoint (step-N/{STATE_FILE})")
    if step is None:
        return ckpts[-1]
    for c in ckpts:
        if json.loads((c / STATE_FILE).read_text())["step"] == step:
            return c
    have = ", ".join(c.name.removeprefix("step-").lstrip("0") or "0" for c in ckpts)
    raise ExportError(f"{run_dir / CHECKPOINTS}: no checkpoint of step {step} (kept: {have})")


def export_checkpoint(run_dir: Path, output: Path, step: int | None = None, config: Path | None = None) -> Path:
    """Write checkpoint `step` (default: the newest) of the pretraining run in `run_dir` to `output`.

    `config` is the run's TrainConfig JSON; the pretrain stage writes it as `run_dir/train_config.json`."""
    from safetensors.torch import load_file
    from transformers import AutoTokenizer

    from pretrain.model import build_config, build_model
    from pretrain.train import TrainConfig, export_final

    cfg_path = config or run_dir / "train_config.json"
    if not cfg_path.is_file():
        raise ExportError(f"{cfg_path}: not found; give the run's training config with --config")
    cfg = TrainConfig.model_validate_json(cfg_path.read_text(encoding="utf-8"))
    ckpt = find_step(run_dir, step)
    weights = ckpt / "model.safetensors"
    if not weights.is_file():
        hint = " (a DeepSpeed checkpoint: consolidate it with DeepSpeed's zero_to_fp32.py first)" if cfg.deepspeed else ""
        raise ExportError(f"{ckpt}: model.safetensors missing{hint}")
    tok = AutoTokenizer.from_pretrained(cfg.tokenizer_dir)
    model_cfg = build_config(cfg.model, vocab_size=len(tok), seq_len=cfg.seq_len,
                             pad_token_id=tok.pad_token_id, bos_token_id=tok.cls_token_id,
                             eos_token_id=tok.sep_token_id, overrides=cfg.model_overrides)
    model = build_model(model_cfg, cfg.seed)
    state = {k.removeprefix(PREFIX): v for k, v in load_file(weights).items()}
    # Tied tensors (decoder weight = word embeddings, decoder bias = lm_head.bias) are stored once, under the
    # name they are tied to; only those may be absent, and the tie fills them.
    tied = {k for k, src in (getattr(model, "_tied_weights_keys", None) or {}).items() if src in state}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if set(missing) - tied or unexpected:
        raise ExportError(f"{weights}: does not match the run's model config "
                          f"(missing {sorted(set(missing) - tied)}, unexpected {sorted(unexpected)})")
    model.tie_weights()
    export_final(model, tok, output)
    return ckpt


@click.command("export-checkpoint")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--step", type=int, help="Checkpoint step (default: the newest complete checkpoint).")
@click.option("--output", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Model folder to write (safetensors + tokenizer), like the run's final/.")
@click.option("--config", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The run's training config (default: RUN_DIR/train_config.json, as the pretrain stage writes).")
def export_checkpoint_cmd(run_dir: Path, step: int | None, output: Path, config: Path | None) -> None:
    """Export a pretraining checkpoint (RUN_DIR/checkpoints/step-N) as a model folder for `klue finetune`."""
    try:
        ckpt = export_checkpoint(run_dir, output, step, config)
    except ExportError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"{ckpt} -> {output}")
