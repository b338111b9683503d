"""The `vocab` stage: unit shards -> `tokenizer/` (a save_pretrained folder that runs without MeCab) +
`fidelity.json` / `fidelity.md` on the `report_texts`. The PII placeholder tokens (from the pii stage's meta) are
reserved right after the special tokens.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from corpora.lang import LANGUAGES, LanguageCode, get_language
from corpora.shards import count_docs, list_shards
from pipeline import io
from pipeline.filehash import file_digests
from pipeline.plots import md_table
from pipeline.stage import (
    ArmOutput,
    ReportSection,
    Stage,
    StageContext,
    StageInput,
    StageParams,
    StageResult,
)
from pipeline.versions import package_versions
from tokenizer.export import export_tokenizer, special_token_ids
from tokenizer.fidelity import METRICS, report, to_markdown
from tokenizer.stages.pretokenize import chars_path
from tokenizer.train import CharStats, iter_texts, train_vocab


class VocabParams(StageParams):
    """The vocabulary to train (WordPiece as KLUE's released tokenizers, or BPE) and the fidelity report's texts."""

    algorithm: Literal["wordpiece", "bpe"] = "wordpiece"
    vocab_size: int = Field(default=32000, ge=16)
    min_frequency: int = Field(default=2, ge=1)
    limit_alphabet: int | None = Field(default=6000, ge=1, description="most frequent characters kept")
    model_max_length: int = Field(default=512, ge=8)
    report_texts: list[str] = Field(default_factory=list,
                                    description="evaluation files for fidelity.json (KLUE dev json/tsv, or text)")
    report_max_texts: int | None = Field(default=2000, ge=1, description="texts read per report file")
    language: LanguageCode = Field(description="spaced words (WordPiece/BPE on BertPreTokenizer words) or "
                                                    "not (byte-fallback BPE on Metaspace runs): corpora/lang")

    @model_validator(mode="before")
    @classmethod
    def _algorithm_for_language(cls, data: Any) -> Any:
        """A language without spaces trains BPE unless the recipe says otherwise (WordPiece is refused there:
        `tokenizer.train._train_metaspace`)."""
        if isinstance(data, dict) and "algorithm" not in data and isinstance(data.get("language"), str):
            if data["language"] in LANGUAGES.names and not LANGUAGES.get(data["language"]).whitespace_words:
                return {**data, "algorithm": "bpe"}
        return data


class VocabStage(Stage[VocabParams]):
    """Unit shards -> a MeCab-free transformers tokenizer in `tokenizer/`, and its fidelity report."""

    name = "vocab"
    version = "1"
    inputs = ("pretokenize", "pii")
    variant_field = "algorithm"
    input_paths = ("report_texts.*",)

    @classmethod
    def card_facts(cls, stage: StageInput) -> dict[str, Any]:
        """The corpus language of the model card, from the language's folder (corpora/lang/<code>/): its code, its
        English name and its fill-mask example sentence (the vocabulary is the language's last word on a model)."""
        code = (stage.manifest.get("params") or {}).get("language")
        if not code:
            raise ValueError(f"{stage.path}: the vocab stage's manifest names no language")
        lang = get_language(code)
        return {"language": code, "language_name": lang.name, "card_example": lang.card_example}

    @classmethod
    def report_section(cls, outputs: list[ArmOutput]) -> ReportSection | None:
        """The vocabulary of each arm and its fidelity on the report texts (tokenizer/fidelity.py: share of
        words split only at morpheme boundaries, tokens per character and per word, UNK rate)."""
        if not any("vocab_size" in o.meta for o in outputs):
            return None
        keys = ["vocab_size", "algorithm", "analyzer", "pre_tokenizer"]
        metrics = list(dict.fromkeys(k for o in outputs for k in (o.meta.get("report") or {})))
        body = [[k, *(str(o.meta.get(k, "–")) for o in outputs)] for k in keys]
        body += [[m, *(f"{(o.meta.get('report') or {}).get(m, float('nan')):.4f}" for o in outputs)] for m in metrics]
        md = ["Fidelity is measured on the recipe's `report_texts` (`fidelity.md` in each vocab folder has the "
              "full table).", "", *md_table(["", *(o.label for o in outputs)], body)]
        return ReportSection("Tokenizer", "\n".join(md))

    def fingerprint(self, ctx: StageContext[VocabParams]) -> dict[str, Any]:
        out: dict[str, Any] = package_versions("tokenizers", "transformers")
        # by position, not path: the key follows the files' contents wherever they lie
        paths = [Path(os.path.expandvars(f)) for f in ctx.params.report_texts]
        digests = file_digests(p for p in paths if p.is_file())
        out["report_texts"] = [digests.get(p) for p in paths]
        return out

    def describe(self, ctx: StageContext[VocabParams]) -> dict[str, Any]:
        """The vocabulary asked for, and each fidelity text file and whether it is there (`klue run --dry-run`)."""
        p = ctx.params
        out: dict[str, Any] = {"vocabulary": f"{p.algorithm}, {p.vocab_size:,} tokens"}
        for f in p.report_texts:
            path = Path(os.path.expandvars(f))
            out[f"report text {path.name}"] = str(path) if path.is_file() else f"MISSING: {path} is not a file"
        return out

    def run(self, ctx: StageContext[VocabParams]) -> StageResult:
        params = ctx.params
        pre = ctx.inputs["pretokenize"]
        placeholders = list(ctx.inputs["pii"].meta.get("placeholder_tokens", []))
        missing = set(pre.meta.get("placeholder_tokens", [])) - set(placeholders)
        if missing:
            raise ValueError(f"pretokenize protected placeholders the pii stage does not declare: {sorted(missing)}")
        shards = list_shards(pre.path)
        n_docs = sum(count_docs(p) for p in shards)
        stats = None
        sidecars = [chars_path(p) for p in shards]

        lang = get_language(params.language)
        scheme = "bert" if lang.whitespace_words else "metaspace"
        if pre.meta.get("training_scheme", "bert") != scheme:
            raise ValueError(f"vocab: language {params.language!r} needs units pre-tokenized for a {scheme!r} "
                             f"tokenizer, but the pretokenize stage wrote {pre.meta.get('training_scheme')!r} "
                             f"(language {pre.meta.get('language', 'ko')!r})")
        if pre.meta.get("placeholder_tokens") == placeholders and all(p.is_file() for p in sidecars):
            stats = CharStats.of(())
            for p in sidecars:
                stats.merge(CharStats.from_json(json.loads(p.read_text(encoding="utf-8"))))
        tv = train_vocab(lambda: iter_texts(shards), algorithm=params.algorithm, vocab_size=params.vocab_size,
                         min_frequency=params.min_frequency, limit_alphabet=params.limit_alphabet,
                         placeholders=placeholders, stats=stats, show_progress=True, length=n_docs,
                         pre_tokenizer=scheme,
                         unicode_normalization=None if scheme == "bert" else lang.normalization_form)
        tok_dir = ctx.out_dir / "tokenizer"
        export_tokenizer(tv, tok_dir, model_max_length=params.model_max_length)
        meta: dict[str, Any] = {
            "tokenizer_dir": "tokenizer", "vocab_size": len(tv.tokens), "vocab_size_requested": params.vocab_size,
            "algorithm": params.algorithm, "analyzer": pre.meta.get("analyzer"), "pre_tokenizer": scheme,
            "special_tokens": {t: i for i, t in enumerate(tv.tokens[:tv.n_reserved])},
            "special_token_ids": special_token_ids(tv), "placeholder_tokens": placeholders,
            "model_input_names": ["input_ids", "attention_mask"], "type_vocab_size": 1,
        }
        if params.report_texts:
            files: list[str | Path] = [os.path.expandvars(f) for f in params.report_texts]
            label = f"{params.algorithm}+{pre.meta.get('analyzer', '?')}"
            rep = report({label: tok_dir}, files, params.report_max_texts, language=params.language)
            io.write_json(ctx.out_dir / "fidelity.json", rep, indent=1)
            io.write_text(ctx.out_dir / "fidelity.md", to_markdown(rep))
            meta["report"] = {m: round(rep["tokenizers"][label][m], 6) for m in METRICS}
        return StageResult(meta=meta)
