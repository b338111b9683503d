"""Precision, recall and F1 per PII type against gold spans (the format of `pii/ko_pii_eval_corpus.jsonl`:
`{"text", "spans": [{"label", "start", "end", "text"}]}`, character offsets, end exclusive).

Matching: a prediction is a true positive when it overlaps a not-yet-matched gold span of the same type
(one-to-one, greedy in text order). Overlap rather than exact offsets, because annotators disagree about
boundaries that do not matter for de-identification (the gold FAX spans include the word 팩스; some ACCOUNT
spans include the bank name). Exact-boundary matches are counted too and reported as `exact`.
Gold labels the detector does not target (AGE, DOC_ID, ...) are listed but left out of the overall scores.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from corpora.pii.types import ALL_TYPES, STRUCTURED_TYPES


def read_gold(path: Path) -> list[dict]:
    """Gold records; a malformed line is an error naming the file and line."""
    out = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                text = rec["text"]
                spans = [(int(s["start"]), int(s["end"]), str(s["label"])) for s in rec.get("spans", [])]
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
                raise ValueError(f"{path}:{i}: not a gold record ({type(err).__name__}: {err})") from err
            for s, e, lab in spans:
                if not 0 <= s < e <= len(text):
                    raise ValueError(f"{path}:{i}: span {s}-{e} ({lab}) outside the text of length {len(text)}")
            out.append({"text": text, "spans": spans})
    return out


def _prf(tp_p: int, n_pred: int, tp_g: int, n_gold: int) -> dict:
    p = tp_p / n_pred if n_pred else (1.0 if n_gold == 0 else 0.0)
    r = tp_g / n_gold if n_gold else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4),
            "support": n_gold, "predicted": n_pred, "tp": tp_g}


def score(gold_docs: Iterable[list[tuple[int, int, str]]],
          pred_docs: Iterable[list[tuple[int, int, str]]]) -> dict:
    """Scores from gold and predicted (start, end, type) lists, one list per document."""
    n_gold: Counter[str] = Counter()
    n_pred: Counter[str] = Counter()
    tp: Counter[str] = Counter()
    exact: Counter[str] = Counter()
    for gold, pred in zip(gold_docs, pred_docs, strict=True):
        used: set[int] = set()
        for lab in {g[2] for g in gold}:
            n_gold[lab] += sum(1 for g in gold if g[2] == lab)
        for ps, pe, pt in sorted(pred):
            n_pred[pt] += 1
            for gi, (gs, ge, gl) in enumerate(gold):
                if gi not in used and gl == pt and gs < pe and ps < ge:
                    used.add(gi)
                    tp[pt] += 1
                    exact[pt] += (gs, ge) == (ps, pe)
                    break
    per_type = {}
    for t in sorted(set(n_gold) | set(n_pred)):
        per_type[t] = _prf(tp[t], n_pred[t], tp[t], n_gold[t])
        per_type[t]["exact"] = exact[t]
        per_type[t]["targeted"] = t in ALL_TYPES

    def agg(types: Iterable[str]) -> dict:
        ts = list(types)
        return _prf(sum(tp[t] for t in ts), sum(n_pred[t] for t in ts), sum(tp[t] for t in ts),
                    sum(n_gold[t] for t in ts))

    return {"per_type": per_type, "overall": agg(ALL_TYPES), "structured": agg(STRUCTURED_TYPES),
            "untargeted_gold": {t: n_gold[t] for t in sorted(n_gold) if t not in ALL_TYPES}}


def evaluate_file(path: Path, detector=None) -> dict:
    from corpora.pii.engine import PiiDetector

    detector = detector or PiiDetector()
    docs = read_gold(path)
    preds = [[(s.start, s.end, s.type) for s in detector.detect(d["text"])] for d in docs]
    res = score([d["spans"] for d in docs], preds)
    res["documents"] = len(docs)
    return res


def format_table(res: dict) -> str:
    lines = [f"{'type':<20}{'precision':>10}{'recall':>9}{'f1':>8}{'support':>9}{'predicted':>11}{'exact':>7}"]
    for t, m in res["per_type"].items():
        if not m["targeted"]:
            continue
        lines.append(f"{t:<20}{m['precision']:>10.3f}{m['recall']:>9.3f}{m['f1']:>8.3f}{m['support']:>9}"
                     f"{m['predicted']:>11}{m['exact']:>7}")
    for name in ("structured", "overall"):
        m = res[name]
        lines.append(f"{name.upper():<20}{m['precision']:>10.3f}{m['recall']:>9.3f}{m['f1']:>8.3f}"
                     f"{m['support']:>9}{m['predicted']:>11}{'':>7}")
    if res.get("untargeted_gold"):
        lines.append("not targeted (gold only): " + ", ".join(f"{k}={v}" for k, v in res["untargeted_gold"].items()))
    return "\n".join(lines)


def klue_sentences(data_dir: Path) -> dict[str, list[str]]:
    """KLUE dev texts that KLUE already de-identified: NER sentences, NLI premises and hypotheses."""
    out: dict[str, list[str]] = {}
    ner = data_dir / "klue" / "ner" / "klue-ner-v1.1_dev.tsv"
    sents: list[str] = []
    cur: list[str] = []
    with open(ner, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("##"):
                continue
            if not line:
                if cur:
                    sents.append("".join(cur))
                    cur = []
                continue
            cur.append(line.split("\t", 1)[0] or " ")
    if cur:
        sents.append("".join(cur))
    out["ner"] = sents
    nli = json.loads((data_dir / "klue" / "nli" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))
    out["nli"] = [x["premise"] for x in nli] + [x["hypothesis"] for x in nli]
    return out


def structured_false_positives(sentences: list[str], detector=None) -> dict:
    """Share of sentences with any structured-identifier span (on de-identified text, all are false)."""
    from corpora.pii.engine import PiiDetector

    detector = detector or PiiDetector(types=list(STRUCTURED_TYPES))
    hit = 0
    per_type: Counter = Counter()
    examples: list[dict[str, Any]] = []
    for s in sentences:
        spans = [sp for sp in detector.detect(s) if sp.type in STRUCTURED_TYPES]
        if spans:
            hit += 1
            per_type.update(sp.type for sp in spans)
            if len(examples) < 20:
                examples.append({"text": s[:160], "spans": [(s[sp.start:sp.end], sp.type) for sp in spans]})
    return {"sentences": len(sentences), "with_structured_span": hit,
            "rate": round(hit / max(1, len(sentences)), 5), "per_type": dict(per_type), "examples": examples}
