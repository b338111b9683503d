"""A two-stage graph for the fine-tuning stage's tests: `pretrain` builds a tiny random RoBERTa from the fixture
texts (what the real pretrain stage leaves in `final/`), then the real `finetune` stage.

Used in-process (`REGISTRY`) and by `klue run --registry testkit.finetune_stages:REGISTRY` in the kill tests.
"""

from __future__ import annotations

from pydantic import Field

from pipeline.stage import Stage, StageContext, StageParams, StageResult


class TinyPretrainParams(StageParams):
    seed: int = 0
    seeds: list[int] = Field(default_factory=list)  # replicates, as the real stage's (`Stage.replicates`)
    hidden: int = Field(32, ge=8)


class TinyPretrainStage(Stage[TinyPretrainParams]):
    """Writes `final/`: a tiny random model and its WordPiece over the fine-tuning fixtures' texts."""

    name = "pretrain"
    variant_field = "seed"
    replicates = ("seeds", "seed")
    weights = ("final/*.safetensors",)  # as the real stage's final weights

    def run(self, ctx: StageContext[TinyPretrainParams]) -> StageResult:
        from testkit.finetune import fixture_texts
        from testkit.tiny_model import build_tiny_model

        build_tiny_model(ctx.out_dir / "final", fixture_texts(), seed=ctx.params.seed, hidden=ctx.params.hidden)
        return StageResult(meta={"final_dir": "final"})


REGISTRY = {"pretrain": "testkit.finetune_stages:TinyPretrainStage",
            "finetune": "finetune.stages.finetune:FinetuneStage"}
