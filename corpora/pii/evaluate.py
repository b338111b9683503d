"""Precision, recall and F1 per PII type against gold spans (the format of `pii/ko_pii_eval_corpus.jsonl`:
`{"text", "spans": [{"label", "start", "end", "text"}]}`, character offsets, end exclusive).

Two match rules, both reported:
- **overlap**: a prediction is a true positive when it overlaps a not-yet-matched gold span of the same type
  (one-to-one, greedy in text order). Overlap rather than exact offsets, because annotators disagree about
  boundaries that do not matter for de-identification (the gold FAX spans include the word 팩스; some ACCOUNT
  spans include the bank name). Exact-boundary matches are counted too and reported as `exact`.
- **cover**: a gold span is recalled when predictions of its type cover at least `COVER` (80 %) of its
  characters; a prediction is correct when it overlaps a gold span of its type. This is the rule that matters
  for an address: a span that stops at the building number leaves the detail part (동, 층, 호) in the text.
`precision_any` (the share of predicted spans that overlap any gold span, whatever its label) is what "not a
false alarm" means for replacement. Gold labels the detector does not target (AGE, DOC_ID, ...) are listed but
left out of the overall scores.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from corpora.pii.resolve import Span, resolve_overlaps
from corpora.pii.types import (
    ALL_TYPES,
    PACKS,
    STRUCTURED_TYPES,
    default_types,
    pack_facts,
    structured_types,
)

# The `structured` row: every language's structured types, in registry order (a detector targets only its own
# language's types, so each language's row is its own).
_STRUCTURED_ANY = structured_types()


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


COVER = 0.8


def _covered(g: tuple[int, int, str], preds: list[tuple[int, int, str]]) -> float:
    """Share of gold span `g`'s characters inside predictions of its type (their union)."""
    gs, ge, gl = g
    chars: set[int] = set()
    for ps, pe, pt in preds:
        if pt == gl and ps < ge and gs < pe:
            chars.update(range(max(gs, ps), min(ge, pe)))
    return len(chars) / (ge - gs)


def score(gold_docs: Iterable[list[tuple[int, int, str]]],
          pred_docs: Iterable[list[tuple[int, int, str]]], targeted: Iterable[str] = ALL_TYPES) -> dict:
    """Scores from gold and predicted (start, end, type) lists, one list per document. `targeted`: the types
    the detector was asked for (the overall scores and the `targeted` flags follow it)."""
    targeted = tuple(targeted)
    n_gold: Counter[str] = Counter()
    n_pred: Counter[str] = Counter()
    tp: Counter[str] = Counter()
    exact: Counter[str] = Counter()
    cover_g: Counter[str] = Counter()  # gold spans covered >= COVER by same-type predictions
    cover_p: Counter[str] = Counter()  # predictions overlapping a same-type gold span
    any_p: Counter[str] = Counter()  # predictions overlapping any gold span
    for gold, pred in zip(gold_docs, pred_docs, strict=True):
        used: set[int] = set()
        for g in gold:
            n_gold[g[2]] += 1
            cover_g[g[2]] += _covered(g, pred) >= COVER
        for ps, pe, pt in sorted(pred):
            n_pred[pt] += 1
            cover_p[pt] += any(gl == pt and gs < pe and ps < ge for gs, ge, gl in gold)
            any_p[pt] += any(gs < pe and ps < ge for gs, ge, _ in gold)
            for gi, (gs, ge, gl) in enumerate(gold):
                if gi not in used and gl == pt and gs < pe and ps < ge:
                    used.add(gi)
                    tp[pt] += 1
                    exact[pt] += (gs, ge) == (ps, pe)
                    break

    def prf(ts: list[str]) -> dict:
        out = _prf(sum(tp[t] for t in ts), sum(n_pred[t] for t in ts), sum(tp[t] for t in ts),
                   sum(n_gold[t] for t in ts))
        c = _prf(sum(cover_p[t] for t in ts), sum(n_pred[t] for t in ts), sum(cover_g[t] for t in ts),
                 sum(n_gold[t] for t in ts))
        out.update({"precision_cover": c["precision"], "recall_cover": c["recall"], "f1_cover": c["f1"]})
        n = sum(n_pred[t] for t in ts)
        out["precision_any"] = round(sum(any_p[t] for t in ts) / n, 4) if n else 1.0
        return out

    per_type = {}
    for t in sorted(set(n_gold) | set(n_pred)):
        per_type[t] = prf([t])
        per_type[t]["exact"] = exact[t]
        per_type[t]["targeted"] = t in targeted
    return {"per_type": per_type, "overall": prf(list(targeted)),
            "structured": prf([t for t in _STRUCTURED_ANY if t in targeted]),
            "untargeted_gold": {t: n_gold[t] for t in sorted(n_gold) if t not in targeted}}


