"""The sections of a model card, in markdown, from its `CardFacts` (pipeline/release/facts.py).

Each section states what the run measured and recorded, and says so when something was not recorded (a stage
that did not run, a fidelity report without texts) instead of leaving a gap. The limitations are derived from
the same numbers: a tiny model, few tokens, a model still in the MLM plateau, capped or split evaluation sets.
"""

from __future__ import annotations

import os
from typing import Any

from pipeline.plots import md_table
from pipeline.release.facts import CardFacts, CorpusFacts


def language_name(f: CorpusFacts) -> str:
    """The corpus language as the card names it: the language folder's English name, else its code."""
    return f.language_name or f.language
PII_MODES = {
    "placeholder": "every detected span was replaced by its type's placeholder token (`[PHONE]`, `[PERSON]`, ...), "
                   "each a single reserved token of the vocabulary",
    "surrogate": "every detected span was replaced by a fake value of the same type (Faker), so the text keeps "
                 "its shape without the real values; a Korean name or address ends in the final sound the particle "
                 "after it needs (이/가, 은/는, 으로/로 still agree)",
    "drop": "documents whose detected PII exceeded the recipe's density threshold were dropped; the others were "
            "kept as they were",
}
TINY_PARAMS = 20_000_000  # below this, the card says the model is a demonstration of the pipeline, not a release


def body(facts: CardFacts) -> str:
    """The card's markdown below the metadata block."""
    parts = [_title(facts), _usage(facts), _data(facts), licence_section(facts), pii_section(facts),
             decontamination_section(facts), _tokenizer(facts), _training(facts), _evaluation(facts),
             _limitations(facts), _provenance(facts)]
    return "\n\n".join(p.strip() for p in parts if p) + "\n"


def _title(f: CardFacts) -> str:
    cls = (f.config.get("architectures") or ["a masked-LM encoder"])[0]
    n = f.summary.get("params")
    size = f"{_millions(n)} parameters, " if n else ""
    lang = language_name(f)
    what = (f"checkpoint of step {f.checkpoint['step']:,} of a pretraining run" if f.checkpoint
            else "model pretrained from scratch")
    docs = (f.stages["pii"].manifest.get("funnel") or {}).get("docs_kept") if "pii" in f.stages else None
    corpus = f" on {docs:,} {lang} documents" if docs else f" on {lang} text"
    recipe = f" by klue-pipeline's recipe `{f.recipe}`" if f.recipe else ""
    arm = f", arm `{f.arm}`" if f.arm else ""
    return (f"# {f.name}\n\nA {cls} ({size}{f.config.get('num_hidden_layers', '?')} layers x "
            f"{f.config.get('hidden_size', '?')}): a {what} with masked language modelling{corpus}{recipe}{arm}. "
            f"It is an encoder for fine-tuning (classification, tagging, extractive QA), not a text generator.")


def _usage(f: CardFacts) -> str:
    # the language folder's fill-mask sentence, the mask token put in from the tokenizer; a language without one:
    # the bare mask token
    example = (f.card_example or "{mask}").format(mask=f.mask_token)
    return ("## How to use\n\n```python\nfrom transformers import pipeline\n"
            'fill = pipeline("fill-mask", model="path/to/this/folder")  # or the Hub repo it was uploaded to\n'
            f'print(fill("{example}"))\n```\n\n'
            "`AutoModelForMaskedLM` and `AutoTokenizer` load it the same way (stock transformers classes, no "
            "`trust_remote_code`); fine-tune it with any sequence- or token-classification head. Neither MeCab nor "
            "klue-pipeline is needed to use it.")


