"""KLUE-DP: dependency parsing over eojeols (space-separated words): a head (0 = ROOT) and one of 38
DEPREL labels per eojeol; UAS and LAS, micro and macro F1.

Reference: KLUE-baseline `klue_baseline/data/klue_dp.py` (`KlueDPProcessor`: the TSV columns INDEX,
WORD_FORM, LEMMA, POS, HEAD, DEPREL; the input is the word forms joined by spaces; an eojeol's POS is the last
tag of its `+`-joined POS; `get_dep_labels` and `get_pos_labels` give the label orders below; `collate_fn`
builds the word masks), `klue_baseline/models/dependency_parsing.py` (`DPTransformer`: the head, see
`finetune.dp_model`) and `klue_baseline/metrics/functional.py` (`klue_dp_uas_macro_f1`,
`klue_dp_uas_micro_f1`, `klue_dp_las_macro_f1`, `klue_dp_las_micro_f1`: see `finetune.metrics`).
`run_all.sh` (base/small models): lr 5e-5, batch 32, 10 epochs, warmup 0.1, max length 256, selects on
las_macro_f1.

Departures from KLUE-baseline (all in the README):
- Subwords are mapped to eojeols by the fast tokenizer's `word_ids` over the eojeols (`is_split_into_words`),
  not by re-tokenizing each eojeol and assuming the pieces add up to the sentence's tokenization.
- An eojeol that tokenizes to nothing (only characters the tokenizer drops) is fed as the tokenizer's unknown
  token, so every eojeol has a state; the baseline's masks would lose it and shift every later word.
- Truncation (sentences over max length): eojeols with no subword left are not seen by the model and are
  predicted head 0 with label NP (label id 0), and scored; a kept eojeol whose gold head was cut off is left
  out of the loss. The baseline scores only the kept eojeols and leaves such a head pointing past the end.
- At evaluation the head argmax is over the sentence's own positions (see `finetune.dp_model`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from finetune.example_stats import ExampleStats, macro_f1_stats, per_class_counts
from finetune.metrics import _las_classes, dp_las_macro_f1, dp_las_micro_f1, dp_uas_macro_f1, dp_uas_micro_f1
from finetune.records import Column, DataError, Example, Feature, TaskEntry, read_tsv_sentences, require
from finetune.tasks.base import IGNORE_INDEX, DataFiles, Hyperparams, Task, klue_published, load_encoder

# KLUE-baseline's orders (`get_dep_labels`, `get_pos_labels`). LAS merges DEPREL ids >= 15 ("VP_CMP" on).
DEP_LABELS = ["NP", "NP_AJT", "VP", "NP_SBJ", "VP_MOD", "NP_OBJ", "AP", "NP_CNJ", "NP_MOD", "VNP", "DP", "VP_AJT",
              "VNP_MOD", "NP_CMP", "VP_SBJ", "VP_CMP", "VP_OBJ", "VNP_CMP", "AP_MOD", "X_AJT", "VP_CNJ", "VNP_AJT",
              "IP", "X", "X_SBJ", "VNP_OBJ", "VNP_SBJ", "X_OBJ", "AP_AJT", "L", "X_MOD", "X_CNJ", "VNP_CNJ", "X_CMP",
              "AP_CMP", "AP_SBJ", "R", "NP_SVJ"]
POS_LABELS = ["NNG", "NNP", "NNB", "NP", "NR", "VV", "VA", "VX", "VCP", "VCN", "MMA", "MMD", "MMN", "MAG", "MAJ",
              "JC", "IC", "JKS", "JKC", "JKG", "JKO", "JKB", "JKV", "JKQ", "JX", "EP", "EF", "EC", "ETN", "ETM",
              "XPN", "XSN", "XSV", "XSA", "XR", "SF", "SP", "SS", "SE", "SO", "SL", "SH", "SW", "SN", "NA"]
_DEP = {name: i for i, name in enumerate(DEP_LABELS)}
_POS = {name: i for i, name in enumerate(POS_LABELS)}
TRUNCATED_HEAD, TRUNCATED_LABEL = 0, DEP_LABELS[0]  # the prediction for eojeols cut off by truncation
COLUMNS = ("INDEX", "WORD_FORM", "LEMMA", "POS", "HEAD", "DEPREL")


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _heads_and_labels(preds: list[dict], golds: list[Example]) -> tuple[list, list, list, list]:
    """Predicted and gold heads, predicted and gold DEPREL ids, one list per sentence: what the metrics read."""
    return ([p["heads"] for p in preds], [g["heads"] for g in golds],
            [[_DEP[d] for d in p["deprels"]] for p in preds], [g["deprels"] for g in golds])


class DpCollator:
    """Pads a batch: subword ids with the pad id, word-level fields to the longest sentence (`word_mask` says
    which words are real; POS padding is the ROOT/padding index 45; heads and labels IGNORE_INDEX)."""

    def __init__(self, pad_token_id: int) -> None:
        self.pad_token_id = pad_token_id

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        n_tok = max(len(f["input_ids"]) for f in features)
        n_word = max(len(f["word_first"]) for f in features)

        def pad(key: str, length: int, value: int) -> torch.Tensor:
            return torch.tensor([list(f[key]) + [value] * (length - len(f[key])) for f in features], dtype=torch.long)

        batch = {"input_ids": pad("input_ids", n_tok, self.pad_token_id), "attention_mask": pad("attention_mask", n_tok, 0),
                 "word_first": pad("word_first", n_word, 0), "word_last": pad("word_last", n_word, 0),
                 "word_mask": torch.tensor([[1] * len(f["word_first"]) + [0] * (n_word - len(f["word_first"]))
                                            for f in features], dtype=torch.long),
                 "pos_ids": pad("pos_ids", n_word, len(POS_LABELS))}
        if "heads" in features[0]:
            batch["heads"] = pad("heads", n_word, IGNORE_INDEX)
            batch["deprels"] = pad("deprels", n_word, IGNORE_INDEX)
        return batch


class DpTask(Task):
    name: ClassVar[str] = "dp"
    defaults: ClassVar[Hyperparams] = Hyperparams(learning_rate=5e-5, batch_size=32, max_length=256, epochs=10,
                                                  warmup_ratio=0.1, patience=None)  # run_all.sh:57 --patience 10000
    files: ClassVar[DataFiles] = DataFiles("dp", "klue-dp-v1*_train.tsv", "klue-dp-v1*_dev.tsv", "dp")
    labels: ClassVar[list[str]] = DEP_LABELS

    # ---- reading -------------------------------------------------------------------------------
    def read_file(self, path: Path) -> list[Example]:
        """The official TSV: `## GUID<TAB>sentence`, then one row per eojeol with the six columns above."""
        out = []
        for s in read_tsv_sentences(path, len(COLUMNS)):
            cols = list(zip(*s.rows, strict=True))
            rec = {"guid": s.guid, "sentence": s.text, "index": list(cols[0]), "words": list(cols[1]),
                   "lemmas": list(cols[2]), "pos": list(cols[3]), "heads": list(cols[4]), "deprels": list(cols[5]),
                   "_where": [f"{path}:{n}" for n in s.lines]}
            out.append(self.parse_record(rec, f"{path}:{s.header_line}"))
        return out

    def parse_record(self, rec: dict, where: str) -> Example:
        """{"guid", "index", "words", "pos", "heads", "deprels"} (lists, one entry per eojeol) -> an example with
        POS ids of the last tag, heads as ints, DEPREL ids. Errors name the line (TSV) or the eojeol (HF) and the
        column."""
        guid = require(rec, "guid", str, where)
        fields = {key: require(rec, key, list, where) for key in ("index", "words", "pos", "heads", "deprels")}
        n = len(fields["words"])
        if n == 0:
            raise DataError(f"{where} (guid {guid}): a sentence without eojeols")
        if any(len(v) != n for v in fields.values()):
            raise DataError(f"{where} (guid {guid}): columns of different lengths "
                            f"({', '.join(f'{k} {len(v)}' for k, v in fields.items())})")
        at = rec.get("_where") or [f"{where} (guid {guid}), eojeol {i + 1}" for i in range(n)]
        pos, heads, deprels = [], [], []
        for i in range(n):
            index = _as_int(fields["index"][i])
            if index != i + 1:
                raise DataError(f"{at[i]}: field INDEX is {fields['index'][i]!r}, expected {i + 1} "
                                "(eojeols are numbered 1, 2, ... in order)")
            word = fields["words"][i]
            if not isinstance(word, str) or not word or " " in word:
                raise DataError(f"{at[i]}: field WORD_FORM should be one eojeol (non-empty, no space), got {word!r}")
            tags = fields["pos"][i]
            last = tags.split("+")[-1] if isinstance(tags, str) else None
            if last not in _POS:
                raise DataError(f"{at[i]}: field POS {tags!r}: its last tag {last!r} is not a KLUE POS tag "
                                f"(expected one of {POS_LABELS})")
            head = _as_int(fields["heads"][i])
            if head is None or not 0 <= head <= n:
                raise DataError(f"{at[i]}: field HEAD is {fields['heads'][i]!r}, expected an eojeol index in 0..{n} "
                                "(0 = ROOT)")
            label = fields["deprels"][i]
            if label not in _DEP:
                raise DataError(f"{at[i]}: field DEPREL has unknown label {label!r} (expected one of {DEP_LABELS})")
            pos.append(_POS[last])
            heads.append(head)
            deprels.append(_DEP[label])
        return {"guid": guid, "words": list(fields["words"]), "pos": pos, "heads": heads, "deprels": deprels}

    def from_hf(self, row: dict, features: Any) -> dict:
        """HF `klue`/`dp`: `index`, `word_form`, `lemma`, `pos`, `head`, `deprel` lists (DEPREL as names; ids
        of a ClassLabel copy are mapped back to names)."""
        deprels = row.get("deprel")
        names = getattr(getattr(features.get("deprel") if hasattr(features, "get") else None, "feature", None),
                        "names", None)
        if names is not None and isinstance(deprels, list):
            deprels = [names[d] if isinstance(d, int) else d for d in deprels]
        rec = {"index": row.get("index"), "words": row.get("word_form"), "lemmas": row.get("lemma"),
               "pos": row.get("pos"), "heads": row.get("head"), "deprels": deprels, "sentence": row.get("sentence")}
        if "guid" in row:
            rec["guid"] = row["guid"]
        return rec

    # ---- features and model --------------------------------------------------------------------
    def encode(self, examples: list[Example], tokenizer: Any, max_length: int) -> list[Feature]:
        """The eojeols tokenized as one sentence (`is_split_into_words`); per eojeol the positions of its first
        and last subword, its POS id, gold head and label. Eojeols past the truncation point are not part of the
        feature (`predictions` fills them in); gold heads pointing at them are IGNORE_INDEX."""
        words = [list(ex["words"]) for ex in examples]
        enc = tokenizer(words, is_split_into_words=True, truncation=True, max_length=max_length)
        fixed = []
        for i in range(len(examples)):  # an eojeol with no subword at all becomes the unknown token
            seen = {w for w in enc.word_ids(i) if w is not None}
            # unseen eojeols before a seen one tokenized to nothing; after the last seen one, they did too
            # unless the sentence was cut at max length (then they are truncated)
            full = len(enc["input_ids"][i]) < max_length
            upto = len(words[i]) if full else max(seen, default=-1)
            missing = [k for k in range(upto) if k not in seen]
            if missing:
                words[i] = [tokenizer.unk_token if k in missing else w for k, w in enumerate(words[i])]
                fixed.append(i)
        if fixed:
            again = tokenizer([words[i] for i in fixed], is_split_into_words=True, truncation=True,
                              max_length=max_length)
        feats = []
        for i, ex in enumerate(examples):
            source, row = (again, fixed.index(i)) if i in fixed else (enc, i)
            first: dict[int, int] = {}
            last: dict[int, int] = {}
            for t, w in enumerate(source.word_ids(row)):
                if w is not None:
                    first.setdefault(w, t)
                    last[w] = t
            kept = len(first)
            if kept == 0:
                raise DataError(f"guid {ex['guid']}: no eojeol fits in max length {max_length}")
            if sorted(first) != list(range(kept)):
                raise RuntimeError(f"guid {ex['guid']}: eojeols without subwords remain after the [UNK] fix")
            heads = [h if h <= kept else IGNORE_INDEX for h in ex["heads"][:kept]]
            feats.append({"input_ids": source["input_ids"][row], "attention_mask": source["attention_mask"][row],
                          "word_first": [first[k] for k in range(kept)], "word_last": [last[k] for k in range(kept)],
                          "pos_ids": ex["pos"][:kept], "heads": heads, "deprels": ex["deprels"][:kept],
                          "example_index": i})
        return feats

    def build_model(self, model_dir: Path, tokenizer: Any, random_init: bool,
                    hp: Hyperparams | None = None) -> Any:
        """`AutoModel` (safetensors, fp32; fresh weights of the same shape with `random_init`) under the
        biaffine head of `finetune.dp_model`."""
        # lazy: torch (the parser's module)
        from finetune.dp_model import DependencyParser, ParserConfig

        encoder = load_encoder(Path(model_dir), tokenizer, random_init)
        return DependencyParser(encoder, ParserConfig(n_pos=len(POS_LABELS), n_labels=len(DEP_LABELS)),
                                DEP_LABELS, POS_LABELS)

    def load_finetuned(self, directory: Path) -> Any:
        """The parser a run saved (`DependencyParser.from_pretrained`: the encoder's architecture from its
        config.json, the head from parser.json, every weight from model.safetensors)."""
        # lazy: torch (the parser's module)
        from finetune.dp_model import DependencyParser

        return DependencyParser.from_pretrained(directory)

    def collator(self, tokenizer: Any) -> Any:
        return DpCollator(tokenizer.pad_token_id)

    def eval_outputs(self, model: Any, batch: dict) -> Any:
        """(batch, words, 2): predicted head and label id per eojeol; IGNORE_INDEX on padding."""
        import torch

        out = model(**batch)
        return torch.stack([out.pred_heads, out.pred_labels], dim=-1)

    def predictions(self, outputs: np.ndarray, features: list[Feature], examples: list[Example]) -> list[dict]:
        out = np.asarray(outputs)
        records = []
        for f, row in zip(features, out, strict=True):
            ex = examples[f["example_index"]]
            kept = len(f["word_first"])
            heads = [int(h) for h in row[:kept, 0]]
            labels = [DEP_LABELS[int(k)] for k in row[:kept, 1]]
            missing = len(ex["words"]) - kept
            records.append({"guid": ex["guid"], "heads": heads + [TRUNCATED_HEAD] * missing,
                            "deprels": labels + [TRUNCATED_LABEL] * missing})
        return records

    # ---- scoring -------------------------------------------------------------------------------
    def check_prediction(self, rec: dict, where: str) -> dict:
        require(rec, "guid", str, where)
        heads = require(rec, "heads", list, where)
        deprels = require(rec, "deprels", list, where)
        if len(heads) != len(deprels):
            raise DataError(f"{where}: fields 'heads' ({len(heads)}) and 'deprels' ({len(deprels)}) differ in length "
                            "(one of each per eojeol)")
        for i, h in enumerate(heads):
            if isinstance(h, bool) or not isinstance(h, int) or h < 0:
                raise DataError(f"{where}: field 'heads'[{i}] = {h!r} should be an eojeol index >= 0 (0 = ROOT)")
        self.require_labels(deprels, DEP_LABELS, "deprels", "a KLUE-DP label", where)
        return rec

    def check_aligned(self, rec: dict, gold: Example, where: str) -> None:
        n = len(gold["words"])
        if len(rec["heads"]) != n:
            raise DataError(f"{where}: field 'heads' has {len(rec['heads'])} entries but sentence {gold['guid']} has "
                            f"{n} eojeols")
        for i, h in enumerate(rec["heads"]):
            if h > n:
                raise DataError(f"{where}: field 'heads'[{i}] = {h} is out of range: sentence {gold['guid']} has "
                                f"{n} eojeols (heads are 0..{n}, 0 = ROOT)")

    def compute_metrics(self, preds: list[dict], golds: list[Example]) -> dict[str, Any]:
        ph, gh, pl, gl = _heads_and_labels(preds, golds)
        return {"uas_macro_f1": dp_uas_macro_f1(ph, gh), "las_macro_f1": dp_las_macro_f1(ph, gh, pl, gl),
                "uas_micro_f1": dp_uas_micro_f1(ph, gh), "las_micro_f1": dp_las_micro_f1(ph, gh, pl, gl)}

    def main_metric_stats(self, preds: list[dict], golds: list[Example]) -> ExampleStats | None:
        """LAS macro F1: each word's (gold, predicted) class after the "others" merge and the wrong-head filler
        (`finetune.metrics._las_classes`), counted per sentence and class; a class enters the mean where it
        occurs in gold or predictions of the resample (sklearn's label set, zero_division 0)."""
        if self.main_metric != "las_macro_f1":
            return None
        ph, gh, pl, gl = _heads_and_labels(preds, golds)
        gold, pred = _las_classes(ph, gh, pl, gl)
        sentence = np.repeat(np.arange(len(gh)), [len(h) for h in gh])
        return macro_f1_stats(*per_class_counts(gold, pred, np.union1d(gold, pred).tolist(), sentence, len(gh)))

    # KLUE's "UAS" / "LAS" are the macro-F1 variants, the ones `run_all.sh` selects checkpoints on.
    entry = TaskEntry("Dependency parsing (KLUE-DP, eojeol level)",
                      ("uas_macro_f1", "las_macro_f1", "uas_micro_f1", "las_micro_f1"), "las_macro_f1", columns=(
        Column("uas_macro_f1", "DP UAS", klue_published(90.30, 89.20, 92.71, 89.92, 92.90, 92.14, 89.32, 90.31, 93.32)),
        Column("las_macro_f1", "DP LAS", klue_published(86.66, 87.69, 88.70, 87.48, 87.77, 87.77, 87.74, 88.30, 88.72))))