def evaluate_file(path: Path, detector) -> dict:
    """Scores of `detector` (anything with `detect(text) -> spans with start, end, type` and an `entities`
    list: a `PiiDetector` of the file's language) on a gold file, and its throughput there: CPU seconds of this process
    for the whole file after one warm-up document (what loads lazily, MeCab or compiled patterns, is not
    counted), documents and MB (UTF-8) a second."""
    docs = read_gold(path)
    if docs:
        detector.detect(docs[0]["text"])
    t0 = time.process_time()
    preds = [[(s.start, s.end, s.type) for s in detector.detect(d["text"])] for d in docs]
    cpu = max(time.process_time() - t0, 1e-9)
    res = score([d["spans"] for d in docs], preds, targeted=detector.entities)
    res["documents"] = len(docs)
    mb = sum(len(d["text"].encode()) for d in docs) / 1e6
    res["throughput"] = {"cpu_s": round(cpu, 3), "docs_per_s": round(len(docs) / cpu, 1),
                         "mb_per_s": round(mb / cpu, 3)}
    return res


# What presidio's own predefined recognizers call our types. Presidio ships Korean RRN/FRN/BRN/driver's
# licence/passport recognizers (country_specific/korea) and language-independent e-mail, phone, card, IP and URL
# ones; it has nothing for names without an NER model, addresses, accounts or the other Korean numbers.
PRESIDIO_TYPES = {"KR_RRN": "RRN", "KR_FRN": "FRN", "KR_BRN": "BUSINESS_REG", "KR_DRIVER_LICENSE": "DRIVER_LICENSE",
                  "KR_PASSPORT": "PASSPORT", "EMAIL_ADDRESS": "EMAIL", "PHONE_NUMBER": "PHONE",
                  "CREDIT_CARD": "CARD", "IP_ADDRESS": "IP", "URL": "URL"}


class PresidioShipped:
    """Presidio's predefined recognizers as shipped (their patterns, context words and scores), as the
    baseline of `klue pii eval --baseline presidio`: the country-specific ones the language's pack names
    (`PackFacts.presidio_recognizers`: Korea's five; presidio ships nothing Japan-specific), and the generic ones
    with their language set to the pack's; the phone recognizer with the pack's region (KR, JP) added to its
    default regions (without it no Korean number parses), the e-mail one with tldextract's bundled suffix list.
    Offline: `NoOpNlpEngine`, presidio's default context enhancer (which finds no lemmas in Korean or Japanese,
    so context words have no effect: that is how presidio ships for a language without a model)."""

    def __init__(self, threshold: float = 0.4, *, language: str):
        import tldextract
        from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
        from presidio_analyzer import predefined_recognizers as pr
        from presidio_analyzer.nlp_engine import NoOpNlpEngine

        # presidio's e-mail check calls tldextract, whose first call downloads the public suffix list; the same
        # check on the list that tldextract ships (no download), as everything here must run offline
        offline_tld = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)

        class OfflineEmailRecognizer(pr.EmailRecognizer):
            def validate_result(self, pattern_text: str) -> bool:
                return offline_tld(pattern_text).fqdn != ""

        lang = language
        try:
            facts = pack_facts(lang)
        except ValueError:
            raise ValueError(f"no presidio baseline for language {lang!r}; known: {', '.join(PACKS)}") from None
        phone = pr.PhoneRecognizer(supported_language=lang,
                                   supported_regions=(*pr.PhoneRecognizer.DEFAULT_SUPPORTED_REGIONS,
                                                      facts.presidio_region))
        recs = [*(getattr(pr, name)() for name in facts.presidio_recognizers),
                OfflineEmailRecognizer(supported_language=lang), phone,
                pr.CreditCardRecognizer(supported_language=lang), pr.IpRecognizer(supported_language=lang),
                pr.UrlRecognizer(supported_language=lang)]
        registry = RecognizerRegistry(recognizers=recs, supported_languages=[lang])
        nlp = NoOpNlpEngine(models=[{"lang_code": lang, "model_name": "none"}])
        self.engine = AnalyzerEngine(registry=registry, nlp_engine=nlp, supported_languages=[lang],
                                     default_score_threshold=threshold)
        self.language = lang
        self.entities = sorted({PRESIDIO_TYPES[e] for r in recs for e in r.supported_entities
                                if e in PRESIDIO_TYPES})

    def detect(self, text: str) -> list:
        spans = [Span(r.start, r.end, PRESIDIO_TYPES[r.entity_type], round(float(r.score), 4), r.entity_type)
                 for r in self.engine.analyze(text, language=self.language) if r.entity_type in PRESIDIO_TYPES]
        return resolve_overlaps(spans)


