"""Model folders from pretraining: `final/` at the end of a run, and `klue export-checkpoint` for any checkpoint.

One way for both: a fresh fp32 model of the run's stock class (`RobertaForMaskedLM`, `ModernBertForMaskedLM`,
...: `pretrain.model.ARCHITECTURES`) is built from the run's model config, the weights are
loaded into it strictly (a missing or extra tensor is an error, not a silently re-initialised layer; only the
tied decoder tensors may be absent) and it is saved with `save_pretrained` (safetensors) next to the
tokenizer. Always fp32, `dtype: float32` in the config: under DeepSpeed bf16 the module itself is bf16 (the
fp32 masters live in the optimizer), and transformers loads a model in its config's dtype, so a bf16 export
would make every fine-tuning run train in pure bf16, where most 5e-5 updates round to nothing.

Where the weights come from:
  - a run without DeepSpeed: the model's own (fp32) state dict;
  - a DeepSpeed run, at its end: the fp32 masters gathered from the optimizer (`fp32_master_state`);
  - a checkpoint: `model.safetensors`, or for a DeepSpeed checkpoint its ZeRO shards consolidated to fp32 by
    DeepSpeed's own `get_fp32_state_dict_from_zero_checkpoint` (which reads DeepSpeed's pickled `.pt` files:
    this run's own checkpoints, never downloaded ones).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from pipeline import io
from pipeline.release.card import write_model_card
from pretrain.architectures import architecture_of, build_config, usable_positions
from pretrain.card_run import checkpoint_facts
from pretrain.config import CHECKPOINTS, STATE_FILE, TrainConfig

PREFIX = "mlm."


class ExportError(ValueError):
    """A run folder or checkpoint that cannot be exported; the message names the path."""


def export_final(model_config: Any, tokenizer: Any, final: Path, state_dict: dict[str, Any],
                 extra: Callable[[Path], Any] | None = None) -> None:
    """Save `state_dict` (names without the training wrapper's `mlm.` prefix) as an fp32 model of the config's
    stock masked-LM class plus `tokenizer` into `final`, renamed into place when complete; `extra(folder)` adds
    files before the rename (`klue export-checkpoint`'s model card).

    The folder loads offline with stock `AutoModelForMaskedLM` / `AutoTokenizer` / `pipeline("fill-mask")`.
    """
    import torch

    arch = architecture_of(model_config)
    config = type(model_config).from_dict(model_config.to_dict())
    config.architectures = [arch.mlm_class]
    config.dtype = torch.float32
    model = arch.mlm_type()(config).to(torch.float32)
    state = {k.removeprefix(PREFIX): v.detach().to("cpu", torch.float32) for k, v in state_dict.items()}
    # Tied tensors (decoder weight = word embeddings, decoder bias = lm_head.bias) may be stored once, under
    # the name they are tied to; only those may be absent, and the tie fills them.
    tied = {k for k, src in (getattr(model, "_tied_weights_keys", None) or {}).items() if src in state}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if set(missing) - tied or unexpected:
        raise ExportError(f"{final}: the weights do not match the model config "
                          f"(missing {sorted(set(missing) - tied)}, unexpected {sorted(unexpected)})")
    model.tie_weights()
    with io.atomic_path(final, replace_dir=True) as tmp:
        model.save_pretrained(tmp)
        # The positions the model was built (and trained) for bound the usable length: say so in the tokenizer, so
        # `truncation=True` in any downstream code never produces an index past a learned table.
        tokenizer.model_max_length = usable_positions(config)
        tokenizer.save_pretrained(tmp)
        if extra is not None:
            extra(tmp)


def fp32_master_state(module: Any) -> dict[str, Any]:
    """The fp32 weights of a DeepSpeed-wrapped module, full size on every rank: from the optimizer's fp32
    masters (`deepspeed.utils.safe_get_full_fp32_param`, ZeRO 1, 2 and 3), or the parameter itself where
    DeepSpeed keeps no separate master (fp32 training). A collective under ZeRO-3: every rank must call it."""
    from deepspeed.utils import safe_get_full_fp32_param

    out = {}
    for name, p in module.named_parameters():
        full = safe_get_full_fp32_param(p)
        out[name] = (full if full is not None else p.detach()).float().cpu()
    return out


def find_step(run_dir: Path, step: int | None) -> Path:
    """The checkpoint folder of `step`, or the newest complete one when `step` is None."""
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


def checkpoint_state(ckpt: Path) -> dict[str, Any]:
    """The weights of a checkpoint folder, fp32: `model.safetensors` (plain runs), or the ZeRO checkpoint that
    accelerate's `save_state` writes under DeepSpeed (`latest` + `pytorch_model/` shards), consolidated."""
    weights = ckpt / "model.safetensors"
    if weights.is_file():
        from safetensors.torch import load_file

        return load_file(weights)
    if (ckpt / "latest").is_file():
        from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint

        return dict(get_fp32_state_dict_from_zero_checkpoint(str(ckpt)))
    raise ExportError(f"{ckpt}: neither model.safetensors nor a DeepSpeed checkpoint (latest, pytorch_model/)")


def export_checkpoint(run_dir: Path, output: Path, step: int | None = None, config: Path | None = None,
                      language: str | None = None) -> Path:
    """Write checkpoint `step` (default: the newest) of the pretraining run in `run_dir` to `output`.

    `config` is the run's TrainConfig JSON; the pretrain stage writes it as `run_dir/train_config.json`.
    `language`: the card's, for a run made outside a workdir (else its vocab stage's; a missing one is an error)."""
    from transformers import AutoTokenizer

    cfg_path = config or run_dir / "train_config.json"
    if not cfg_path.is_file():
        raise ExportError(f"{cfg_path}: not found; give the run's training config with --config")
    cfg = TrainConfig.model_validate_json(cfg_path.read_text(encoding="utf-8"))
    ckpt = find_step(run_dir, step)
    tok = AutoTokenizer.from_pretrained(cfg.tokenizer_dir)
    model_cfg = build_config(cfg.model, vocab_size=len(tok), seq_len=cfg.seq_len,
                             pad_token_id=tok.pad_token_id, bos_token_id=tok.cls_token_id,
                             eos_token_id=tok.sep_token_id, overrides=cfg.model_overrides,
                             architecture=cfg.architecture)
    state = checkpoint_state(ckpt)
    train_state = json.loads((ckpt / STATE_FILE).read_text(encoding="utf-8"))

    def card(folder: Path) -> None:  # the checkpoint's model card, written inside the folder before its rename
        stages, facts = checkpoint_facts(run_dir, train_state, cfg.model_dump(mode="json"), folder)
        if language:  # a run outside a workdir: the caller's (else its vocab stage's, through the hook)
            facts["language"] = language
        write_model_card(folder, stages, **facts)

    try:
        export_final(model_cfg, tok, output, state, extra=card)
    except ExportError as e:
        raise ExportError(f"{ckpt}: {e}") from None
    return ckpt


@click.command("export-checkpoint")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--step", type=int, help="Checkpoint step (default: the newest complete checkpoint).")
@click.option("--output", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Model folder to write (safetensors + tokenizer), like the run's final/.")
@click.option("--config", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The run's training config (default: RUN_DIR/train_config.json, as the pretrain stage writes).")
@click.option("--language", default=None, metavar="CODE",
              help="The model card's language (ISO 639-1), for a run made outside a workdir; a run of `klue run` "
                   "states its own (its vocab stage's).")
def export_checkpoint_cmd(run_dir: Path, step: int | None, output: Path, config: Path | None,
                          language: str | None) -> None:
    """Export a pretraining checkpoint (RUN_DIR/checkpoints/step-N; plain or DeepSpeed ZeRO 1-3) as an fp32 model
    folder for `klue finetune`, with its model card (README.md: the run's data and training up to that step)."""
    try:
        ckpt = export_checkpoint(run_dir, output, step, config, language)
    except (ExportError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"{ckpt} -> {output}")
