"""Each corpus stage beside its floors (issue 49, item 3): MB of UTF-8 input text per CPU second of

- io:      the stage's input shards read with `iter_docs` and written back with `write_docs`, no work (the IO
           ceiling: what any stage that reads and writes document shards cannot beat);
- compute: the stage's core computation alone, in process, on the documents already in memory (the filter
           chain; exact keys and MinHash band signatures; word hashes and the benchmark n-gram lookup; the Rust
           tokenizer's `encode_batch` of whole documents, and beside it transformers' `tok(...)` with offsets
           (what encode called before issue 49) and `BatchEncoder` (what it calls since: each distinct eojeol
           tokenized once, so it beats the tokenizer's own rate); the PII recognizers; MeCab's parse of every
           eojeol, uncached);
- stage:   the whole stage (`Stage.run` with one worker, in this process, into a temp folder), so process
           start-up and imports are not in it (bench/scale.py's `klue run` figures subtract them too);

and `limit = min(io, compute)`, `stage / limit` (issue 49: a stage below half of it gets fixed or says why).
With the stage's output written again, `same_bytes` compares it file by file (sha256, manifest aside) with the
workdir's own folder for that stage, and `same_funnel_and_meta` its funnels and meta (the report's counters) with
that folder's manifest: a speedup must not change a byte.

    python bench/stage_floors.py --workdir WD [--stages filter dedup decontaminate encode] [--json OUT]

WD: a `klue run` workdir of one arm done through the stages measured (e.g. `klue run
/tmp/klue-scale/scale-0.1/recipe.yaml --workdir WD --until encode --workers 1`, the 0.1 GB scale corpus of
`python -m datagen.scale`). CPU seconds are this process's (`time.process_time`: user + sys of all its threads);
the load average is printed with every figure. Time it alone: 2 cores are easily oversubscribed. Not run in CI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from corpora.shards import Doc, iter_docs, list_shards, write_docs  # noqa: E402
from datagen.scale import stage_folder, stage_manifest  # noqa: E402

STAGES = ("filter", "dedup", "decontaminate", "pii_detect", "pretokenize", "encode")
INPUT = {"filter": "collect", "dedup": "filter", "decontaminate": "dedup", "pii_detect": "decontaminate",
         "pii": "pii_detect", "pretokenize": "pii", "encode": "pii"}


def cpu(fn: Callable[[], Any], repeat: int = 1) -> float:
    """Least CPU seconds of `repeat` calls of fn (the least is the least disturbed by other processes)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return max(best, 1e-6)


def load(folder: Path) -> list[list[Doc]]:
    return [list(iter_docs(s)) for s in list_shards(folder)]


def digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "manifest.json"
            and "_work" not in p.parts and "_journal" not in p.parts}


def io_ceiling(folder: Path, tmp: Path) -> None:
    for s in list_shards(folder):
        write_docs(tmp / s.name, iter_docs(s))


# --- the core computations, on in-memory documents ---------------------------------------------------------


def compute_filter(recipe: Any, shards: list[list[Doc]]) -> Callable[[], None]:
    from corpora.filters import FilterChain

    params = recipe.params("filter")
    src_min = {s.name: s.min_sentence_chars for s in recipe.sources if getattr(s, "min_sentence_chars", None)}
    chains = {d.source: FilterChain(params, d.source, src_min.get(d.source)) for sh in shards for d in sh}

    def run() -> None:
        for sh in shards:
            for d in sh:
                chains[d.source](d.text)
    return run


def compute_dedup(recipe: Any, shards: list[list[Doc]]) -> Callable[[], None]:
    from corpora.stages.dedup import SIGNATURE_BATCH, batch_signatures

    p = recipe.params("dedup")
    bands, rows = p.band_rows()

    def run() -> None:
        for sh in shards:
            for i in range(0, len(sh), SIGNATURE_BATCH):
                batch_signatures([d.text for d in sh[i:i + SIGNATURE_BATCH]], p, bands, rows, recipe.seed)
    return run


def compute_decontaminate(recipe: Any, shards: list[list[Doc]]) -> Callable[[], None]:
    from corpora.benchmarks import iter_texts
    from corpora.decontaminate import BenchmarkIndex, word_hashes
    from corpora.lang import get_language

    p = recipe.params("decontaminate")
    lang = get_language(p.language)
    index = BenchmarkIndex.build(((b.label(), iter_texts(b.resolved(), b.format)) for b in p.benchmarks),
                                 n=p.n, min_words=p.min_words, lang=lang)
    index.matches(word_hashes("워밍업 " * 20, lang))  # the presence bitmap is built on first use
    batched = hasattr(index, "masks")  # (before issue 49: one document at a time)

    def run() -> None:
        for sh in shards:
            for i in range(0, len(sh), 512):
                hashes = [word_hashes(d.text, lang) for d in sh[i:i + 512]]
                if batched:
                    index.masks(hashes)
                else:
                    for h in hashes:
                        index.matches(h)
    return run