# ko-pii (Marker Inc Korea, MIT; https://github.com/Marker-Inc-Korea/ko-pii; `pip install ko-pii`, in the `bench`
# extra): the closest Korean peer, a rule-based library of 33 labels. Its labels that name one of our types, as
# ko-pii's `labels.LABEL_INFO` defines them; the others (PNU 토지번호, PRESCRIPTION_ID, EDI_DRUG, EMPLOYEE_ID,
# PETITION_ID, COURT_CASE, DOC_ID, NATIONALITY, EDUCATION, MAJOR, POSITION, HEIGHT, WEIGHT) have no counterpart
# here and are not asked for. One table, the mapping the comparison rests on.
KO_PII_TYPES = {"PERSON": "PERSON", "PHONE": "PHONE", "FAX": "FAX", "RRN": "RRN", "FRN": "FRN",
                "CORP_REG": "CORP_REG", "BUSINESS_REG": "BUSINESS_REG", "DRIVER_LICENSE": "DRIVER_LICENSE",
                "PASSPORT": "PASSPORT", "CARD": "CARD", "ACCOUNT": "ACCOUNT",
                "MEDICAL_INSURANCE": "MEDICAL_INSURANCE", "VEHICLE": "VEHICLE", "EMAIL": "EMAIL", "URL": "URL",
                "IP": "IP", "ADDRESS": "ADDRESS", "POSTAL_CODE": "POSTAL_CODE", "DT_BIRTH": "DT_BIRTH", "AGE": "AGE"}


class KoPii:
    """ko-pii's `detect_all` as shipped (its normalisation on, its own overlap resolution), asked for the labels
    of `KO_PII_TYPES` whose type is in `types` (default: our default Korean types), its labels mapped to ours.
    Scores are ko-pii's confidences; no threshold is applied (ko-pii reports what it decided)."""

    def __init__(self, types: Iterable[str] | None = None):
        try:
            from ko_pii import detect_all
        except ModuleNotFoundError as err:
            raise ModuleNotFoundError("ko-pii is not installed: pip install 'klue-pipeline[bench]' (or ko-pii)") \
                from err
        wanted = set(default_types("ko") if types is None else types)
        self._detect_all = detect_all
        self.language = "ko"  # ko-pii detects Korean PII only
        self.labels = sorted(k for k, ours in KO_PII_TYPES.items() if ours in wanted)
        self.entities = sorted({KO_PII_TYPES[k] for k in self.labels})

    def detect(self, text: str) -> list:
        spans = [Span(r.start, r.end, KO_PII_TYPES[r.label], round(float(r.confidence), 4), r.rule_id or r.label)
                 for r in self._detect_all(text, include=self.labels) if r.label in KO_PII_TYPES]
        return resolve_overlaps(spans)


# The rows of issue 17's acceptance table: (name, type or aggregate, metric, goal).
SUMMARY_ROWS = (("structured identifiers", "structured", "recall", 0.97),
                ("driver's licence", "DRIVER_LICENSE", "recall", None),
                ("resident registration (RRN)", "RRN", "recall", None),
                ("corporate registration", "CORP_REG", "recall", None),
                ("health-insurance number", "MEDICAL_INSURANCE", "recall", None),
                ("PERSON", "PERSON", "recall", 0.90),
                ("ADDRESS (>= 80 % of characters covered)", "ADDRESS", "recall_cover", 0.85),
                ("precision (overlapping any gold span)", "overall", "precision_any", 0.90))


