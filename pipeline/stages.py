"""Every stage of the pipeline, in dependency order: the one place that declares the stage graph.

Entries are import paths so that `klue --help` and recipe validation do not import torch or MeCab. Stage X
lives in `<package>/stages/X.py`, with its params model beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipeline.registry import Registry, RegistryError
from pipeline.stage import Stage

STAGE_CLASSES: dict[str, str] = {
    "collect": "corpora.stages.collect:CollectStage",
    "filter": "corpora.stages.filter:FilterStage",
    "dedup": "corpora.stages.dedup:DedupStage",
    "decontaminate": "corpora.stages.decontaminate:DecontaminateStage",
    "pii_detect": "corpora.stages.pii_detect:PiiDetectStage",
    "toxicity": "corpora.stages.toxicity:ToxicityStage",
    "pii": "corpora.stages.pii:PiiReplaceStage",
    "pretokenize": "tokenizer.stages.pretokenize:PretokenizeStage",
    "vocab": "tokenizer.stages.vocab:VocabStage",
    "encode": "pretrain.stages.encode:EncodeStage",
    "pretrain": "pretrain.stages.pretrain:PretrainStage",
    "finetune": "finetune.stages.finetune:FinetuneStage",
}


def check_stage(name: str, cls: Any) -> None:
    """A registered stage must be a Stage subclass that declares the name it is registered under."""
    if not (isinstance(cls, type) and issubclass(cls, Stage)):
        raise RegistryError(f"stage {name!r}: {cls!r} is not a pipeline.stage.Stage subclass")
    if getattr(cls, "name", None) != name:
        raise RegistryError(f"stage {name!r}: class {cls.__qualname__} declares name {getattr(cls, 'name', None)!r}")


StageRegistry = Registry[type[Stage[Any]]]


def stage_registry(entries: Mapping[str, str | type[Stage[Any]]]) -> StageRegistry:
    """A stage graph: name -> stage class (or its import path), in topological order."""
    return Registry("stage", entries, check=check_stage)


def registry_from_spec(spec: str) -> StageRegistry:
    """The graph named by `module:ATTR` (a dict or Registry of stages), for `klue run --registry`."""
    return Registry.from_spec("stage", spec, check=check_stage)


STAGES: StageRegistry = stage_registry(STAGE_CLASSES)