def _tokenizer(wd: Path) -> Any:
    from pretrain.encode import load_tokenizer

    vocab = stage_folder(wd, "vocab")
    return load_tokenizer(vocab / stage_manifest(wd, "vocab")["meta"]["tokenizer_dir"])


def compute_encode_raw(wd: Path, shards: list[list[Doc]]) -> Callable[[], None]:
    """The Rust tokenizer's `encode_batch` alone (ids and offsets stay in Rust): the floor of encode."""
    backend = _tokenizer(wd).backend_tokenizer

    def run() -> None:
        for sh in shards:
            for i in range(0, len(sh), 256):
                backend.encode_batch([d.text for d in sh[i:i + 256]], add_special_tokens=False)
    return run


def compute_encode_cached(wd: Path, shards: list[list[Doc]]) -> Callable[[], None]:
    """What the stage computes since issue 49: `BatchEncoder` (each distinct eojeol through the Rust tokenizer
    once, cache cold at the start), ids and eojeol starts as numpy arrays."""
    from pretrain.encode import BatchEncoder

    tok = _tokenizer(wd)

    def run() -> None:
        enc = BatchEncoder(tok, word_info=True)
        for sh in shards:
            for i in range(0, len(sh), 256):
                enc([d.text for d in sh[i:i + 256]])
    return run


def compute_encode_call(wd: Path, shards: list[list[Doc]]) -> Callable[[], None]:
    """What encode did before issue 49: transformers' `tok(...)` with offsets (ids and offsets become Python
    lists), for comparison with the raw floor."""
    tok = _tokenizer(wd)

    def run() -> None:
        for sh in shards:
            for i in range(0, len(sh), 256):
                tok([d.text for d in sh[i:i + 256]], add_special_tokens=False, return_offsets_mapping=True,
                    return_attention_mask=False, verbose=False)
    return run


def compute_pii_detect(recipe: Any, shards: list[list[Doc]]) -> Callable[[], None]:
    from corpora.stages.pii_detect import _detector

    p = recipe.params("pii_detect")
    det = _detector(p.threshold, p.doc_timeout_s, p.types, p.language)

    def run() -> None:
        for sh in shards:
            for d in sh:
                det.detect(d.text)
    return run


def compute_pretokenize(recipe: Any, shards: list[list[Doc]]) -> Callable[[], None]:
    """MeCab's raw parse of every eojeol (whitespace token) of the text, no cache: the analyzer's own rate."""
    from tokenizer.mecab import make_analyzer

    p = recipe.params("pretokenize")
    an = make_analyzer(p.analyzer, p.language)

    def run() -> None:
        for sh in shards:
            for d in sh:
                for w in d.text.split():
                    an.surfaces(w)
    return run


# --- the whole stage, in process -----------------------------------------------------------------------------


def run_stage(recipe: Any, wd: Path, stage: str, out: Path) -> bool:
    """Run the stage into `out`; whether its funnels and meta are the workdir manifest's (as the runner stores
    them: JSON)."""
    from pipeline.stage import StageContext, StageInput
    from pipeline.stages import STAGES as REGISTRY

    cls = REGISTRY.get(stage)
    inputs = {n: StageInput(n, stage_folder(wd, n), stage_manifest(wd, n)) for n in cls.inputs}
    ctx = StageContext(out_dir=out, params=recipe.params(stage), inputs=inputs, recipe=recipe, workers=1)
    r = cls().run(ctx)
    mine = {"funnel": r.funnel.to_json() if r.funnel is not None else None,
            "by_source": {s: f.to_json() for s, f in sorted(r.by_source.items())}, "meta": r.meta}
    theirs = stage_manifest(wd, stage)
    return json.loads(json.dumps(mine)) == {k: theirs.get(k) for k in mine}


