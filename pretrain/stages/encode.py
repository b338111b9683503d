"""The `encode` stage: the final corpus -> memory-mappable token shards (uint16/uint32 + index, eojeol starts for
whole-word masking) and held-out evaluation documents, with the vocab stage's tokenizer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from corpora.shards import list_shards
from pipeline.stage import FunnelSum, Stage, StageContext, StageParams, StageResult
from pretrain.encode import ShardTask, encode_shard, load_tokenizer, write_index


class EncodeParams(StageParams):
    """The held-out share and whether to store eojeol starts (for whole-word masking)."""

    eval_fraction: float = Field(0.01, ge=0.0, lt=1.0, description="share of documents held out (by id hash)")
    word_info: bool = Field(True, description="store eojeol starts for whole-word masking (1 byte per token)")


class EncodeStage(Stage[EncodeParams]):
    """Tokenize the final corpus with the vocab stage's tokenizer into memory-mappable token shards."""

    name = "encode"
    version = "1"
    inputs = ("pii", "vocab")
    shard_resume = True  # a rerun after a kill runs only the shards whose task had not finished

    def run(self, ctx: StageContext[EncodeParams]) -> StageResult:
        p = ctx.params
        tok_dir = tokenizer_dir(ctx)
        shards = list_shards(ctx.inputs["pii"].path)
        if not shards:
            raise FileNotFoundError(f"{ctx.inputs['pii'].path}: no document shards (shard-*.parquet)")
        tok = load_tokenizer(tok_dir)
        tasks = [ShardTask(s, ctx.out_dir, tok_dir, ctx.seed, p.eval_fraction, p.word_info) for s in shards]
        results = list(ctx.map(encode_shard, tasks, desc="encode"))
        funnels = FunnelSum()
        for r in results:
            funnels.add_funnels(r.funnel, r.by_source)
        special = {name: getattr(tok, f"{name}_token_id") for name in ("cls", "pad", "sep", "unk", "mask")}
        index = write_index(ctx.out_dir, results, vocab_size=len(tok), word_info=p.word_info,
                            special_ids=special)
        totals = {s: sum(x["tokens"] for x in index["splits"][s]) for s in index["splits"]}
        docs = {s: sum(x["docs"] for x in index["splits"][s]) for s in index["splits"]}
        meta = {"index": "index.json", "dtype": index["dtype"], "vocab_size": len(tok), "tokens": totals,
                "docs": docs, "word_info": p.word_info,
                "report": {"train_tokens": totals["train"], "eval_tokens": totals["eval"],
                           "tokens_per_doc": totals["train"] / max(1, docs["train"])}}
        return StageResult(funnel=funnels.funnel, by_source=dict(sorted(funnels.by_source.items())), meta=meta)


def tokenizer_dir(ctx: StageContext[Any]) -> Path:
    """The tokenizer folder of the run's vocab stage (encode and pretrain read it)."""
    vocab = ctx.inputs["vocab"]
    sub = vocab.meta.get("tokenizer_dir")
    if not sub:
        raise KeyError(f"{vocab.path}: the vocab manifest has no meta['tokenizer_dir']")
    return vocab.path / sub
