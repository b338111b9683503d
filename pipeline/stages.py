"""Every stage of the pipeline, in dependency order: the one place that declares the stage graph.

Entries are import paths so that `klue --help` and recipe validation do not import torch or MeCab.
"""

from __future__ import annotations

import importlib
from functools import cache

from pipeline.stage import Stage

STAGE_CLASSES: dict[str, str] = {
    "collect": "corpora.collect:CollectStage",
    "filter": "corpora.stages:FilterStage",
    "dedup": "corpora.stages:DedupStage",
    "decontaminate": "corpora.stages:DecontaminateStage",
    "pii_detect": "corpora.pii.stage:PiiDetectStage",
    "pii": "corpora.pii.stage:PiiReplaceStage",
    "pretokenize": "tokenizer.stages:PretokenizeStage",
    "vocab": "tokenizer.stages:VocabStage",
    "encode": "pretrain.stages:EncodeStage",
    "pretrain": "pretrain.stages:PretrainStage",
}

STAGE_ORDER: tuple[str, ...] = tuple(STAGE_CLASSES)


@cache
def stage_class(name: str) -> type[Stage]:
    module, _, attr = STAGE_CLASSES[name].partition(":")
    cls = getattr(importlib.import_module(module), attr)
    assert cls.name == name, f"{STAGE_CLASSES[name]} declares name {cls.name!r}"
    return cls