def measure(stage: str, wd: Path, recipe: Any, repeat: int, tmp_root: Path) -> dict[str, Any]:
    src = stage_folder(wd, INPUT[stage])
    shards = load(src)
    mb = sum(len(d.text.encode()) for sh in shards for d in sh) / 1e6
    row: dict[str, Any] = {"stage": stage, "input": INPUT[stage], "docs": sum(map(len, shards)),
                           "input_mb": round(mb, 2)}

    def fresh(name: str) -> Path:
        p = tmp_root / f"{stage}-{name}"
        shutil.rmtree(p, ignore_errors=True)
        p.mkdir(parents=True)
        return p

    row["load_io"] = os.getloadavg()[0]
    row["io_cpu_s"] = cpu(lambda: io_ceiling(src, fresh("io")), repeat)
    computes: dict[str, Callable[[], None]]
    if stage == "encode":
        computes = {"compute": compute_encode_raw(wd, shards), "compute_tok_call": compute_encode_call(wd, shards)}
        try:
            computes["compute_cached"] = compute_encode_cached(wd, shards)
        except ImportError:  # before issue 49
            pass
    else:
        make = globals()[f"compute_{stage}"]
        computes = {"compute": make(recipe, shards)}
    row["load_compute"] = os.getloadavg()[0]
    for k, fn in computes.items():
        row[f"{k}_cpu_s"] = cpu(fn, repeat)
    del shards
    row["load_stage"] = os.getloadavg()[0]
    out = tmp_root / f"{stage}-stage"

    same_manifest = []

    def stage_once() -> None:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        same_manifest.append(run_stage(recipe, wd, stage, out))

    row["stage_cpu_s"] = cpu(stage_once, repeat)
    row["same_bytes"] = digests(out) == digests(stage_folder(wd, stage))
    row["same_funnel_and_meta"] = all(same_manifest)
    for k in [k for k in row if k.endswith("_cpu_s")]:
        row[k.replace("_cpu_s", "_mb_per_cpu_s")] = round(mb / row[k], 3)
        row[k] = round(row[k], 2)
    limit = min(row["io_mb_per_cpu_s"], row["compute_mb_per_cpu_s"])
    row["limit_mb_per_cpu_s"] = limit
    row["stage_over_limit"] = round(row["stage_mb_per_cpu_s"] / limit, 3)
    for k in ("load_io", "load_compute", "load_stage"):
        row[k] = round(row[k], 2)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, required=True, help="a klue run workdir, done through the stages")
    ap.add_argument("--recipe", type=Path, default=None, help="default: the recipe file of the workdir's run")
    ap.add_argument("--stages", nargs="+", default=["filter", "dedup", "decontaminate", "encode"], choices=STAGES)
    ap.add_argument("--repeat", type=int, default=1, help="take the least CPU time of this many runs")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    from pipeline.recipe import load_recipe

    wd = args.workdir.resolve()
    recipe_file = args.recipe or Path(json.loads((wd / "run.json").read_text(encoding="utf-8"))["recipe_file"])
    recipe = load_recipe(recipe_file)
    cpu_name = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                     if ln.startswith("model name")), "unknown CPU")
    print(f"{cpu_name}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start", flush=True)
    results: dict[str, Any] = {"cpu": cpu_name, "cores": os.cpu_count(), "workdir": str(wd),
                               "load_start": os.getloadavg()[0], "stages": {}}
    tmp_root = Path(tempfile.mkdtemp(prefix="stage-floors-"))
    try:
        print(f"{'stage':14s} {'MB':>7s} {'io':>7s} {'compute':>8s} {'stage':>7s} {'stage/limit':>11s}  "
              "MB per CPU second; load", flush=True)
        for s in args.stages:
            r = measure(s, wd, recipe, args.repeat, tmp_root)
            results["stages"][s] = r
            extra = ""
            if s == "encode":
                extra = f"  tok(...) call {r['compute_tok_call_mb_per_cpu_s']:.2f}"
                if "compute_cached_mb_per_cpu_s" in r:
                    extra += f"  BatchEncoder alone {r['compute_cached_mb_per_cpu_s']:.2f}"
            print(f"{s:14s} {r['input_mb']:7.1f} {r['io_mb_per_cpu_s']:7.2f} {r['compute_mb_per_cpu_s']:8.2f} "
                  f"{r['stage_mb_per_cpu_s']:7.2f} {r['stage_over_limit']:11.2f}  same bytes {r['same_bytes']} "
                  f"meta {r['same_funnel_and_meta']}  "
                  f"load {r['load_io']:.1f}/{r['load_compute']:.1f}/{r['load_stage']:.1f}{extra}", flush=True)
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    results["load_end"] = os.getloadavg()[0]
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