def _data(f: CardFacts) -> str:
    if "collect" not in f.stages:
        return ("## Training data\n\nNot recorded: this model folder was not made by a `klue run` whose stage "
                "folders are at hand, so the text it saw cannot be described here.")
    lines = ["## Training data", ""]
    if f.dataset:
        lines += [f"The corpus is published with its dataset card: [{f.dataset}](https://huggingface.co/datasets/"
                  f"{f.dataset}) (`klue export --corpus`, the same documents).", ""]
    lines += funnel_lines(f, "trained on")
    pii_funnel = (f.stages["pii"].manifest.get("funnel") or {}) if "pii" in f.stages else {}
    enc = f.meta("encode")
    tokens, docs = enc.get("tokens") or {}, enc.get("docs") or {}
    if pii_funnel.get("chars_kept") or tokens:
        lines.append("")
        text = f"The training text is {pii_funnel.get('chars_kept', 0):,} characters"
        if tokens:
            text += (f", {tokens.get('train', 0):,} tokens in {docs.get('train', 0):,} documents, with "
                     f"{docs.get('eval', 0):,} documents ({tokens.get('eval', 0):,} tokens) held out for the "
                     f"held-out losses below")
        lines.append(text + ".")
    return "\n".join(lines)


def funnel_lines(f: CorpusFacts, last: str, until: str = "pii") -> list[str]:
    """The documents of each source after each curation stage up to `until` (a table; `last` heads the column
    of `until`), then what each stage removed, by reason: the model card's and the dataset card's funnel."""
    order = [("collect", "read"), ("filter", "after filter"), ("dedup", "after dedup"),
             ("decontaminate", "after decontamination"), ("pii", "after pii")]
    order = order[:[s for s, _ in order].index(until) + 1] if until in dict(order) else order
    order[-1] = (order[-1][0], last)
    present = [(s, t) for s, t in order if s in f.stages]
    lic = {s.source: s.text or "none given" for s in f.license.sources}
    names = list(dict.fromkeys([*lic, *(f.stages["collect"].manifest.get("by_source") or {})]))
    rows = []
    for name in names:
        cells = []
        for stage, _ in present:
            src = (f.stages[stage].manifest.get("by_source") or {}).get(name) or {}
            cells.append(f"{src.get('docs_in' if stage == 'collect' else 'docs_kept', 0):,}")
        rows.append([f"`{name}`", lic.get(name, "not in the recipe"), *cells])
    totals = [(f.stages[s].manifest.get("funnel") or {}) for s, _ in present]
    rows.append(["total", "", *(f"{t.get('docs_in' if s == 'collect' else 'docs_kept', 0):,}"
                                for t, (s, _) in zip(totals, present, strict=True))])
    lines = ["Documents per source and stage (`in` for collect, `kept` after each later stage):", "",
             *md_table(["source", "licence", *(t for _, t in present)], rows), ""]
    dropped = []
    for stage, _ in present:
        funnel = f.stages[stage].manifest.get("funnel") or {}
        reasons = {k: v for k, v in (funnel.get("dropped") or {}).items() if v}
        if funnel.get("quarantined"):
            reasons["quarantined (unreadable records)"] = funnel["quarantined"]
        if reasons:
            dropped.append(f"{stage}: " + ", ".join(f"{k} {v:,}" for k, v in sorted(reasons.items())))
    if dropped:
        lines.append("Removed, by stage and reason: " + "; ".join(dropped) + ".")
    return lines


def licence_section(f: CorpusFacts) -> str:
    return "## Licence\n\n" + f.license.summary()


def pii_section(f: CorpusFacts, what: str = "model") -> str:
    """What PII replacement did to the text of this `what` (a model, a dataset): mode, spans per type detected
    and replaced, the detector."""
    if "pii" not in f.stages:
        return "## PII replacement\n\nNot recorded (no `pii` stage in this run's folders)."
    p, rep = f.params("pii"), f.report("pii")
    detected = f.report("pii_detect")
    per_type_detected = detected.get("spans_per_type") or {}
    per_type_replaced = rep.get("per_type") or {}
    arm = f" (arm `{f.arm}`)" if f.arm else ""
    if not p.get("enabled", True):
        head = (f"PII replacement was **off** for this {what}{arm}: the detected spans below are still in the text "
                f"it was trained on.")
    else:
        head = (f"Mode `{p.get('mode', 'placeholder')}`{arm}: {PII_MODES.get(p.get('mode', 'placeholder'), '')}. "
                f"{rep.get('spans_changed', 0):,} spans in {rep.get('docs_changed', 0):,} documents were changed.")
    lines = ["## PII replacement", "", head]
    if per_type_detected or per_type_replaced:
        types = sorted(set(per_type_detected) | set(per_type_replaced))
        rows = [[t, f"{per_type_detected.get(t, 0):,}", f"{(per_type_replaced.get(t) or {}).get('spans', 0):,}"]
                for t in types]
        lines += ["", *md_table(["type", "spans detected", "spans replaced"], rows)]
    if detected:
        lines += ["", f"Detection (`pii_detect`, threshold {f.params('pii_detect').get('threshold', '?')}): "
                      f"{detected.get('spans', 0):,} spans in {detected.get('docs_with_pii', 0):,} of "
                      f"{detected.get('docs', 0):,} documents, by presidio-analyzer with klue-pipeline's "
                      f"{language_name(f)} recognizers, offline."]
    return "\n".join(lines)


