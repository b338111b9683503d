"""Curation speed and memory: our filters, filter stage and dedup against datatrove 0.10.1 on the same input.

Run:  KLUE_DATA_DIR=../shared/data python bench/curation.py [--mb 5] [--scales 1 4] [--kor-mb 0.4] [--repeat 2]
      [--only dedup] [--ray-workers 2]
Needs the `bench` extra: datatrove 0.10.1 and kiwipiepy 0.21.0 (see below), and the `ray` extra for the
executor comparison.

The dedup stage also gets a table across scales: the peak RSS of its global step alone (see
`_global_step_hook`), which the range-partitioned design keeps in step with the duplicates rather than the
corpus, and its time on the Ray executor against the local pool with the same number of workers
(`bench/cluster.py`'s `ray_vs_local`; both write the same bytes, which the table checks).

Input: a sample of ${KLUE_DATA_DIR}/corpus (kowiki sections 60 %, NSMC reviews 40 %, by UTF-8 bytes) of
`--mb` MB at each scale (1x, 4x). Every measurement runs in its own subprocess on one core (workers=1), so
MB/s is per core and peak RSS (VmHWM) belongs to that measurement alone; ours and datatrove's runs of a row
alternate, `--repeat` times at the first scale (once at larger ones, which are there for peak RSS), and the
table keeps the fastest run of each (the machine is shared).

Baselines, both datatrove's GopherRepetitionFilter, GopherQualityFilter and FineWebQualityFilter with
FineWeb-2's kor_Hang thresholds, and its 4-step MinHash dedup under LocalPipelineExecutor:
  1. datatrove kor_Hang: `language="kor_Hang"`, i.e. its own Korean word tokenizer (Kiwi, model_type="sbg"),
     exactly as FineWeb-2 runs it. Its filters are slow, so they run on a smaller sample of the same mix
     (`--kor-mb`), with ours re-measured on that sample; compare MB/s, not seconds. kiwipiepy dropped the sbg model files from kiwipiepy_model in 0.22, so
     datatrove 0.10.1's KiwiTokenizer only loads with kiwipiepy<=0.21 ("OSError: Cannot open required files
     for skipbigram model" otherwise): hence the pin.
  2. datatrove eojeol: the same filters given our eojeol (whitespace) words, so that ratio compares
     implementations, not tokenizers.
Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# FineWeb-2 hashes MinHash shingles with xxhash; datatrove 0.10.1 passes str to xxhash, which xxhash>=4 rejects
# ("Strings must be encoded before hashing"), so the bench uses datatrove's sha1 option (same 64-bit precision).
HASH_FC = "sha1"

FW2_KOR = dict(  # FineWeb-2 configs/kor_Hang.yml + fineweb-2-pipeline.py settings
    rep=dict(dup_para_frac=0, dup_line_char_frac=0, dup_para_char_frac=0, dup_line_frac=0.374,
             top_n_grams=((2, 0.282), (3, 0.228), (4, 0.185)),
             dup_n_grams=((5, 0.201), (6, 0.184), (7, 0.168), (8, 0.154), (9, 0.14), (10, 0.127))),
    fw=dict(short_line_thr=999, char_duplicates_ratio=0.1, line_punct_thr=0.062, new_line_ratio=0.196),
    gq=dict(max_avg_word_length=6, min_avg_word_length=1, max_non_alpha_words_ratio=0.791, min_stop_words=2,
            stop_words=["의", "다", "이", "는", "에", "을", "한", "년", "하", "은", "를", "했", "고", "에서", "가", "있",
                        "으로", "인", "월", "로", "되"]),
)


# --------------------------------------------------------------------------------------------- input
def build_sample(data_dir: Path, mb: float, out: Path) -> dict:
    from corpora.shards import Doc, doc_id, meta_json, shard_name, write_docs

    corpus = data_dir / "corpus"
    budget = {"kowiki": 0.6 * mb * 1e6, "nsmc": 0.4 * mb * 1e6}
    docs: list[Doc] = []
    with open(corpus / "kowiki_sections.txt", encoding="utf-8") as f:
        used, block, i = 0, [], 0
        for line in f:
            if line.strip():
                block.append(line.rstrip("\n"))
                continue
            if block:
                t = "\n".join(block)
                docs.append(Doc(doc_id("kowiki", "kowiki_sections.txt", i), t, "kowiki", meta_json({})))
                used += len(t.encode())
                i += 1
                block = []
                if used >= budget["kowiki"]:
                    break
    with open(corpus / "nsmc_reviews.txt", encoding="utf-8") as f:
        used = 0
        for i, line in enumerate(f):
            t = line.rstrip("\n")
            if t:
                docs.append(Doc(doc_id("nsmc", "nsmc_reviews.txt", i), t, "nsmc", meta_json({})))
                used += len(t.encode())
                if used >= budget["nsmc"]:
                    break
    out.mkdir(parents=True, exist_ok=True)
    per = 5000
    for s in range(0, len(docs), per):
        write_docs(out / "shards" / shard_name(s // per), docs[s : s + per])
    with open(out / "docs.jsonl", "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"id": d.id, "text": d.text}, ensure_ascii=False) + "\n")
    return {"docs": len(docs), "bytes": sum(len(d.text.encode()) for d in docs)}


def load_texts(data: Path) -> list[str]:
    with open(data / "docs.jsonl", encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


def klue_dev_files() -> list[Path]:
    k = Path(os.environ.get("KLUE_DATA_DIR", ROOT.parent / "shared" / "data")) / "klue"
    return [k / p for p in ("ynat/ynat-v1_dev.json", "sts/klue-sts-v1.1_dev.json", "nli/klue-nli-v1.1_dev.json",
                            "ner/klue-ner-v1.1_dev.tsv", "re/klue-re-v1.1_dev.json", "dp/klue-dp-v1.1_dev.tsv",
                            "mrc/korquad-v1.0_dev.json")]


# --------------------------------------------------------------------------------------------- measurements
def _eojeol_tokenizer():
    from datatrove.utils.word_tokenizers import WordTokenizer

    class EojeolTokenizer(WordTokenizer):
        def word_tokenize(self, text):
            return text.split()

        def sent_tokenize(self, text):
            return text.split("\n")

        def span_tokenize(self, text):
            raise NotImplementedError

    return EojeolTokenizer("ko")


def _datatrove_filters(language):
    from datatrove.pipeline.filters import FineWebQualityFilter, GopherQualityFilter, GopherRepetitionFilter

    return {
        "gopher_repetition": GopherRepetitionFilter(language=language, **FW2_KOR["rep"]),
        "fineweb_quality": FineWebQualityFilter(language=language, **FW2_KOR["fw"]),
        "gopher_quality": GopherQualityFilter(language=language, **FW2_KOR["gq"]),
    }


def child(kind: str, data: Path) -> dict:
    """One measurement; returns seconds and the number of documents it covered."""
    if kind.startswith("ours-filter:") or kind == "ours-chain":
        from corpora.filters import FILTERS, FilterChain
        from corpora.filters.base import DocView, Transform
        from corpora.lang import get_language
        from corpora.normalize import Normalizer
        from corpora.stages.filter import FilterParams

        raw = load_texts(data)
        if kind == "ours-chain":  # normalize + all filters, first failure ends a document (as datatrove)
            chain = FilterChain(FilterParams(language="ko", would_fail_stats=False))
            kept = 0
            t = time.perf_counter()
            for x in raw:
                kept += chain(x).reason is None
            return {"seconds": time.perf_counter() - t, "docs": len(raw), "kept": kept}
        name = kind.split(":", 1)[1]
        lang = get_language("ko")
        if name == "normalize":
            norm = Normalizer()
            t = time.perf_counter()
            for x in raw:
                norm(x)
            return {"seconds": time.perf_counter() - t, "docs": len(raw)}
        texts = [Normalizer()(x) for x in raw]
        f = FILTERS[name](FilterParams(language="ko").thresholds_for(None), lang)
        t = time.perf_counter()
        if isinstance(f, Transform):
            for x in texts:
                f.apply(x)
        else:
            for x in texts:
                f.check(DocView(x, lang))
        return {"seconds": time.perf_counter() - t, "docs": len(texts)}
    if kind in ("ours-filter-stage", "ours-dedup", "ours-decontaminate"):
        import types

        from corpora.stages.decontaminate import DecontaminateStage
        from corpora.stages.dedup import DedupStage
        from corpora.stages.filter import FilterStage
        from pipeline.stage import StageContext, StageInput

        stage, inp = {"ours-filter-stage": (FilterStage(), "collect"), "ours-dedup": (DedupStage(), "filter"),
                      "ours-decontaminate": (DecontaminateStage(), "dedup")}[kind]
        params = stage.params_model()
        if kind == "ours-decontaminate":  # the index build (all seven KLUE dev files) is part of the time
            params = stage.params_model(benchmarks=[{"path": str(p)} for p in klue_dev_files()])
        with tempfile.TemporaryDirectory() as out:
            ctx = (_global_step_context() if kind == "ours-dedup" else StageContext)(out_dir=Path(out), params=params,
                               inputs={inp: StageInput(inp, data / "shards", {"meta": {}})},
                               recipe=types.SimpleNamespace(seed=42, sources=[]), workers=1)
            t = time.perf_counter()
            res = stage.run(ctx)
            dt = time.perf_counter() - t
        return {"seconds": dt, "docs": res.funnel.docs_in, "kept": res.funnel.docs_kept,
                "dropped": dict(res.funnel.dropped), **_GLOBAL_STEP}
    if kind.startswith("dt-filter:") or kind == "dt-chain":
        from datatrove.data import Document

        raw = load_texts(data)
        docs = [Document(text=x, id=str(i)) for i, x in enumerate(raw)]
        filters = _datatrove_filters(_eojeol_tokenizer())
        chosen = list(filters.values()) if kind == "dt-chain" else [filters[kind.split(":", 1)[1]]]
        kept = 0
        t = time.perf_counter()
        for d in docs:
            kept += all(_passes(f.filter(d)) for f in chosen)
        return {"seconds": time.perf_counter() - t, "docs": len(docs), "kept": kept}
    if kind == "dt-minhash":
        return _datatrove_minhash(data, _eojeol_tokenizer())
    if kind.startswith("dtk-filter:") or kind == "dtk-chain":  # datatrove's real Korean path
        from datatrove.data import Document
        from datatrove.utils.word_tokenizers import load_word_tokenizer

        raw = load_texts(data)
        docs = [Document(text=x, id=str(i)) for i, x in enumerate(raw)]
        filters = _datatrove_filters("kor_Hang")
        chosen = list(filters.values()) if kind == "dtk-chain" else [filters[kind.split(":", 1)[1]]]
        t = time.perf_counter()
        load_word_tokenizer("kor_Hang").word_tokenize("모델을 미리 읽는다.")  # Kiwi's model load is not timed
        load_s = time.perf_counter() - t
        kept = 0
        t = time.perf_counter()
        for d in docs:
            kept += all(_passes(f.filter(d)) for f in chosen)  # all() stops at the first failure, as datatrove
        return {"seconds": time.perf_counter() - t, "docs": len(docs), "kept": kept, "kiwi_load_s": load_s}
    if kind == "dtk-minhash":  # fresh process: Kiwi is still unloaded when the executor deep-copies the pipeline
        return _datatrove_minhash(data, "kor_Hang")
    if kind == "dtk-minhash-after-filter":
        # The issue's failure, as a FineWeb-2-style script meets it: the filter step runs (in this process, as
        # LocalPipelineExecutor does with workers=1) before the MinHash steps. The filters load Kiwi into the
        # process-wide cached KiwiTokenizer that MinhashDedupSignature(language="kor_Hang") also holds, and the
        # executor's deepcopy of the MinHash pipeline then meets a live Kiwi object.
        from datatrove.executor import LocalPipelineExecutor
        from datatrove.pipeline.readers import JsonlReader

        with tempfile.TemporaryDirectory() as tmp:
            pipe = [JsonlReader(str(data), glob_pattern="docs.jsonl", limit=50), *_datatrove_filters("kor_Hang").values()]
            LocalPipelineExecutor(pipeline=pipe, tasks=1, workers=1, logging_dir=tmp).run()
        return _datatrove_minhash(data, "kor_Hang")
    raise SystemExit(f"unknown measurement {kind}")


_GLOBAL_STEP: dict[str, float] = {}


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise KeyError(field)


def _global_step_hook(desc: str | None) -> None:
    """Brackets dedup's global step (edges of every band and hash range, connected components, the survivors'
    ids) between its first `ctx.map` ("dedup: exact") and its last ("dedup: write"). With workers=1 its tasks
    run in this process, so the peak RSS in between is the global step's: Linux resets VmHWM to the current
    RSS when "5" is written to /proc/self/clear_refs (proc(5)); the peak before the reset is kept for the
    whole-stage figure."""
    if desc == "dedup: exact":
        _GLOBAL_STEP["peak_before_reset_mb"] = _status_mb("VmHWM")
        _GLOBAL_STEP["global_start_rss_mb"] = _status_mb("VmRSS")
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    elif desc == "dedup: write":
        _GLOBAL_STEP["global_peak_rss_mb"] = _status_mb("VmHWM")


def _global_step_context():
    from pipeline.stage import StageContext

    class GlobalStepContext(StageContext):
        def map(self, fn, items, desc=None, total=None):
            _global_step_hook(desc)
            return super().map(fn, items, desc=desc, total=total)

    return GlobalStepContext


def _passes(r) -> bool:
    """datatrove filters return True, False or (False, reason)."""
    return r is True or (isinstance(r, tuple) and bool(r[0]))


def _datatrove_minhash(data: Path, language) -> dict:
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup import MinhashDedupCluster, MinhashDedupFilter, MinhashDedupSignature
    from datatrove.pipeline.dedup.minhash import MinhashConfig, MinhashDedupBuckets
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers.jsonl import JsonlWriter
    from datatrove.utils.hashing import HashConfig

    cfg = MinhashConfig(hash_config=HashConfig(hash_fc=HASH_FC, precision=64), num_buckets=14,
                        hashes_per_bucket=8, n_grams=5)  # FineWeb-2's settings
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        src = data / "docs.jsonl"

        def reader():
            return JsonlReader(str(src.parent), glob_pattern=src.name)

        steps = [
            [reader(), MinhashDedupSignature(output_folder=str(base / "sigs"), config=cfg, language=language)],
            [MinhashDedupBuckets(input_folder=str(base / "sigs"), output_folder=str(base / "buckets"), config=cfg)],
            [MinhashDedupCluster(input_folder=str(base / "buckets"), output_folder=str(base / "remove"), config=cfg)],
            [reader(), MinhashDedupFilter(input_folder=str(base / "remove")), JsonlWriter(str(base / "out"))],
        ]
        t = time.perf_counter()
        for i, pipe in enumerate(steps):
            tasks = cfg.num_buckets if i == 1 else 1
            LocalPipelineExecutor(pipeline=pipe, tasks=tasks, workers=1, logging_dir=str(base / f"logs{i}")).run()
        dt = time.perf_counter() - t
        kept = sum(1 for p in (base / "out").glob("*.jsonl*") for _ in _lines(p))
        with open(src, encoding="utf-8") as f:
            n = sum(1 for _ in f)
    return {"seconds": dt, "docs": n, "kept": kept}


def _lines(p: Path):
    import gzip

    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rt", encoding="utf-8") as f:
        yield from f


# --------------------------------------------------------------------------------------------- driver
ROWS = [  # label, ours, datatrove eojeol baseline, datatrove kor_Hang baseline (run on the --kor-mb sample)
    ("normalize", "ours-filter:normalize", None, None),
    ("boilerplate", "ours-filter:boilerplate", None, None),
    ("length", "ours-filter:length", None, None),
    ("script (Hangul ratio)", "ours-filter:script", None, None),
    ("Gopher repetition", "ours-filter:gopher_repetition", "dt-filter:gopher_repetition",
     "dtk-filter:gopher_repetition"),
    ("FineWeb quality", "ours-filter:fineweb_quality", "dt-filter:fineweb_quality", "dtk-filter:fineweb_quality"),
    ("Gopher quality", "ours-filter:gopher_quality", "dt-filter:gopher_quality", "dtk-filter:gopher_quality"),
    ("filter chain, in memory", "ours-chain", "dt-chain", "dtk-chain"),
    ("filter stage (IO, all filters scored)", "ours-filter-stage", None, None),
    ("dedup (exact + MinHash, IO)", "ours-dedup", "dt-minhash", "dtk-minhash"),
    ("decontaminate (7 KLUE dev files, IO)", "ours-decontaminate", None, None),
]
# MinHash word-splits simplify_text()'s output (lowercased, punctuation stripped), on which Kiwi ran ~20x faster
# here than on raw text (0.58 vs 0.03 MB/s), so this row affords the first-scale sample, where Kiwi's model
# load (~3.5 s, inside the time: preloading it is what breaks the executor) no longer dominates.
KOR_ON_FIRST_SCALE = {"dtk-minhash"}


def _peak_rss_mb() -> float:
    """This process's peak RSS. VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork and execve, so a
    child would report its parent's peak (the sample builder's) instead of its own."""
    try:
        return _status_mb("VmHWM")
    except (OSError, KeyError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(kind: str, data: Path) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, "--data", str(data)]
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "TQDM_DISABLE": "1"})
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def best(runs: list[dict]) -> dict:
    """The fastest run (least disturbed by the other jobs on the machine), with the highest peak RSS seen."""
    ok = [r for r in runs if "seconds" in r]
    if not ok:
        return runs[-1]
    out = dict(min(ok, key=lambda r: r["seconds"]))
    out["peak_rss_mb"] = max(r["peak_rss_mb"] for r in ok)
    out["runs"] = len(ok)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--scales", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--kor-mb", type=float, default=0.4, help="sample size for datatrove's slow kor_Hang path")
    ap.add_argument("--repeat", type=int, default=2, help="alternating runs per row; the fastest is kept")
    ap.add_argument("--only", choices=["dedup"], help="only the dedup rows (and the Ray comparison)")
    ap.add_argument("--ray-workers", type=int, default=2,
                    help="dedup on the Ray executor vs the local pool with this many workers (0: skip)")
    ap.add_argument("--child")
    ap.add_argument("--data", type=Path)
    args = ap.parse_args()
    if args.child:
        res = child(args.child, args.data)
        res["peak_rss_mb"] = max(_peak_rss_mb(), res.pop("peak_before_reset_mb", 0.0))
        print(json.dumps(res, ensure_ascii=False))
        return
    data_dir = Path(os.environ.get("KLUE_DATA_DIR", ROOT.parent / "shared" / "data"))
    if not (data_dir / "corpus").is_dir():
        raise SystemExit(f"KLUE_DATA_DIR={data_dir} has no corpus/ folder")
    from importlib.metadata import PackageNotFoundError, version

    def ver(pkg: str) -> str:
        try:
            return version(pkg)
        except PackageNotFoundError:
            return "not installed"

    t0 = time.perf_counter()
    load0 = os.getloadavg()
    print(f"datatrove {ver('datatrove')}, kiwipiepy {ver('kiwipiepy')}, kiwipiepy_model {ver('kiwipiepy_model')}; "
          f"{os.cpu_count()} cores, load average {load0[0]:.2f} at start; one core per measurement; "
          f"best of {args.repeat} alternating runs; ratio = ours MB/s / datatrove MB/s")
    rows = [r for r in ROWS if args.only is None or r[1] == "ours-dedup"]
    ray_rows: dict[int, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        results: dict[int, dict[str, dict]] = {}
        sizes = {}
        for scale in args.scales:
            d = Path(tmp) / f"x{scale}"
            sizes[scale] = build_sample(data_dir, args.mb * scale, d)
            results[scale] = {}
            for _, ours, theirs, _k in rows:
                runs: dict[str, list[dict]] = {k: [] for k in (ours, theirs) if k}
                for _ in range(args.repeat if scale == args.scales[0] else 1):  # larger scales: for RSS
                    for kind in runs:
                        runs[kind].append(measure(kind, d))
                for kind, rs in runs.items():
                    results[scale][kind] = best(rs)
                    print(f"  x{scale} {kind}: {results[scale][kind]}", file=sys.stderr, flush=True)
            if args.ray_workers:
                from bench.cluster import ray_vs_local

                ray_rows[scale] = ray_vs_local(d / "shards", Path(tmp) / f"ray{scale}", args.ray_workers,
                                               args.repeat if scale == args.scales[0] else 1)
                print(f"  x{scale} ray vs local: {ray_rows[scale]}", file=sys.stderr, flush=True)
        dk, d1 = Path(tmp) / "kor", Path(tmp) / f"x{args.scales[0]}"
        sizes["kor"] = build_sample(data_dir, args.kor_mb, dk)
        kor: dict[str, dict] = {}
        for _, ours, _t, theirs in rows:  # ours again on the same sample, alternating with datatrove kor_Hang
            if theirs:
                d, size = (d1, sizes[args.scales[0]]) if theirs in KOR_ON_FIRST_SCALE else (dk, sizes["kor"])
                runs = {ours: [], theirs: []}
                for _ in range(args.repeat):
                    for kind in runs:
                        runs[kind].append(measure(kind, d))
                for kind, rs in runs.items():
                    kor[kind] = {**best(rs), "mb": size["bytes"] / 1e6}
                    print(f"  kor {kind}: {kor[kind]}", file=sys.stderr, flush=True)
        kor["after-filter"] = measure("dtk-minhash-after-filter", dk)
    _table(results, sizes, args.scales, rows)
    _dedup_table(results, sizes, args.scales, ray_rows, args.ray_workers)
    _kor_table(kor, sizes["kor"], rows)
    load1 = os.getloadavg()
    print(f"\nload average at end {load1[0]:.2f} (1 min), {load1[1]:.2f} (5 min); bench took "
          f"{time.perf_counter() - t0:.0f}s")
    # "after-filter" documents a datatrove limitation (its Kiwi tokenizer cannot be pickled); any other
    # failed row means a ratio is missing, so the bench is no measurement: say so in the exit status.
    failed = [f"x{s} {k}" for s, rows in results.items() for k, r in rows.items() if "error" in r]
    failed += [f"kor {k}" for k, r in kor.items() if k != "after-filter" and "error" in r]
    if failed:
        raise SystemExit(f"{len(failed)} measurement(s) failed: {', '.join(failed)} (see the table's notes)")


def _rate(r: dict, mb: float) -> float | None:
    return mb / r["seconds"] if "seconds" in r else None


def _fmt(x: float | None, spec: str = ".2f") -> str:
    return format(x, spec) if x is not None else "err"


def _table(results: dict, sizes: dict, scales: list[int], rows: list) -> None:
    for scale in scales:
        mb = sizes[scale]["bytes"] / 1e6
        print(f"\n### {scale}x input: {sizes[scale]['docs']:,} docs, {mb:.1f} MB (UTF-8), one core; "
              "baseline: datatrove given eojeol (whitespace) words")
        print("| component | ours docs/s | ours MB/s | datatrove eojeol MB/s | ours/datatrove | ours peak RSS MB |"
              " datatrove peak RSS MB |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for label, ours, theirs, _k in rows:
            o = results[scale][ours]
            t = results[scale].get(theirs, {}) if theirs else {}
            docs = f"{o['docs'] / o['seconds']:,.0f}" if "seconds" in o else o.get("error", "err")
            ro, rt = _rate(o, mb), _rate(t, mb)
            ratio = f"{ro / rt:.1f}x" if ro and rt else "-"
            rss_t = f"{t['peak_rss_mb']:.0f}" if "peak_rss_mb" in t else "-"
            print(f"| {label} | {docs} | {_fmt(ro)} | {_fmt(rt) if theirs else '-'} | {ratio} | "
                  f"{o.get('peak_rss_mb', 0):.0f} | {rss_t} |")
        fs = results[scale].get("ours-filter-stage", {})
        if "dropped" in fs:
            print(f"\nfilter stage funnel: kept {fs['kept']:,} of {fs['docs']:,}; dropped {fs['dropped']}")
        dd, dt = results[scale]["ours-dedup"], results[scale].get("dt-minhash", {})
        if "kept" in dd:
            print(f"dedup kept: ours {dd['kept']:,} (of the unfiltered input), datatrove {dt.get('kept', '?')}")


def _dedup_table(results: dict, sizes: dict, scales: list[int], ray_rows: dict, workers: int) -> None:
    """The dedup stage across scales: its global step's peak RSS (it should follow the duplicates, not the
    corpus) and the Ray executor's time against the local pool's (issue goal: ray/local <= 1.3)."""
    print(f"\n### dedup across scales: global step peak RSS (one core, in-process), and the Ray executor vs the "
          f"local pool, {workers} workers each (best of the runs; Ray's start not timed)")
    print("| input | docs | MB | exact + near duplicates | global step peak RSS MB | above its start MB | "
          "whole stage peak RSS MB | local s | ray s | ray/local | same bytes |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for scale in scales:
        o = results[scale]["ours-dedup"]
        r = ray_rows.get(scale, {})
        g = o.get("global_peak_rss_mb")
        above = g - o["global_start_rss_mb"] if g is not None else None
        ray = (f"{r['local_s']:.2f} | {r['ray_s']:.2f} | {r['ratio']:.2f} | {r['same_bytes']}" if r
               else "- | - | - | -")
        print(f"| {scale}x | {sizes[scale]['docs']:,} | {sizes[scale]['bytes'] / 1e6:.1f} | "
              f"{r.get('duplicates', '-')} | {_fmt(g, '.0f')} | {_fmt(above, '.1f')} | "
              f"{o.get('peak_rss_mb', 0):.0f} | {ray} |")


def _kor_table(kor: dict, size: dict, rows: list) -> None:
    load = kor.get("dtk-chain", {}).get("kiwi_load_s")
    print(f"\n### datatrove's real Korean path (language='kor_Hang', Kiwi words), one core: filters on a "
          f"{size['bytes'] / 1e6:.2f} MB sample ({size['docs']:,} docs, same mix), MinHash on the first-scale "
          "sample; ours re-measured on the same sample, alternating. Kiwi's model load "
          f"({_fmt(load, '.1f')} s) is outside the filter times and inside the MinHash time.")
    print("| component | sample MB | datatrove kor_Hang docs/s | datatrove kor_Hang MB/s | ours MB/s | "
          "ours/datatrove | datatrove peak RSS MB | ours peak RSS MB | note |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for label, ours, _t, theirs in rows:
        if not theirs:
            continue
        t, o = kor[theirs], kor[ours]
        mb = t["mb"]
        rt, ro = _rate(t, mb), _rate(o, mb)
        docs = f"{t['docs'] / t['seconds']:,.0f}" if "seconds" in t else "err"
        ratio = f"{ro / rt:.0f}x" if ro and rt else "-"
        note = t.get("error", "")
        if theirs == "dtk-minhash":
            note = (note or f"fresh process: ran, kept {t.get('kept', '?')} of {t.get('docs', '?')}; Kiwi load "
                    "included") + "; after a kor_Hang filter step in the same process (workers=1): " + \
                (kor["after-filter"].get("error") or "ran")
        elif "kept" in t:
            note = f"datatrove kept {t['kept']:,} of {t['docs']:,}"
            if "kept" in o:
                note += f"; ours kept {o['kept']:,} (all our filters, our thresholds)"
        rss = f"{t['peak_rss_mb']:.0f}" if "peak_rss_mb" in t else "-"
        print(f"| {label} | {mb:.2f} | {docs} | {_fmt(rt, '.3f')} | {_fmt(ro)} | {ratio} | {rss} | "
              f"{o.get('peak_rss_mb', 0):.0f} | {note} |")


if __name__ == "__main__":
    main()