def summary(res: dict) -> list[tuple[str, float | None, float | None]]:
    """(row, value or None where the type is not targeted or has no gold, goal) for SUMMARY_ROWS."""
    out = []
    for name, key, metric, goal in SUMMARY_ROWS:
        m = res[key] if key in ("structured", "overall") else res["per_type"].get(key)
        ok = m is not None and (key in ("structured", "overall") or m["targeted"]) and (
            m["support"] > 0 or metric == "precision_any")
        out.append((name, m[metric] if ok and m is not None else None, goal))
    return out


def format_table(res: dict) -> str:
    lines = [f"{'type':<20}{'precision':>10}{'recall':>9}{'f1':>8}{'R cover':>9}{'P any':>7}{'support':>9}"
             f"{'predicted':>11}{'exact':>7}"]
    for t, m in res["per_type"].items():
        if not m["targeted"]:
            continue
        lines.append(f"{t:<20}{m['precision']:>10.3f}{m['recall']:>9.3f}{m['f1']:>8.3f}{m['recall_cover']:>9.3f}"
                     f"{m['precision_any']:>7.3f}{m['support']:>9}{m['predicted']:>11}{m['exact']:>7}")
    for name in ("structured", "overall"):
        m = res[name]
        lines.append(f"{name.upper():<20}{m['precision']:>10.3f}{m['recall']:>9.3f}{m['f1']:>8.3f}"
                     f"{m['recall_cover']:>9.3f}{m['precision_any']:>7.3f}{m['support']:>9}{m['predicted']:>11}")
    if res.get("untargeted_gold"):
        lines.append("not targeted (gold only): " + ", ".join(f"{k}={v}" for k, v in res["untargeted_gold"].items()))
    lines.append(f"R cover: gold spans >= {COVER:.0%} covered by predictions of their type; P any: predictions "
                 "overlapping any gold span")
    return "\n".join(lines)


def format_side_by_side(results: dict[str, dict[str, dict]]) -> str:
    """One table per gold file: each detector's precision, recall (overlap), recall (cover) and F1 per type,
    then the acceptance rows. `results[file][detector] = score(...)`."""
    lines = []
    for fname, by_det in results.items():
        dets = list(by_det)
        docs = next(iter(by_det.values())).get("documents", "?")
        lines.append(f"== {fname} ({docs} documents) ==")
        head = f"{'type':<20}{'support':>8}" + "".join(f"  {d[:22]:>22} P     R    Rc   F1" for d in dets)
        lines.append(head)
        types = sorted({t for r in by_det.values() for t, m in r["per_type"].items() if m["support"] > 0})
        for t in [*types, "structured", "overall"]:
            row = []
            support = None
            for d in dets:
                r = by_det[d]
                m = r[t] if t in ("structured", "overall") else r["per_type"].get(t)
                targeted = m is not None and (t in ("structured", "overall") or m["targeted"])
                if m is not None and support is None:
                    support = m["support"]
                row.append(f"  {'':>22}{m['precision']:>5.3f} {m['recall']:>5.3f} {m['recall_cover']:>5.3f} "
                           f"{m['f1']:>5.3f}" if targeted and m is not None else f"  {'':>22}{'-':>5} {'':>17}")
            lines.append(f"{t.upper() if t in ('structured', 'overall') else t:<20}{support or 0:>8}" + "".join(row))
        lines.append("")
        lines.append(f"{'acceptance row':<44}{'goal':>6}" + "".join(f"{d[:22]:>24}" for d in dets))
        sums = {d: summary(r) for d, r in by_det.items()}
        for i, (name, _, goal) in enumerate(sums[dets[0]]):
            vals = "".join(f"{'-' if sums[d][i][1] is None else format(sums[d][i][1], '.3f'):>24}" for d in dets)
            lines.append(f"{name:<44}{'' if goal is None else format(goal, '.2f'):>6}{vals}")
        if all("throughput" in r for r in by_det.values()):
            for key, label in (("docs_per_s", "throughput: documents / CPU second"),
                               ("mb_per_s", "throughput: MB / CPU second")):
                lines.append(f"{label:<50}" + "".join(f"{by_det[d]['throughput'][key]:>24}" for d in dets))
        lines.append("")
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
    """Share of sentences with any Korean structured-identifier span (on KLUE's de-identified text, all are
    false); `detector` defaults to the Korean detector of those types (the sentences are KLUE's: Korean)."""
    # lazy: presidio and spaCy (corpora.pii.engine)
    from corpora.pii.engine import PiiDetector

    detector = detector or PiiDetector(types=list(STRUCTURED_TYPES), language="ko")
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