def decontamination_section(f: CorpusFacts) -> str:
    if "decontaminate" not in f.stages:
        return "## Decontamination\n\nNot recorded (no `decontaminate` stage in this run's folders)."
    p, rep = f.params("decontaminate"), f.report("decontaminate")
    benches = rep.get("benchmarks") or {}
    if not benches:
        return ("## Decontamination\n\nNone: the recipe names no benchmark files, so the corpus may hold text of "
                "any benchmark.")
    rows = [[name, f"{b.get('texts', 0):,}", f"{b.get('docs', 0):,}"] for name, b in sorted(benches.items())]
    dropped = sum(((f.stages["decontaminate"].manifest.get("funnel") or {}).get("dropped") or {}).values())
    return "\n".join([
        "## Decontamination", "",
        f"Documents sharing a {p.get('n', 13)}-word n-gram with a benchmark text (or holding a short benchmark text "
        f"whole) were handled in mode `{p.get('mode', 'drop')}`: {dropped:,} documents dropped. Benchmarks checked "
        "(their dev files; test sets are not public):", "",
        *md_table(["benchmark file", "texts", "documents matched"], rows)])


def _tokenizer(f: CardFacts) -> str:
    vp, vm = f.params("vocab"), f.meta("vocab")
    if not vp and not vm:
        return "## Tokenizer\n\nNot recorded (no `vocab` stage in this run's folders)."
    analyzer = f.params("pretokenize").get("analyzer") or vm.get("analyzer")
    algo = str(vp.get("algorithm", vm.get("algorithm", "wordpiece")))
    if analyzer != "mecab":
        pre = "the vocabulary was learned on the plain text (no morphological pre-tokenization)"
    elif f.meta("pretokenize").get("training_scheme") == "metaspace":
        pre = ("the vocabulary was learned over MeCab's morphemes (byte-fallback BPE with a Metaspace "
               "pre-tokenizer, so no [UNK])")
    else:
        pre = ("the corpus was pre-tokenized with MeCab (morphemes; `##` marks a morpheme inside a word) before "
               "the vocabulary was learned")
    placeholders = vm.get("placeholder_tokens") or []
    lines = ["## Tokenizer", "",
             f"{algo.upper() if algo == 'bpe' else 'WordPiece'}, {_count(vm.get('vocab_size', vp.get('vocab_size')))} "
             f"tokens; {pre}. The exported tokenizer (`tokenizer.json`) runs on raw text with HF `tokenizers` "
             f"alone: **inference needs no MeCab**." + (f" The {len(placeholders)} PII placeholders are reserved "
                                                          f"single tokens." if placeholders else "")
             + f" Inputs hold at most {f.tokenizer.get('model_max_length', '?')} tokens (the positions the model "
               f"was trained with)."]
    rep = f.report("vocab")
    if rep:
        texts = ", ".join(f"`{_short_path(str(t))}`" for t in vp.get("report_texts") or []) or "the report texts"
        rows = [[k, f"{v:.4f}" if isinstance(v, float) else str(v)] for k, v in rep.items()]
        lines += ["", f"Fidelity on {texts} (tokenizer/fidelity.py: share of words whose token boundaries fall "
                      "on morpheme boundaries, tokens per word and per character, [UNK] rates, vocabulary used):", "",
                  *md_table(["measure", "value"], rows)]
    else:
        lines += ["", "Fidelity not measured (`stages.vocab.report_texts` was empty)."]
    return "\n".join(lines)


