"""JGLUE JSQuAD: extractive question answering in the SQuAD 1.1 setting (every question answerable); EM and
character F1 as JGLUE scores them.

Everything about spans is KLUE-MRC's (`MrcTask`, whose windows, max-context rule, candidate spans and defaults
`max_query_length` 64, `doc_stride` 128, `n_best` 20, `max_answer_length` 30 are also the defaults of the
script JGLUE runs, transformers' legacy `examples/legacy/question-answering/run_squad.py`: JGLUE
`fine-tuning/README.md`). What differs:

- Never abstaining. JGLUE runs `run_squad.py` without `--version_2_with_negative`, so
  `compute_predictions_logits` always answers with the best span; here the prediction is `best_answer` with the
  null answer never chosen (what MRC writes as `best_span`). Training is the same as MRC's for answerable
  questions (`SquadV1Processor` too points windows without the whole first answer at [CLS]).
- All questions answerable: a record with `is_impossible: true` or without answers is a `DataError`.
- Metrics (`finetune.metrics.jsquad_scores`): transformers' `squad_metrics` as JGLUE patches it
  (`fine-tuning/patch/transformers-4.9.2_jglue-1.3.0.patch`): normalisation = lower-case, punctuation kept,
  trailing "。" stripped, whitespace collapsed; EM = equality of the normalised strings; F1 = the F1 of the
  normalised strings' characters (a multiset overlap; spaces count as characters); each the max over the
  question's 2-3 gold answers, then the mean ×100. `f1` selects the checkpoint (JGLUE's `run_squad.py` selects
  nothing; F1 is the finer of its two numbers, as ROUGE-W is for KLUE-MRC).

The "<title> [SEP] " prefix. Every JSQuAD context begins with its article title and " [SEP] " (JGLUE README:
"context: a concatenation of the title and paragraph"), and `answer_start` counts that prefix. The prefix stays
in the context the model reads, as in JGLUE's baseline: `SquadV1Processor` reads `context` as it is, and the
BERT tokenizer turns the literal "[SEP]" into its separator token (a special token inside the text); our fast
tokenizers do the same, with the token's character offsets, so answer positions need no shifting and a
prediction is exactly `context[start of its first token : end of its last token]`. Nothing is stripped when
scoring either: JGLUE's metric compares answer strings, which never hold the prefix.

The prediction text is the context's own characters (MRC's offsets, see `finetune.tasks.mrc`). JGLUE's
patched `compute_predictions_logits` instead joins the WordPiece tokens without spaces for
`BertJapaneseTokenizer` models (so "285 km/h" comes out as "285km/h") and uses `get_final_text` for others;
a model's span here keeps the spaces of the passage.

Data: `{"data": [{"title", "paragraphs": [{"context", "qas": [{"id", "question", "answers": [{"text",
"answer_start"}], "is_impossible": false}]}]}]}`; the guid is the question `id` (e.g. "a10336p0q0"). The shared
copy has no train file (JGLUE's 62,697 training questions are not here), so `--split auto` splits `valid-v1.3`
by article title, as MRC does: 59 articles, no passage on both sides.

Defaults (`finetune.tasks.jglue`): lr 5e-5, batch 32, 3 epochs, warmup 0.1, max length 384 (JGLUE's
`run_squad.py` command and its table: "384 (JSQuAD)").

Prediction records: `{"guid": "a10336p0q0", "answer": "小笠原諸島"}`.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from finetune.example_stats import ExampleStats, mean_stats
from finetune.metrics import jsquad_em_and_f1, jsquad_scores
from finetune.records import Column, DataError, Example, Feature, TaskEntry
from finetune.tasks.base import DataFiles, Hyperparams
from finetune.tasks.jglue import jglue_published
from finetune.tasks.mrc import MrcTask, best_answer


class JsquadTask(MrcTask):
    name: ClassVar[str] = "jsquad"
    defaults: ClassVar[Hyperparams] = Hyperparams(learning_rate=5e-5, batch_size=32, max_length=384, epochs=3,
                                                  warmup_ratio=0.1, evals_per_epoch=1, patience=None)
    files: ClassVar[DataFiles] = DataFiles("jsquad-v1.3", "train-v1*.json", "valid-v1*.json", "JSQuAD")

    def parse_record(self, rec: dict, where: str) -> Example:
        """MRC's reader (the question `id` is the guid; every answer must be the context's text at its
        `answer_start`, prefix included), and every question answerable."""
        ex = super().parse_record(rec, where)
        if ex["is_impossible"] or not ex["answers"]:
            raise DataError(f"{where} (guid {ex['guid']}): field 'is_impossible' is true or 'answers' is empty; "
                            "JSQuAD questions are all answerable (SQuAD 1.1)")
        return ex

    def predictions(self, outputs: np.ndarray, features: list[Feature], examples: list[Example]) -> list[dict]:
        windows = self.question_windows(outputs, features)
        return [{"guid": ex["guid"],
                 "answer": best_answer(ex["context"], windows.get(i, []), self.n_best, self.max_answer_length,
                                       null_threshold=math.inf)}
                for i, ex in enumerate(examples)]

    def compute_metrics(self, preds: list[dict], golds: list[Example]) -> dict[str, Any]:
        return jsquad_scores([p["answer"] for p in preds], [[a["text"] for a in g["answers"]] for g in golds])

    def main_metric_stats(self, preds: list[dict], golds: list[Example]) -> ExampleStats | None:
        """Character F1 is the mean over questions of each question's F1 (`jsquad_scores`)."""
        if self.main_metric != "f1":
            return None
        return mean_stats([jsquad_em_and_f1(p["answer"], [a["text"] for a in g["answers"]])[1]
                           for p, g in zip(preds, golds, strict=True)])

    # No XLM-R scores: JGLUE's table has none for JSQuAD ("excluded from the JSQuAD evaluation").
    entry = TaskEntry("Extractive QA, all answerable (JGLUE JSQuAD)", ("exact_match", "f1"), "f1", columns=(
        Column("exact_match", "JSQuAD EM", jglue_published(87.1, 86.4, 88.0, 89.7, 86.4, 88.4, 91.8)),
        Column("f1", "JSQuAD F1", jglue_published(94.1, 93.7, 94.6, 94.7, 92.7, 94.0, 96.3))))
