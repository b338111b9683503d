"""What the fine-tuning suite needs to know of an encoder, each question answered in one place, from the model's
config or modules rather than from its architecture's name where that is possible.

The encoders are stock transformers classes loaded through the `AutoModelFor*` classes: the four that
pretraining exports (`roberta`, KLUE's; `xlm-roberta-xl`; `roformer`; `modernbert`) and any hub model of the
same families (klue/roberta-base). The task heads need three things that differ between them:

- `max_positions`: how many tokens one sequence can hold (RoBERTa-style tables lose pad_token_id + 1 rows).
- `hidden_dropout`: the dropout on the encoder's hidden states, which DST's decoder reuses (BERT-style configs
  call it `hidden_dropout_prob`, ModernBERT `embedding_dropout` / `mlp_dropout`).
- `set_pooling`: what a sentence-level head (sequence classification, multiple choice) reads: the first token,
  KLUE-baseline's `[CLS]` head, or the mean of the last hidden states over the non-padding tokens
  (`Hyperparams.pooling`). ModernBERT's stock heads read `config.classifier_pooling` themselves; the others
  read the first token only, so for them `mean` is a forward hook on the encoder that hands the stock head the
  pooled vector in place of the token sequence (below).

A leaf: nothing of the framework is imported here, and torch only inside the functions that need it.
"""

from __future__ import annotations

import weakref
from typing import Any

POOLINGS = ("cls", "mean")


def max_positions(config: Any) -> int | None:
    """How many tokens one sequence can hold, None when the config names no limit.

    RoBERTa-family models (model_type roberta, xlm-roberta, xlm-roberta-xl, ...) number their learned positions
    from pad_token_id + 1, so they hold max_position_embeddings - pad_token_id - 1 tokens. Positions from 0
    otherwise: BERT's learned table and RoFormer's sinusoid table have max_position_embeddings rows (one more
    token is an index error); ModernBERT's rotary positions have no table, and its max_position_embeddings is
    the length it was trained for, taken as the limit too."""
    max_pos = getattr(config, "max_position_embeddings", None)
    if not max_pos:
        return None
    offset = (config.pad_token_id or 0) + 1 if "roberta" in getattr(config, "model_type", "") else 0
    return int(max_pos) - offset


def hidden_dropout(config: Any, default: float = 0.1) -> float:
    """The encoder's dropout on hidden states. BERT, RoBERTa, XLM-R-XL and RoFormer configs have one field,
    `hidden_dropout_prob` (embeddings and every sublayer's output); ModernBERT drops its embeddings
    (`embedding_dropout`) and the inside of each MLP (`mlp_dropout`): the larger of the two. `default` (BERT's
    0.1) for a config with none of them."""
    if getattr(config, "hidden_dropout_prob", None) is not None:
        return float(config.hidden_dropout_prob)
    found = [float(v) for f in ("mlp_dropout", "embedding_dropout") if (v := getattr(config, f, None)) is not None]
    return max(found) if found else default


def masked_mean(hidden: Any, attention_mask: Any | None) -> Any:
    """(batch, tokens, hidden) -> (batch, hidden): the mean over the positions where `attention_mask` is 1 (all
    positions without a mask). Padding never changes it."""
    if attention_mask is None:
        return hidden.mean(dim=1)
    mask = attention_mask.to(hidden.dtype).unsqueeze(-1)
    return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)


def _mean_pooled_output(module: Any, args: tuple, kwargs: dict, output: Any) -> Any:
    """Forward hook on the encoder of a stock head that reads the first token (RoBERTa's and XLM-R-XL's
    `*ClassificationHead` and pooler, RoFormer's classification head and sequence summary): its last hidden
    states become one position, the masked mean (`masked_mean`), and its pooler output (when it has a pooler) is
    the pooler applied to that mean. The head then runs unchanged on the mean: dense, tanh (RoFormer: its
    activation), dropout, output projection for sequence classification; pooler, dropout, linear for multiple
    choice. Every stock head passes `attention_mask` by keyword."""
    mask = kwargs.get("attention_mask", args[1] if len(args) > 1 else None)
    pooled = masked_mean(output[0], mask).unsqueeze(1)
    pooler = getattr(module, "pooler", None)
    if isinstance(output, tuple):
        rest = output[1:]
        if pooler is not None and rest:
            rest = (pooler(pooled), *rest[1:])
        return (pooled, *rest)
    output["last_hidden_state"] = pooled
    if pooler is not None and output.get("pooler_output") is not None:
        output["pooler_output"] = pooler(pooled)
    return output


_MEAN_HOOKS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()  # encoder -> hook handle


def reads_classifier_pooling(config: Any) -> bool:
    """Whether the config's own heads read `classifier_pooling` (ModernBERT's config class declares the field)."""
    return hasattr(type(config), "classifier_pooling")


def set_pooling(model: Any, pooling: str | None = None) -> str:
    """Makes the sentence-level head of a stock `*ForSequenceClassification` / `*ForMultipleChoice` read the
    first token (`cls`) or the mean of the last hidden states over the non-padding tokens (`mean`); None keeps
    what the model's config says (`classifier_pooling`, `cls` when absent), which is how a saved fine-tuned
    checkpoint comes back. Returns the pooling.

    The choice is stored as `config.classifier_pooling`, so `save_pretrained` writes it into config.json:
    ModernBERT's own field, which its stock heads read; an extra field for the others, which this function reads
    back (a plain `AutoModelForSequenceClassification.from_pretrained` of such a folder reads the first token).
    For a head that does not read the field, `mean` registers `_mean_pooled_output` on its encoder (removed
    again for `cls`). A sequence-summary head (RoFormer's multiple choice) reads the *last* position by default,
    padding for every choice but the longest; it is set to the first (`summary_type`, kept in the config too)."""
    config = model.config
    chosen = pooling or getattr(config, "classifier_pooling", None) or "cls"
    if chosen not in POOLINGS:
        raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, got {chosen!r}")
    config.classifier_pooling = chosen
    summary = getattr(model, "sequence_summary", None)
    if summary is not None and getattr(summary, "summary_type", "first") != "first":
        summary.summary_type = config.summary_type = "first"
    encoder = model.base_model
    handle = _MEAN_HOOKS.pop(encoder, None)
    if handle is not None:
        handle.remove()
    if chosen == "mean" and not reads_classifier_pooling(config):
        _MEAN_HOOKS[encoder] = encoder.register_forward_hook(_mean_pooled_output, with_kwargs=True)
    return chosen