def _training(f: CardFacts) -> str:
    t, s, c = f.train, f.summary, f.config
    per_step = (t.get("batch_size", 0) * t.get("seq_len", 0) * t.get("grad_accum", 1)
                * (s.get("world_size") or t.get("num_processes", 1)))
    precision = str(s.get("precision") or {"no": "fp32", None: "fp32"}.get(s.get("mixed_precision"),
                                                                          s.get("mixed_precision")))
    if s.get("precision_why"):
        precision += f" ({s['precision_why']})"
    peak = (s.get("peak") or {}).get("label")
    ds = f", DeepSpeed {t['deepspeed']}" if t.get("deepspeed") else ""
    rows = [
        ["architecture", f"{(c.get('architectures') or ['?'])[0]} (`{t.get('architecture', c.get('model_type'))}`, "
                         f"size `{t.get('model', '?')}`)"],
        ["shape", f"{c.get('num_hidden_layers', '?')} layers x {c.get('hidden_size', '?')}, "
                  f"{c.get('num_attention_heads', '?')} heads, FFN {c.get('intermediate_size', '?')}, vocabulary "
                  f"{c.get('vocab_size', '?')}"],
        ["parameters", f"{s['params']:,}" if s.get("params") else "not recorded"],
        ["objective", f"MLM, {t.get('mlm_probability', 0.15):.0%} of tokens masked"
                      + (", whole words" if t.get("whole_word_mask") else "")],
        ["steps", f"{s.get('steps') or 0:,} x {per_step:,} tokens ({t.get('batch_size')} x {t.get('seq_len')}"
                  + (f" x {t['grad_accum']} accumulated" if t.get("grad_accum", 1) > 1 else "") + ")"],
        ["tokens seen", f"{s.get('tokens_seen') or 0:,}"
                        + (f" ({s['epochs']:.2f} passes over the training tokens)" if s.get("epochs") else "")],
        ["learning rate", f"{t.get('lr')} peak, {t.get('schedule', 'linear')} schedule, {t.get('warmup_steps', 0)} "
                          f"warmup steps, AdamW"],
        ["precision", f"{precision}{ds}"],
        ["hardware", f.hardware or "not recorded"],
        ["throughput", f"{s['tokens_per_s']:,.0f} tokens/s"
         + (f", MFU {s['mfu']:.1%}" + (f" of {peak}" if peak else "") if s.get("mfu") else "")
         if s.get("tokens_per_s") else "not recorded"],
        ["training loss", _losses(s.get("first_loss"), s.get("last_loss"))],
        *([["skipped updates", f"{len(s['skipped_steps'])} step(s) with a non-finite gradient norm left the weights "
                               f"as they were: {', '.join(map(str, s['skipped_steps'][:20]))}"
                               + (" ..." if len(s["skipped_steps"]) > 20 else "")]] if s.get("skipped_steps") else []),
        *([["rollbacks", f"{len(s['rollbacks'])}: " + "; ".join(
            f"at step {r['step']} ({r['reason']}), back to step {r['to_step']}, batches "
            f"{r['skipped_batches'][0]}-{r['skipped_batches'][1]} skipped" for r in s["rollbacks"])]]
          if s.get("rollbacks") else []),
        ["held-out loss", _num(s.get("eval_loss"))],
        ["held-out loss at [MASK]", _num(s.get("eval_mask_loss"))],
        ["word-order gain", _num(s.get("eval_order_gain"))
         + " nats (what shuffling the context costs the model at [MASK])" if s.get("eval_order_gain") is not None
         else "not measured"],
    ]
    lines = ["## Training", "", *md_table(["", ""], rows)]
    if f.order_verdict:
        lines += ["", f.order_verdict]
    if "loss_curve.png" in f.files:
        lines += ["", "![Training loss, held-out loss at [MASK] and word-order gain](loss_curve.png)"]
    return "\n".join(lines)


