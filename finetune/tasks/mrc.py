"""KLUE-MRC: extractive question answering with unanswerable questions (SQuAD 2.0 layout); EM and "ROUGE-W"
(the character F1 of the longest common substring), overall and per question type.

Reference: KLUE-baseline `klue_baseline/data/klue_mrc.py` (`KlueMRCProcessor`: the SQuAD reader, training on
the first answer, an unanswerable question trained as "no answer"; `max_seq_length` 510, `doc_stride` 128,
`max_query_length` 64, features by transformers' legacy `squad_convert_examples_to_features`),
`klue_baseline/models/machine_reading_comprehension.py` (`MRCTransformer`: `AutoModelForQuestionAnswering`,
evaluation through transformers' `compute_predictions_logits` with `version_2_with_negative=True`,
`null_score_diff_threshold=0`, `n_best_size` 20, `max_answer_length` 30) and `klue_baseline/metrics/`
(`klue_mrc_em`, `klue_mrc_rouge_w`, `utils.normalize_answer_for_klue_mrc`: see `finetune.metrics`).
`run_all.sh`: lr 3e-5, batch 16, 5 epochs, max length 510, no warmup given (0), selects on rouge_w.

Data. The official JSON is `{"version", "data": [{"title", "paragraphs": [{"context", "qas": [{"guid",
"question", "answers": [{"text", "answer_start"}], "is_impossible", "question_type"}]}]}]}`; KorQuAD 1.0 has
the same layout with `id` for `guid` and no `is_impossible` / `question_type` (every question answerable, type
unknown). The HF `klue`/`mrc` config has one row per question (`title`, `context`, `guid`, `question`,
`answers: {"text": [...], "answer_start": [...]}`, `is_impossible`, `question_type`). An answer must be what
the context holds at `answer_start` (checked when reading; the official reader drops such a question from
training with a warning and still scores it). Gold answers for scoring are the `answers` texts whatever
`is_impossible` says (the official metric does the same); a question without answers has the gold answer "".
Where only a dev file exists (the shared KorQuAD file), `--split dev-split` hashes the article (its `title`;
an untitled one by its passage), so no passage is read in training and asked about in evaluation.

Windows. The question is cut to 64 tokens; the passage is cut into windows that start every 128 tokens
(the legacy converter's `doc_stride` is the step between window starts, not the overlap that a fast
tokenizer's `stride` is: here `stride = capacity - 128`), each as long as `max_length` leaves after the
question and the special tokens. A token is "max context" in the window where min(left, right context) +
0.01 × window length is largest (the first such window on a tie); only spans that start at a max-context
token are candidates. Training points at the answer's first and last token in a window that holds the whole
answer, and at the first token ([CLS]) in every other window and for unanswerable questions.

Evaluation per question, as `compute_predictions_logits` with `version_2_with_negative`: the null score is
the smallest start + end logit at the first token over the question's windows; candidates are the 20 best
start and 20 best end positions of each window, kept when both lie in the passage, the start is max context,
end >= start and the span is at most 30 tokens; the best candidate (start + end logit; on a tie the earlier
window, then the better-ranked start, then end) is the answer unless the null score exceeds its score by more
than the threshold 0, in which case the answer is "" (unanswerable).

Departures from KLUE-baseline (all in the README):
- Offsets instead of whitespace words. The legacy converter maps an answer to the whole whitespace-separated
  words it touches and then searches for the tokenized answer text inside them (`_improve_answer_span`), and at
  evaluation rebuilds the text from whole words, trimmed by `get_final_text` (a character alignment that falls
  back to the whole words when it fails, and joins words with one space). Here the fast tokenizer's character
  offsets give the tokens that overlap the answer in training, and the predicted text is exactly
  `context[start of first token : end of last token]`.
- The 20 best start/end positions are taken over a window's own tokens; the legacy features are padded to
  `max_seq_length`, so padding positions compete for the top 20 there (and are then dropped). Ours do not
  depend on padding, so predictions do not change with the evaluation batch.
- No valid span at all: the answer is "". The legacy code then inserts a placeholder entry with the text
  "empty" and logits 0, so it answers the literal string "empty" when the null score is <= 0.
- A window capacity below 128 tokens (a small `--max-length`) makes the windows adjacent (step = capacity);
  the legacy converter would skip the passage text between them.
- Training features are not dropped when an answer is not found: such a file is a `DataError` instead.
- Model inputs are `input_ids` and `attention_mask` only, as for every task here (the baseline adds
  `token_type_ids` for BERT models).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from finetune.example_stats import ExampleStats, mean_stats
from finetune.metrics import mrc_em_and_rouge_w, mrc_scores
from finetune.records import Column, DataError, Example, Feature, TaskEntry, load_json, require
from finetune.tasks.base import DataFiles, Hyperparams, Task, _auto_model, klue_published

MAX_QUERY_LENGTH = 64  # KlueMRCProcessor --max_query_length
DOC_STRIDE = 128  # --doc_stride: tokens between the starts of two windows
N_BEST = 20  # MRCTransformer --n_best_size
MAX_ANSWER_LENGTH = 30  # --max_answer_length, in tokens
NULL_SCORE_DIFF_THRESHOLD = 0.0  # compute_predictions_logits(null_score_diff_threshold=0)

Span = tuple[int, int]  # character offsets into the context, end exclusive


def load_squad_json(path: Path) -> list[dict]:
    """The `data` list of a SQuAD-layout file, with the line and column of a syntax error."""
    raw = load_json(path)
    if not isinstance(raw, dict) or not isinstance(raw.get("data"), list):
        raise DataError(f"{path}: expected a SQuAD-layout object {{\"data\": [articles]}}")
    return raw["data"]


def question_answerer(model_dir: Path, tokenizer: Any, random_init: bool) -> Any:
    """`AutoModelForQuestionAnswering` (a linear start/end head on every token, as `MRCTransformer`), loaded
    like the other heads (safetensors, fp32)."""
    from transformers import AutoModelForQuestionAnswering

    return _auto_model(AutoModelForQuestionAnswering, model_dir, tokenizer, random_init, {})


def max_context_flags(starts: Sequence[int], lengths: Sequence[int]) -> list[list[bool]]:
    """Per window (passage tokens `starts[k] .. starts[k] + lengths[k] - 1`), whether each of its tokens has
    its maximum context there: score min(tokens to its left, to its right) + 0.01 × window length, the first
    window with the highest score wins (the legacy converter's `_new_check_is_max_context`)."""
    best: dict[int, tuple[float, int]] = {}
    for k, (s, n) in enumerate(zip(starts, lengths, strict=True)):
        for d in range(s, s + n):
            score = min(d - s, s + n - 1 - d) + 0.01 * n
            if d not in best or score > best[d][0]:
                best[d] = (score, k)
    return [[best[d][1] == k for d in range(s, s + n)] for k, (s, n) in enumerate(zip(starts, lengths, strict=True))]


def best_answer(context: str, windows: Sequence[tuple[Feature, np.ndarray]], n_best: int = N_BEST,
                max_answer_length: int = MAX_ANSWER_LENGTH,
                null_threshold: float = NULL_SCORE_DIFF_THRESHOLD) -> str:
    """The answer text of one question from its windows: (feature with `_offsets` / `_max_context`, logits of
    shape (tokens, 2) = start, end). "" when the null answer wins or no span is valid (see the module doc)."""
    null_score = float("inf")
    candidates: list[tuple[float, Span]] = []  # in the legacy order: window, start rank, end rank
    for feat, logits in windows:
        n = len(feat["input_ids"])
        start, end = np.asarray(logits[:n, 0], dtype=np.float64), np.asarray(logits[:n, 1], dtype=np.float64)
        null_score = min(null_score, float(start[0] + end[0]))
        offsets, max_ctx = feat["_offsets"], feat["_max_context"]
        top_starts = np.argsort(-start, kind="stable")[:n_best]
        top_ends = np.argsort(-end, kind="stable")[:n_best]
        for s in top_starts:
            if offsets[s] is None or not max_ctx[s]:
                continue
            for e in top_ends:
                if offsets[e] is None or e < s or e - s + 1 > max_answer_length:
                    continue
                candidates.append((float(start[s] + end[e]), (offsets[s][0], offsets[e][1])))
    # stable sort: equal scores keep the legacy order
    for score, (c0, c1) in sorted(candidates, key=lambda c: -c[0]):
        text = context[c0:c1]
        if text:
            return "" if null_score - score > null_threshold else text
    return ""


class MrcTask(Task):
    name: ClassVar[str] = "mrc"
    defaults: ClassVar[Hyperparams] = Hyperparams(learning_rate=3e-5, batch_size=16, max_length=510, epochs=5,
                                                  warmup_ratio=0.0, patience=None)  # run_all.sh:66 --patience 100000
    files: ClassVar[DataFiles] = DataFiles(
        "mrc", "klue-mrc-v1*_train.json|[kK]or[qQ]u[aA][dD]*_train.json",
        "klue-mrc-v1*_dev.json|[kK]or[qQ]u[aA][dD]*_dev.json", "mrc")
    split_unit: ClassVar[str] = "article (title)"
    # Instance-level so tests can shrink them; the defaults are KLUE-baseline's.
    max_query_length: int = MAX_QUERY_LENGTH
    doc_stride: int = DOC_STRIDE
    n_best: int = N_BEST
    max_answer_length: int = MAX_ANSWER_LENGTH

    # ---- reading -------------------------------------------------------------------------------
    def read_file(self, path: Path) -> list[Example]:
        """The SQuAD-layout JSON: one example per question, each carrying its passage and article title."""
        out = []
        for i, article in enumerate(load_squad_json(path)):
            where_a = f"{path}: data[{i}]"
            paragraphs = require(article, "paragraphs", list, where_a)
            title = article.get("title") or ""
            if not isinstance(title, str):
                raise DataError(f"{where_a}: field 'title' should be str, got {title!r}")
            for j, para in enumerate(paragraphs):
                where_p = f"{where_a}.paragraphs[{j}]"
                context = require(para, "context", str, where_p)
                for k, qa in enumerate(require(para, "qas", list, where_p)):
                    if not isinstance(qa, dict):
                        raise DataError(f"{where_p}.qas[{k}]: expected a JSON object, got {type(qa).__name__}")
                    out.append(self.parse_record({**qa, "title": title, "context": context},
                                                 f"{where_p}.qas[{k}]"))
        return out

    def parse_record(self, rec: dict, where: str) -> Example:
        """A flat question record ({"guid" or "id", "question", "context", "title", "answers", "is_impossible",
        "question_type"}) -> an example; every answer must be the context's text at its `answer_start`."""
        if "guid" not in rec and "id" in rec:
            rec = {**rec, "guid": rec["id"]}  # KorQuAD / SQuAD name the question id `id`
        guid = require(rec, "guid", str, where)
        where = f"{where} (guid {guid})"
        question = require(rec, "question", str, where)
        context = require(rec, "context", str, where)
        if not question.strip() or not context.strip():
            raise DataError(f"{where}: empty {'question' if not question.strip() else 'context'}")
        is_impossible = rec.get("is_impossible", False)
        if not isinstance(is_impossible, bool):
            raise DataError(f"{where}: field 'is_impossible' should be true or false, got {is_impossible!r}")
        qtype = rec.get("question_type")
        if qtype is not None and (isinstance(qtype, bool) or qtype not in (1, 2, 3)):
            raise DataError(f"{where}: field 'question_type' should be 1, 2 or 3, got {qtype!r}")
        answers = []
        for n, ans in enumerate(require(rec, "answers", list, where)):
            at = f"{where}: answers[{n}]"
            text = require(ans, "text", str, at)
            start = require(ans, "answer_start", int, at)
            if text == "" and is_impossible:
                continue  # a placeholder some copies give unanswerable questions
            if not text:
                raise DataError(f"{at}: empty answer text")
            if not 0 <= start <= len(context) - len(text) or context[start:start + len(text)] != text:
                found = context[max(start, 0):max(start, 0) + len(text)]
                raise DataError(f"{at}: answer {text!r} is not at answer_start {start} of the context "
                                f"(found {found!r})")
            answers.append({"text": text, "answer_start": start})
        if not is_impossible and not answers:
            raise DataError(f"{where}: an answerable question (is_impossible false) without answers")
        title = rec.get("title") or ""
        return {"guid": guid, "title": str(title), "context": context, "question": question, "answers": answers,
                "is_impossible": is_impossible, "question_type": qtype}

    def from_hf(self, row: dict, features: Any) -> dict:
        """HF `klue`/`mrc`: one row per question; `answers` is a dict of lists there."""
        rec = dict(row)
        ans = rec.get("answers")
        if isinstance(ans, dict):
            rec["answers"] = [{"text": t, "answer_start": s}
                              for t, s in zip(ans.get("text", []), ans.get("answer_start", []), strict=True)]
        return rec

    def split_key(self, ex: Example) -> str:
        """The article: its title, or the passage itself for an untitled one."""
        return f"title:{ex['title']}" if ex["title"] else f"context:{ex['context']}"

    # ---- features and model --------------------------------------------------------------------
    def encode(self, examples: list[Example], tokenizer: Any, max_length: int) -> list[Feature]:
        """Windows over the passage (see the module doc), each a feature with `start_positions` /
        `end_positions` (0 = the first token when the window does not hold the whole first answer),
        `_offsets` (a passage token's character span, None elsewhere) and `_max_context` per token."""
        n_special = tokenizer.num_special_tokens_to_add(pair=True)
        q_limit = min(self.max_query_length, max_length - n_special - 1)
        if q_limit < 1:
            raise ValueError(f"max_length {max_length} leaves no room for a question and a passage")
        q_enc = tokenizer([ex["question"] for ex in examples], add_special_tokens=False,
                          return_offsets_mapping=True)
        questions = []
        for ex, ids, offs in zip(examples, q_enc["input_ids"], q_enc["offset_mapping"], strict=True):
            # cut the question text after its q_limit-th token (the legacy reader truncates the token ids)
            questions.append(ex["question"][:offs[q_limit - 1][1]] if len(ids) > q_limit else ex["question"])
        q_lens = [len(ids) for ids in tokenizer(questions, add_special_tokens=False)["input_ids"]]
        # windows start every `step` passage tokens; the fast tokenizer's `stride` is the overlap, which depends
        # on the room the question leaves, so questions of one length are tokenized together
        groups: dict[int, list[int]] = {}
        steps: dict[int, int] = {}
        for i, q_len in enumerate(q_lens):
            capacity = max_length - n_special - q_len
            if capacity < 1:
                raise ValueError(f"question {examples[i]['guid']} leaves no room for the passage at max_length "
                                 f"{max_length}")
            steps[capacity] = min(self.doc_stride, capacity)
            groups.setdefault(capacity, []).append(i)
        per_example: dict[int, list[Feature]] = {}
        for capacity, idx in groups.items():
            step = steps[capacity]
            enc = tokenizer([questions[i] for i in idx], [examples[i]["context"] for i in idx],
                            truncation="only_second", max_length=max_length, stride=capacity - step,
                            return_overflowing_tokens=True, return_offsets_mapping=True)
            windows: dict[int, list[int]] = {}
            for w, sample in enumerate(enc["overflow_to_sample_mapping"]):
                windows.setdefault(idx[sample], []).append(w)
            for i, ws in windows.items():
                per_example[i] = self._window_features(examples[i], i, enc, ws, step)
        return [f for i in range(len(examples)) for f in per_example[i]]

    @staticmethod
    def _window_features(ex: Example, index: int, enc: Any, ws: list[int], step: int) -> list[Feature]:
        positions = [[j for j, s in enumerate(enc.sequence_ids(w)) if s == 1] for w in ws]
        offsets_of = [enc["offset_mapping"][w] for w in ws]
        for k in range(1, len(ws)):  # the windows must start every `step` tokens of one tokenization
            prev, cur = positions[k - 1], positions[k]
            if len(prev) > step:
                ok = offsets_of[k][cur[0]] == offsets_of[k - 1][prev[step]]
            else:  # adjacent windows (step = capacity): the next one starts where this one ends, or inside the
                # same character when a byte-fallback tokenizer split it into byte tokens across the two
                first, last = offsets_of[k][cur[0]], offsets_of[k - 1][prev[-1]]
                ok = len(prev) == step and (first[0] >= last[1] or tuple(first) == tuple(last))
            if not ok:
                raise RuntimeError(f"{ex['guid']}: the tokenizer's overflowing windows do not advance by {step} "
                                   "tokens; MRC needs a fast tokenizer with standard stride handling")
        flags = max_context_flags([k * step for k in range(len(ws))], [len(p) for p in positions])
        first = ex["answers"][0] if ex["answers"] and not ex["is_impossible"] else None
        feats = []
        for w, pos, offs, ctx_flags in zip(ws, positions, offsets_of, flags, strict=True):
            n = len(enc["input_ids"][w])
            spans: list[Span | None] = [None] * n
            max_ctx = [False] * n
            for j, flag in zip(pos, ctx_flags, strict=True):
                spans[j] = (int(offs[j][0]), int(offs[j][1]))
                max_ctx[j] = flag
            start_pos = end_pos = 0
            if first is not None and pos:
                a0 = first["answer_start"]
                a1 = a0 + len(first["text"])
                if offs[pos[0]][0] <= a0 and a1 <= offs[pos[-1]][1]:  # the whole answer is in this window
                    start_pos = next(j for j in pos if offs[j][1] > a0)
                    end_pos = next(j for j in reversed(pos) if offs[j][0] < a1)
            feats.append({"input_ids": enc["input_ids"][w], "attention_mask": enc["attention_mask"][w],
                          "start_positions": start_pos, "end_positions": end_pos, "example_index": index,
                          "_offsets": spans, "_max_context": max_ctx})
        return feats

    def build_model(self, model_dir: Path, tokenizer: Any, random_init: bool,
                    hp: Hyperparams | None = None) -> Any:
        return question_answerer(model_dir, tokenizer, random_init)

    def eval_outputs(self, model: Any, batch: dict) -> Any:
        """Start and end logits stacked on the last axis, (batch, tokens, 2), so the trainer pads the token
        axis like any per-token output; the positions stay out (no loss at evaluation)."""
        import torch

        out = model(**{k: v for k, v in batch.items() if k not in ("start_positions", "end_positions")})
        return torch.stack([out.start_logits, out.end_logits], dim=-1)

    @staticmethod
    def question_windows(outputs: np.ndarray, features: list[Feature]) -> dict[int, list[tuple[Feature, np.ndarray]]]:
        """Example index -> its windows, each (feature, its (tokens, 2) start/end logits), in feature order: what
        `best_answer` takes. Shared with JSQuAD (`finetune.tasks.jsquad`), which differs only in never abstaining."""
        windows: dict[int, list[tuple[Feature, np.ndarray]]] = {}
        for f, row in zip(features, np.asarray(outputs), strict=True):
            windows.setdefault(f["example_index"], []).append((f, row))
        return windows

    def predictions(self, outputs: np.ndarray, features: list[Feature], examples: list[Example]) -> list[dict]:
        windows = self.question_windows(outputs, features)
        records = []
        for i, ex in enumerate(examples):
            found = windows.get(i, [])
            records.append({"guid": ex["guid"],
                            "answer": best_answer(ex["context"], found, self.n_best, self.max_answer_length),
                            "best_span": best_answer(ex["context"], found, self.n_best, self.max_answer_length,
                                                     null_threshold=math.inf)})
        return records

    # ---- scoring -------------------------------------------------------------------------------
    def check_prediction(self, rec: dict, where: str) -> dict:
        require(rec, "guid", str, where)
        require(rec, "answer", str, where)
        if "best_span" in rec:
            require(rec, "best_span", str, where)
        return rec

    def compute_metrics(self, preds: list[dict], golds: list[Example]) -> dict[str, Any]:
        """EM and ROUGE-W (×100) over the questions, and per question type where the file has types. When every
        prediction also has `best_span` (the best span with the null answer never chosen, as `klue finetune`
        writes), `exact_match_forced` and `rouge_w_forced` score those: KorQuAD's own evaluation, which has no
        unanswerable questions and so never abstains, and a view of the span head apart from its null decision."""
        answers = [[a["text"] for a in g["answers"]] for g in golds]
        out = mrc_scores([p["answer"] for p in preds], answers, [g["question_type"] for g in golds])
        if preds and all("best_span" in p for p in preds):
            forced = mrc_scores([p["best_span"] for p in preds], answers)
            out["exact_match_forced"], out["rouge_w_forced"] = forced["exact_match"], forced["rouge_w"]
        return out

    def main_metric_stats(self, preds: list[dict], golds: list[Example]) -> ExampleStats | None:
        """ROUGE-W is the plain mean over questions of each question's score (`mrc_scores`)."""
        if self.main_metric != "rouge_w":
            return None
        return mean_stats([mrc_em_and_rouge_w(p["answer"], [a["text"] for a in g["answers"]])[1]
                           for p, g in zip(preds, golds, strict=True)])

    entry = TaskEntry("Machine reading comprehension (KLUE-MRC, spans + unanswerable)", ("exact_match", "rouge_w"),
                      "rouge_w", columns=(
        Column("exact_match", "MRC EM", klue_published(44.66, 27.48, 35.99, 48.28, 59.82, 62.32, 57.79, 68.52, 76.78)),
        Column("rouge_w", "MRC ROUGE", klue_published(55.92, 53.93, 66.77, 58.54, 66.05, 68.51, 63.78, 74.02, 81.43))))
