"""KLUE-NER: character-level named entities (PS person, LC location, OG organisation, DT date, TI time,
QT quantity) in IOB2 tags, 13 labels; entity-level macro F1 and character-level macro F1.

Reference: KLUE-baseline `klue_baseline/data/klue_ner.py` (`KlueNERProcessor`: the label order below, the TSV
reader, "each whitespace-separated word is tokenized on its own and a subword takes the label of its first
character"), `klue_baseline/models/named_entity_recognition.py` (`NERTransformer`: an
`AutoModelForTokenClassification`; at evaluation a subword's predicted label goes to its first character and
the matching I- label to its other characters) and `klue_baseline/metrics/functional.py`
(`klue_ner_entity_macro_f1`, `klue_ner_char_macro_f1`: see `finetune.metrics`). `run_all.sh`: lr 5e-5 (the
script default), batch 32, 3 epochs, max length 510, no warmup (no --warmup_ratio), selects on
character_macro_f1.

Spaces. In the official files a space is a row of its own (`" <TAB>O"`, or `I-XX` inside an entity that spans
it). Spaces are never tokens and never scored: the official reader drops them before alignment and
evaluation, and so do we. A prediction record still carries one tag per character, spaces included, so it
lines up with the gold rows; any of the 13 tags is accepted on a space. Ours write `I-XX` on a space between
two characters of one predicted entity (as the gold files do) and O elsewhere.

Departures from KLUE-baseline (all in the README):
- Alignment by the fast tokenizer's character offsets, not by the lengths of the subword strings. The official
  code walks a character counter along `len(subword.replace("##", ""))`, and a word holding an [UNK] gives
  *every* subword of that word the label of the word's first character in training (and needs its
  `tokenizer_out_aligner` heuristics at evaluation); offsets give each subword, [UNK] included, its own first
  character, in training and at evaluation alike.
- [CLS], [SEP] and padding are left out of the loss (label -100) and batches are padded to their longest
  sentence. The official features pad every sentence to 510 positions and label [CLS], [SEP] and all padding
  O, so those positions are trained and the loss of the real characters is divided by 510 per sentence.
- The character scores leave out the two non-character positions per sentence the official evaluation adds
  ([CLS] and the last padded position, gold O); see `finetune.metrics.ner_char_macro_f1`.
- Characters past the truncation point (sentences over 508 subwords) are predicted O and scored; the official
  evaluation scores only the characters that fit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from finetune.example_stats import ExampleStats, fixed_macro_f1_stats, macro_f1_stats, per_class_counts
from finetune.metrics import ner_char_macro_f1, ner_entity_macro_f1
from finetune.records import Column, DataError, Example, Feature, TaskEntry, read_tsv_sentences, require
from finetune.tasks.base import IGNORE_INDEX, DataFiles, Hyperparams, Task, klue_published, token_classifier

# KLUE-baseline's label order (`KlueNERProcessor.get_labels`). The HF `klue`/`ner` copy uses B-DT, I-DT, B-LC, ...
NER_LABELS = ["B-PS", "I-PS", "B-LC", "I-LC", "B-OG", "I-OG", "B-DT", "I-DT", "B-TI", "I-TI", "B-QT", "I-QT", "O"]
_INDEX = {name: i for i, name in enumerate(NER_LABELS)}
ENTITY_TYPES = sorted({name[2:] for name in NER_LABELS if name != "O"})


def _inside(tag: str) -> str:
    """The tag of a character after the first one of a subword: the matching I- label (O stays O)."""
    return "O" if tag == "O" else "I-" + tag[2:]


def fill_spaces(text: str, tags: list[str]) -> list[str]:
    """Space characters take `I-XX` when they sit between two characters of one entity (the next non-space
    character continues the previous one's entity with `I-XX`), else O: the convention of the gold files.
    Spaces are not scored; this only makes prediction files read like gold files."""
    out = list(tags)
    prev = "O"
    for i, ch in enumerate(text):
        if ch != " ":
            prev = out[i]
            continue
        nxt = next((out[j] for j in range(i + 1, len(text)) if text[j] != " "), "O")
        out[i] = nxt if nxt.startswith("I-") and prev != "O" and prev[2:] == nxt[2:] else "O"
    return out


def scored_tags(preds: list[dict], golds: list[Example]) -> tuple[list[list[str]], list[list[str]]]:
    """Gold and predicted tag names per sentence, over its non-space characters: what the metrics score."""
    gold_sents, pred_sents = [], []
    for p, g in zip(preds, golds, strict=True):
        keep = [i for i, ch in enumerate(g["text"]) if ch != " "]
        gold_sents.append([NER_LABELS[g["tags"][i]] for i in keep])
        pred_sents.append([p["tags"][i] for i in keep])
    return gold_sents, pred_sents


def entity_counts(pred_tags: list[list[str]], gold_tags: list[list[str]]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per sentence and entity type (`ENTITY_TYPES`), the TP / FP / FN of `ner_entity_macro_f1`: entities as
    seqeval extracts them (strict IOB2, `seqeval.scheme.Entities`), a TP an exact span and type on both sides.
    Counting per sentence is exact: that metric puts an O between sentences, so no entity spans two."""
    from seqeval.scheme import IOB2, Entities

    gold, pred = Entities(gold_tags, IOB2).entities, Entities(pred_tags, IOB2).entities
    column = {t: j for j, t in enumerate(ENTITY_TYPES)}
    tp, fp, fn = (np.zeros((len(gold), len(ENTITY_TYPES))) for _ in range(3))
    for i, (g, p) in enumerate(zip(gold, pred, strict=True)):
        gs, ps = {e.to_tuple() for e in g}, {e.to_tuple() for e in p}
        for counts, found in ((tp, gs & ps), (fp, ps - gs), (fn, gs - ps)):
            for _, tag, _, _ in found:
                counts[i, column[tag]] += 1
    return tp, fp, fn


class NerTask(Task):
    name: ClassVar[str] = "ner"
    defaults: ClassVar[Hyperparams] = Hyperparams(learning_rate=5e-5, batch_size=32, max_length=510, epochs=3,
                                                  warmup_ratio=0.0)
    files: ClassVar[DataFiles] = DataFiles("ner", "klue-ner-v1*_train.tsv", "klue-ner-v1*_dev.tsv", "ner")
    labels: ClassVar[list[str]] = NER_LABELS

    # ---- reading -------------------------------------------------------------------------------
    def read_file(self, path: Path) -> list[Example]:
        """The official TSV: `## GUID<TAB>tagged sentence`, then one `CHAR<TAB>NE_TAG` row per character."""
        return [self.parse_record({"guid": s.guid, "chars": [r[0] for r in s.rows], "tags": [r[1] for r in s.rows],
                                   "_where": [f"{path}:{n}" for n in s.lines]}, f"{path}:{s.header_line}")
                for s in read_tsv_sentences(path, 2)]

    def parse_record(self, rec: dict, where: str) -> Example:
        """{"guid", "chars": [one character each], "tags": [one tag each]} -> {"guid", "text", "tags": ids}.
        Errors name the line of the character (official TSV) or its position (HF copy)."""
        guid = require(rec, "guid", str, where)
        chars = require(rec, "chars", list, where)
        tags = require(rec, "tags", list, where)
        if len(chars) != len(tags):
            raise DataError(f"{where} (guid {guid}): {len(chars)} characters but {len(tags)} tags")
        if not chars:
            raise DataError(f"{where} (guid {guid}): a sentence without characters")
        at = rec.get("_where") or [f"{where} (guid {guid}), character {i}" for i in range(len(chars))]
        ids = []
        for i, (ch, tag) in enumerate(zip(chars, tags, strict=True)):
            if not isinstance(ch, str) or len(ch) != 1:
                raise DataError(f"{at[i]}: field CHAR should be exactly one character, got {ch!r}")
            if tag not in _INDEX:
                raise DataError(f"{at[i]}: field NE_TAG has unknown tag {tag!r} (expected one of {NER_LABELS})")
            ids.append(_INDEX[tag])
        return {"guid": guid, "text": "".join(chars), "tags": ids}

    def from_hf(self, row: dict, features: Any) -> dict:
        """HF `klue`/`ner`: `tokens` (the characters, spaces included, as in the TSV rows) and `ner_tags`
        (ClassLabel ids in HF's own order, mapped back to names here)."""
        chars = row.get("tokens", row.get("char"))
        key = "ner_tags" if "ner_tags" in row else "ne_tag"
        tags = row.get(key)
        feat = features[key] if key in features else None
        names = getattr(getattr(feat, "feature", None), "names", None)
        if names is not None and isinstance(tags, list):
            tags = [names[t] if isinstance(t, int) else t for t in tags]
        rec = {"chars": chars, "tags": tags}
        if "guid" in row:
            rec["guid"] = row["guid"]
        return rec

    # ---- features and model --------------------------------------------------------------------
    def encode(self, examples: list[Example], tokenizer: Any, max_length: int) -> list[Feature]:
        """Each space-separated word tokenized on its own (`is_split_into_words`); a subword's label is the tag
        of its first character, found through the tokenizer's offsets. Features keep each subword's character
        span (`_spans`) for `predictions`."""
        words = [ex["text"].split(" ") for ex in examples]
        enc = tokenizer(words, is_split_into_words=True, truncation=True, max_length=max_length,
                        return_offsets_mapping=True)
        feats = []
        for i, ex in enumerate(examples):
            starts, pos = [], 0
            for w in words[i]:
                starts.append(pos)
                pos += len(w) + 1
            labels: list[int] = []
            spans: list[tuple[int, int] | None] = []
            for w_id, (s, e) in zip(enc.word_ids(i), enc["offset_mapping"][i], strict=True):
                if w_id is None or e <= s:
                    labels.append(IGNORE_INDEX)
                    spans.append(None)
                    continue
                c0, c1 = starts[w_id] + s, starts[w_id] + e
                labels.append(ex["tags"][c0])
                spans.append((c0, c1))
            feats.append({"input_ids": enc["input_ids"][i], "attention_mask": enc["attention_mask"][i],
                          "labels": labels, "example_index": i, "_spans": spans})
        return feats

    def build_model(self, model_dir: Path, tokenizer: Any, random_init: bool,
                    hp: Hyperparams | None = None) -> Any:
        return token_classifier(model_dir, tokenizer, random_init, NER_LABELS)

    def collator(self, tokenizer: Any) -> Any:
        from transformers import DataCollatorForTokenClassification

        return DataCollatorForTokenClassification(tokenizer, label_pad_token_id=IGNORE_INDEX)

    def eval_outputs(self, model: Any, batch: dict) -> Any:
        """The predicted label id per subword (argmax of the logits): all `predictions` needs, 13x smaller."""
        return model(**batch).logits.argmax(dim=-1)

    def predictions(self, outputs: np.ndarray, features: list[Feature], examples: list[Example]) -> list[dict]:
        """Subword labels -> one tag per character: a subword's label on its first character, the matching I-
        label on its other characters (`NERTransformer.validation_epoch_end`); characters no subword covers
        (past the truncation point, or dropped by the tokenizer) are O; spaces as `fill_spaces`."""
        out = np.asarray(outputs)
        records = []
        for f, row in zip(features, out, strict=True):
            ex = examples[f["example_index"]]
            tags = ["O"] * len(ex["text"])
            for j, span in enumerate(f["_spans"]):
                if span is None or j >= len(row) or int(row[j]) == IGNORE_INDEX:
                    continue
                tag = NER_LABELS[int(row[j])]
                c0, c1 = span
                tags[c0] = tag
                for c in range(c0 + 1, c1):
                    tags[c] = _inside(tag)
            records.append({"guid": ex["guid"], "tags": fill_spaces(ex["text"], tags)})
        return records

    # ---- scoring -------------------------------------------------------------------------------
    def check_prediction(self, rec: dict, where: str) -> dict:
        require(rec, "guid", str, where)
        tags = require(rec, "tags", list, where)
        self.require_labels(tags, NER_LABELS, "tags", "a KLUE-NER tag", where)
        return rec

    def check_aligned(self, rec: dict, gold: Example, where: str) -> None:
        n, m = len(rec["tags"]), len(gold["text"])
        if n != m:
            raise DataError(f"{where}: field 'tags' has {n} tags but sentence {gold['guid']} has {m} characters "
                            "(one tag per character, spaces included)")

    def compute_metrics(self, preds: list[dict], golds: list[Example]) -> dict[str, Any]:
        """Entity macro F1 and character macro F1 (with and without O) over the non-space characters."""
        gold_sents, pred_sents = scored_tags(preds, golds)
        flat_gold = [t for s in gold_sents for t in s]
        flat_pred = [t for s in pred_sents for t in s]
        return {"entity_macro_f1": ner_entity_macro_f1(pred_sents, gold_sents),
                "character_macro_f1": ner_char_macro_f1(flat_pred, flat_gold, NER_LABELS),
                "character_macro_f1_without_o": ner_char_macro_f1(flat_pred, flat_gold, NER_LABELS,
                                                                  include_o=False)}

    def main_metric_stats(self, preds: list[dict], golds: list[Example]) -> ExampleStats | None:
        """Character macro F1 (the main metric): per sentence, TP / FP / FN of each of the 13 labels over its
        non-space characters; the label set is fixed and a label absent from the resample scores 1
        (`ner_char_macro_f1`: zero_division=1). Entity macro F1, were it the main metric: `entity_counts`."""
        gold_sents, pred_sents = scored_tags(preds, golds)
        if self.main_metric == "entity_macro_f1":
            return macro_f1_stats(*entity_counts(pred_sents, gold_sents))
        if self.main_metric != "character_macro_f1":
            return None
        sentence = np.repeat(np.arange(len(gold_sents)), [len(s) for s in gold_sents])
        flat_gold = [t for s in gold_sents for t in s]
        flat_pred = [t for s in pred_sents for t in s]
        return fixed_macro_f1_stats(*per_class_counts(flat_gold, flat_pred, NER_LABELS, sentence, len(golds)),
                                    zero_division=1.0)

    # KLUE's "entity F1" / "char F1" are KLUE-baseline's `entity_macro_f1` / `character_macro_f1`; the char F1
    # without O is ours, beside them (no published scores).
    entry = TaskEntry("Named entity recognition (KLUE-NER, character level)",
                      ("entity_macro_f1", "character_macro_f1", "character_macro_f1_without_o"), "character_macro_f1",
                      columns=(
        Column("entity_macro_f1", "NER entity F1", klue_published(75.14, 80.73, 81.81, 75.37, 86.82, 84.77, 84.99, 85.13, 85.79)),
        Column("character_macro_f1", "NER char F1", klue_published(87.51, 91.37, 92.49, 90.42, 92.79, 91.28, 91.10, 91.52, 91.77)),
        Column("character_macro_f1_without_o", "NER char F1 w/o O")))