def _evaluation(f: CardFacts) -> str:
    if f.evaluation is None:
        return ("## Evaluation\n\nNot in this card: fine-tuning runs after pretraining. `klue export WORKDIR --to "
                "DIR` writes the card with the run's KLUE scores (and their `model-index` entries) when the run "
                "fine-tuned.")
    return "## Evaluation\n\n" + f.evaluation.markdown.strip()


def _limitations(f: CardFacts) -> str:
    s, c = f.summary, f.config
    out = []
    n = s.get("params") or 0
    if n and n < TINY_PARAMS:
        out.append(f"A small model ({_millions(n)} parameters, {c.get('num_hidden_layers', '?')} layers x "
                   f"{c.get('hidden_size', '?')}), trained for a pipeline run, not for release-level scores: the "
                   f"published KLUE models are far larger.")
    tokens = s.get("tokens_seen") or 0
    if tokens:
        epochs = s.get("epochs")
        out.append(f"It saw {_short(tokens)} tokens"
                   + (f" ({epochs:.1f} passes over its corpus: repeated text)" if epochs and epochs > 1.05 else "")
                   + "; models meant for use see billions.")
    gain = s.get("eval_order_gain")
    if gain is not None and gain < 0.5:
        out.append(f"Word-order gain {gain:.2f} nats: it still predicts [MASK] from the bag of words around it "
                   f"(the MLM plateau), which caps what fine-tuning can get from it.")
    out.append(f"Inputs longer than {f.tokenizer.get('model_max_length', '?')} tokens must be truncated or split.")
    pii = f.params("pii")
    if "pii" in f.stages and pii.get("enabled", True):
        out.append("PII was found by automatic recognizers: spans they missed are still in the training text, and "
                   + ("placeholders such as [PERSON] stand where names were, so the model predicts them there."
                      if pii.get("mode", "placeholder") == "placeholder" else "the model saw the replaced values."))
    elif "pii" in f.stages:
        out.append("PII was not replaced: personal data in the sources may be reproduced by the model.")
    if "toxicity" in f.stages and not f.params("toxicity").get("enabled"):
        out.append("The text was not filtered for toxicity: the model may reflect offensive or biased language of "
                   "its sources.")
    out.append("Decontamination covers only the benchmark files listed above, by n-gram overlap; paraphrases and "
               "other benchmarks are not covered.")
    if f.evaluation is not None:
        out += f.evaluation.limitations
    return "## Limitations\n\n" + "\n".join(f"- {line}" for line in out)


def _provenance(f: CardFacts) -> str:
    rows: list[list[str]] = []
    if f.recipe:
        rows.append(["recipe", f"`{f.recipe}`"])
    if f.arm:
        rows.append(["arm", f"`{f.arm}`"])
    if f.checkpoint:
        rows.append(["checkpoint", f"step {f.checkpoint['step']:,}, {f.checkpoint.get('tokens') or 0:,} tokens"])
    for k, v in f.provenance.items():
        rows.append([k, f"`{v}`" if isinstance(v, str) else str(v)])
    extra = []
    if "report.html" in f.files:
        extra = ["", "The run's full report (funnel, PII, tokenizer, losses, every table) is "
                     "[report.html](report.html) in this folder."]
    return "\n".join(["## Provenance", "", "Made by klue-pipeline (`klue run`), every number above read from the "
                      "run's own files.", "", *md_table(["", ""], rows), *extra])


def _losses(first: Any, last: Any) -> str:
    if first is None or last is None:
        return "not recorded"
    return f"{first:.3f} (first logged) -> {last:.3f} (last)"


def _short_path(path: str) -> str:
    """A report file as `folder/name` (`nli/klue-nli-v1.1_dev.json`): JGLUE's files are all `valid-v1.3.json`."""
    parent = os.path.basename(os.path.dirname(path))
    return f"{parent}/{os.path.basename(path)}" if parent else os.path.basename(path)


def _count(v: Any) -> str:
    return f"{v:,}" if isinstance(v, int) else "?"


def _num(v: Any) -> str:
    return "not measured" if v is None else f"{v:.3f}"


def _millions(n: int) -> str:
    return f"{n / 1e6:.1f}M"


def _short(n: float) -> str:
    return f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e3 \
        else f"{n:.0f}"
