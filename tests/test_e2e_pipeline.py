"""End to end: the real stages, through the `klue` CLI and the runner, on tiny real Korean sources.

The fixture (tests/fixtures/e2e/) has six source formats with planted problems: malformed records, junk
lines, exact and near duplicates, two KLUE-NLI dev sentences, PII, a cp949 gzip file. One workdir is shared
by the whole module: a two-arm run (`pii: [on, off]`) to `pii`, an identical rerun, then the same workdir
extended to `pretrain`. Other workdirs test worker-count independence and kill -9 recovery against that run.

Most runs go through `klue` in this process (click's CliRunner): the worker pool forks, so every worker
inherits the PII engine imported once below, instead of importing presidio itself. `kill -9` and the
pretraining run use a real `klue` subprocess.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from click.testing import CliRunner

from corpora.shards import count_docs, iter_docs, list_shards
from pipeline.cli import main
from pipeline.stage import Funnel

pytestmark = pytest.mark.slow

FIX = Path(__file__).parent / "fixtures" / "e2e"
RECIPE = FIX / "recipe.yaml"
REPO = Path(__file__).resolve().parents[1]
CURATION = ("collect", "filter", "dedup", "decontaminate", "pii_detect", "toxicity", "pii")
UPSTREAM = CURATION[:-1]  # shared by the pii=on and pii=off arms (toxicity: off, as by default)
DOC_STAGES = ("collect", "filter", "dedup", "decontaminate", "pii")  # write document shards
ARMS = ("pii=on", "pii=off")
# planted in the fixture sources (see the files); a test fails if the fixture and these drift apart
NLI_PREMISES = [json.loads(FIX.joinpath("benchmarks/nli_mini.json").read_text(encoding="utf-8"))[i]["premise"]
                for i in (0, 1)]
PLANTED_PII = ["010-2345-6789", "031-987-6543", "seojun.lee@example.com", "hyunwoo.choi@wiki-example.org",
               "850615-1234567", "sujin.lee@gov-example.kr"]


# ------------------------------------------------------------------------------------------------ helpers
@pytest.fixture(scope="module", autouse=True)
def _env():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KLUE_E2E_DIR", str(FIX))
        mp.setenv("TOKENIZERS_PARALLELISM", "false")
        import corpora.pii.engine  # noqa: F401 - imported once for every forked worker (see the module doc)

        yield


def klue(*args: str | Path) -> str:
    """`klue ARGS` in this process; fails the test with the command's output unless it exits 0."""
    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert res.exit_code == 0, f"klue {' '.join(map(str, args))} exited {res.exit_code}:\n{res.output}"
    return res.output


def klue_subprocess(*args: str | Path, timeout: float = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", *map(str, args)], cwd=REPO,
                          env=dict(os.environ), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"klue {' '.join(map(str, args))} exited {proc.returncode}:\n" \
                                 f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc


def sha256(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def tree(wd: Path, stages: tuple[str, ...], manifests: bool = False) -> dict[str, str]:
    """sha256 of every file of every stage folder, keyed by path relative to the workdir (`stage/key/file`).

    Manifests hold timings and the worker count, so they are left out unless asked for."""
    out = {}
    for st in stages:
        for d in sorted((wd / st).iterdir()):
            assert not d.name.endswith((".partial", ".old")), f"left-over folder {d}"
            for p in sorted(d.rglob("*")):
                if p.is_file() and (manifests or p.name != "manifest.json"):
                    out[p.relative_to(wd).as_posix()] = sha256(p)
    return out


def arm_manifests(wd: Path, run: dict, arm: str) -> dict[str, dict]:
    rec = next(a for a in run["arms"] if a["name"] == arm)
    return {s["stage"]: json.loads((wd / s["path"] / "manifest.json").read_text(encoding="utf-8"))
            for s in rec["stages"]}


def statuses(run: dict) -> dict[str, dict[str, str]]:
    return {a["name"]: {s["stage"]: s["status"] for s in a["stages"]} for a in run["arms"]}


def docs(folder: Path) -> list:
    return [d for shard in list_shards(folder) for d in iter_docs(shard)]


def texts_by_id(folder: Path) -> dict[str, str]:
    return {d.id: d.text for d in docs(folder)}


def funnel_sum(funnels: list[dict]) -> dict:
    total = Funnel()
    for f in funnels:
        total.add(Funnel.from_json(f))
    return total.to_json()


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> SimpleNamespace:
    """The two-arm run to `pii` (workers=2), its report, and an identical second run."""
    wd = tmp_path_factory.mktemp("e2e") / "main"
    out1 = klue("run", RECIPE, "--workdir", wd, "--until", "pii", "--workers", "2")
    run1 = json.loads((wd / "run.json").read_text(encoding="utf-8"))
    files1 = tree(wd, CURATION, manifests=True)
    mtimes1 = {p: (wd / p).stat().st_mtime_ns for p in files1}
    report = json.loads(klue("report", wd, "--format", "json"))
    out2 = klue("run", RECIPE, "--workdir", wd, "--until", "pii", "--workers", "2")
    run2 = json.loads((wd / "run.json").read_text(encoding="utf-8"))
    return SimpleNamespace(wd=wd, out1=out1, run1=run1, files1=files1, mtimes1=mtimes1, report=report,
                           out2=out2, run2=run2)


# ------------------------------------------------------------------------ 1. counts, report, shared arms
def test_every_funnel_reconciles_per_source_and_chains_from_stage_to_stage(run):
    assert run.run1["status"] == "ok"
    for arm in ARMS:
        ms = arm_manifests(run.wd, run.run1, arm)
        assert list(ms) == list(CURATION)
        for st, m in ms.items():
            if st == "toxicity":  # off by default: it reads no document, so it has no funnel
                assert m["funnel"] is None and m["meta"]["report"] == {"enabled": False}, m
                continue
            f = Funnel.from_json(m["funnel"])
            assert f.problems() == [], (arm, st)
            assert f.docs_in > 0, (arm, st)
            for src, sf in m["by_source"].items():
                assert Funnel.from_json(sf).problems() == [], (arm, st, src)
            assert funnel_sum(list(m["by_source"].values())) == m["funnel"], (arm, st)
        # nothing is lost between stages: each stage reads exactly what the one before it kept, per source
        chain = [("collect", "filter"), ("filter", "dedup"), ("dedup", "decontaminate"),
                 ("decontaminate", "pii_detect"), ("decontaminate", "pii")]
        for up, down in chain:
            assert ms[down]["funnel"]["docs_in"] == ms[up]["funnel"]["docs_kept"], (arm, up, down)
            assert ms[down]["funnel"]["chars_in"] == ms[up]["funnel"]["chars_kept"], (arm, up, down)
            for src, sf in ms[down]["by_source"].items():
                assert sf["docs_in"] == ms[up]["by_source"][src]["docs_kept"], (arm, up, down, src)
        # and what a stage says it kept is what its shards hold
        for st in DOC_STAGES:
            folder = run.wd / next(s["path"] for a in run.run1["arms"] if a["name"] == arm
                                   for s in a["stages"] if s["stage"] == st)
            assert sum(count_docs(p) for p in list_shards(folder)) == ms[st]["funnel"]["docs_kept"], (arm, st)
    # every source reaches the end of the curation
    assert set(arm_manifests(run.wd, run.run1, "pii=on")["pii"]["by_source"]) == \
        {"news", "wiki", "posts", "qa", "reviews", "comments", "law"}


def test_report_json_numbers_equal_the_manifests(run):
    rep = run.report
    assert rep["problems"] == []
    assert rep["status"] == "ok"
    assert [a["name"] for a in rep["arms"]] == list(ARMS)
    for a in rep["arms"]:
        ms = arm_manifests(run.wd, run.run1, a["name"])
        assert [s["stage"] for s in a["stages"]] == list(CURATION)
        for s in a["stages"]:
            m = ms[s["stage"]]
            assert s["key"] == m["key"]
            assert s["funnel"] == m["funnel"]
            assert s["by_source"] == m["by_source"]
            assert s["checks"] == []
            assert s["report"] == m["meta"].get("report", {})
    # the side-by-side comparison marks the upstream keys as shared and the pii keys as distinct
    comp = rep["comparison"]
    assert json.dumps(comp)  # plain JSON
    md = klue("report", run.wd)
    assert "pii=on" in md and "pii=off" in md and (run.wd / "report.md").is_file()


def test_arms_share_every_upstream_stage_and_compute_it_once(run):
    keys = {a["name"]: {s["stage"]: s["key"] for s in a["stages"]} for a in run.run1["arms"]}
    shared = {a["name"]: {s["stage"]: s["shared_with"] for s in a["stages"]} for a in run.run1["arms"]}
    for st in UPSTREAM:
        assert keys["pii=on"][st] == keys["pii=off"][st], st
        assert shared["pii=on"][st] == ["pii=off"] and shared["pii=off"][st] == ["pii=on"], st
        # one folder per upstream stage in the workdir, and both arms' links point at it
        assert [d.name for d in (run.wd / st).iterdir()] == [keys["pii=on"][st][:16]], st
        assert (run.wd / "arms/pii=on" / st).resolve() == (run.wd / "arms/pii=off" / st).resolve()
    assert keys["pii=on"]["pii"] != keys["pii=off"]["pii"]
    assert shared["pii=on"]["pii"] == [] and shared["pii=off"]["pii"] == []
    assert sorted(d.name for d in (run.wd / "pii").iterdir()) == sorted(keys[a]["pii"][:16] for a in ARMS)
    # the console says so too: each upstream stage ran once "all 2 arms", pii once per arm
    lines = re.findall(r"[✓·] (\w+) +(ran|skipped) .*", run.out1)  # progress bars share the lines
    assert [m[:2] for m in lines] == [(st, "ran") for st in UPSTREAM] + [("pii", "ran")] * 2
    printed = re.findall(r"[✓·] \w+ +\w+ .*", run.out1)
    assert all(ln.endswith("all 2 arms") for ln in printed[: len(UPSTREAM)]), printed


def test_pii_arms_have_the_same_documents_and_differ_only_inside_detected_spans(run):
    from corpora.pii.replace import placeholder_token
    from corpora.pii.spans import read_spans

    on, off = run.wd / "arms/pii=on/pii", run.wd / "arms/pii=off/pii"
    decon, detect = run.wd / "arms/pii=on/decontaminate", run.wd / "arms/pii=on/pii_detect"
    assert [p.name for p in list_shards(on)] == [p.name for p in list_shards(off)] == \
        [p.name for p in list_shards(decon)]
    on_docs, off_docs = docs(on), docs(off)
    assert [d.id for d in on_docs] == [d.id for d in off_docs]
    assert [(d.source, d.meta) for d in on_docs] == [(d.source, d.meta) for d in off_docs]
    # pii=off is the decontaminated corpus, unchanged
    assert [(d.id, d.text) for d in off_docs] == [(d.id, d.text) for d in docs(decon)]

    spans: dict[str, list] = {}
    for p in sorted(detect.glob("spans-*.parquet")):
        spans.update(read_spans(p))
    changed = 0
    for a, b in zip(on_docs, off_docs, strict=True):
        ss = sorted(spans.get(a.id, []), key=lambda s: s.start)
        if not ss:
            assert a.text == b.text, a.id
            continue
        changed += 1
        # text outside the spans is identical; each span became its type's placeholder
        expected, pos = [], 0
        for s in ss:
            assert s.start >= pos, f"{a.id}: overlapping spans {ss}"
            expected += [b.text[pos:s.start], placeholder_token(s.type)]
            pos = s.end
        expected.append(b.text[pos:])
        assert a.text == "".join(expected), a.id
    assert changed == run.report["arms"][0]["stages"][4]["report"]["docs_with_pii"] >= 5
    on_all, off_all = "\n".join(d.text for d in on_docs), "\n".join(d.text for d in off_docs)
    for value in PLANTED_PII:
        assert value in off_all and value not in on_all, value
    diff = json.loads((on / "diff.json").read_text(encoding="utf-8"))
    assert diff["docs_changed"] == changed


def test_planted_problems_end_where_they_should(run):
    wd = run.wd / "arms/pii=on"
    # malformed records: quarantined with file, location and reason, not dropped silently
    q = [json.loads(ln) for f in sorted((wd / "collect/quarantine").glob("*.jsonl"))
         for ln in f.read_text(encoding="utf-8").splitlines()]
    assert sorted((r["source"], r["file"], r["location"], r["reason"]) for r in q) == [
        ("posts", "2024-01.jsonl", "line 4", "bad_json"),
        ("posts", "2024-01.jsonl", "line 6", "missing_text"),
        ("posts", "2024-02.jsonl", "line 3", "null_text"),
        ("qa", "qa.csv", "row 18 (line 19)", "ragged_row"),
    ]
    collect_m = json.loads((wd / "collect/manifest.json").read_text(encoding="utf-8"))
    assert collect_m["funnel"]["quarantined"] == len(q)
    assert collect_m["meta"]["sources"]["law"]["empty_files"] == 1
    collected = texts_by_id(wd / "collect")
    final = texts_by_id(wd / "pii")
    # the KLUE-NLI dev sentences: exactly the documents holding them are dropped as contaminated
    contaminated = [json.loads(ln) for f in sorted((wd / "decontaminate").glob("dropped-*.jsonl"))
                    for ln in f.read_text(encoding="utf-8").splitlines()]
    holding = sorted(i for i, t in collected.items() if any(p in t for p in NLI_PREMISES))
    assert len(holding) == 2
    assert sorted(r["id"] for r in contaminated) == holding
    assert all(r["benchmarks"] == ["klue_nli_dev"] for r in contaminated)
    # exact duplicates: one copy survives
    for line in ["정부는 올해 하반기부터 청년 주거 지원 사업을 확대하겠다고 밝혔다.",
                 "배우들의 연기가 정말 훌륭했고 마지막 장면에서는 눈물이 났어요."]:
        assert sum(t == line for t in collected.values()) == 2
        assert sum(t == line for t in final.values()) == 1
    # junk lines never reach the corpus
    for junk in ["ㅋㅋㅋㅋㅋㅋㅋㅋ", "!!!!!!!!!!!!!!!!!!!!!!", "========================================",
                 "http://example.com/news/2024/article?id=12345&ref=main"]:
        assert junk in collected.values() and junk not in final.values()
    # the cp949, gzip-compressed source arrives decoded
    assert "도서관이 새로 생긴다니 정말 반가운 소식이네요." in final.values()
    dedup_m = json.loads((wd / "dedup/manifest.json").read_text(encoding="utf-8"))
    assert dedup_m["funnel"]["dropped"].get("near_duplicate", 0) >= 2


# ---------------------------------------------------------------------------------- 2. an identical rerun
def test_second_identical_run_skips_every_stage_and_changes_nothing(run):
    assert run.run2["status"] == "ok"
    assert statuses(run.run2) == {a: dict.fromkeys(CURATION, "skipped") for a in ARMS}
    assert tree(run.wd, CURATION, manifests=True) == run.files1
    assert {p: (run.wd / p).stat().st_mtime_ns for p in run.files1} == run.mtimes1
    assert [s["key"] for a in run.run2["arms"] for s in a["stages"]] == \
        [s["key"] for a in run.run1["arms"] for s in a["stages"]]


def test_the_same_sources_copied_elsewhere_reuse_every_stage(run, tmp_path, monkeypatch):
    """Keys follow file contents: a copied fixture (new folder, new mtimes) and a copied workdir skip all."""
    fix = tmp_path / "fixture-copy"
    shutil.copytree(FIX, fix)  # copytree keeps mtimes by default: set new ones, as a download would
    for f in fix.rglob("*"):
        os.utime(f, ns=(time.time_ns(), time.time_ns()))
    wd = tmp_path / "wd"
    shutil.copytree(run.wd, wd, symlinks=True)
    monkeypatch.setenv("KLUE_E2E_DIR", str(fix))
    klue("run", fix / "recipe.yaml", "--workdir", wd, "--until", "pii", "--workers", "2")
    again = json.loads((wd / "run.json").read_text(encoding="utf-8"))
    assert statuses(again) == {a: dict.fromkeys(CURATION, "skipped") for a in ARMS}
    line = fix / "sources" / "news_lines.txt"
    line.write_text(line.read_text(encoding="utf-8") + "새로 더한 문서 한 줄입니다.\n", encoding="utf-8")
    klue("run", fix / "recipe.yaml", "--workdir", wd, "--until", "collect")
    edited = json.loads((wd / "run.json").read_text(encoding="utf-8"))
    assert statuses(edited)["pii=on"] == {"collect": "ran"}


# ------------------------------------------------------------------------------------ 3. worker count
def test_one_worker_writes_the_same_bytes_as_two(run, tmp_path):
    wd = tmp_path / "w1"
    klue("run", RECIPE, "--workdir", wd, "--until", "pii", "--workers", "1")
    run1w = json.loads((wd / "run.json").read_text(encoding="utf-8"))
    assert run1w["workers"] == 1 and run.run1["workers"] == 2
    ones, twos = tree(wd, CURATION), tree(run.wd, CURATION)
    assert len(twos) > 50  # shards, spans, audit files, quarantine
    assert ones == twos
    for arm in ARMS:  # the runner's own file tables and funnels agree as well
        m1, m2 = arm_manifests(wd, run1w, arm), arm_manifests(run.wd, run.run1, arm)
        for st in CURATION:
            assert m1[st]["files"] == m2[st]["files"], (arm, st)
            assert m1[st]["funnel"] == m2[st]["funnel"] and m1[st]["meta"] == m2[st]["meta"], (arm, st)


# ------------------------------------------------------------------------------------------- 4. kill -9
def test_kill_9_during_a_real_stage_then_rerun_gives_the_uninterrupted_bytes(run, tmp_path):
    wd = tmp_path / "killed"
    log = open(tmp_path / "killed.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "run", str(RECIPE), "--workdir", str(wd),
                             "--until", "pii", "--workers", "1"], cwd=REPO, env=dict(os.environ),
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    killed_in = None
    deadline = time.monotonic() + 120
    try:
        # wait until collect is done and a later stage has started writing, then kill the whole group
        while killed_in is None and time.monotonic() < deadline:
            assert proc.poll() is None, "klue run finished before it could be killed:\n" + \
                (tmp_path / "killed.log").read_text(errors="replace")[-3000:]
            if list(wd.glob("collect/*/manifest.json")):
                for st in CURATION[1:]:
                    partial = next(iter(wd.glob(f"{st}/*.partial")), None)
                    if partial is not None and any(p.is_file() for p in partial.rglob("*")):
                        os.killpg(proc.pid, signal.SIGKILL)
                        killed_in = st
                        break
            time.sleep(0.005)
    finally:
        if proc.poll() is None and killed_in is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        log.close()
    assert killed_in is not None, "no later stage started within 120 s"
    print(f"killed during {killed_in}")
    assert proc.returncode == -signal.SIGKILL
    assert list(wd.glob(f"{killed_in}/*.partial")), "the kill left no partial folder"
    assert not list(wd.glob(f"{killed_in}/*/manifest.json"))

    klue("run", RECIPE, "--workdir", wd, "--until", "pii", "--workers", "1")
    resumed = statuses(json.loads((wd / "run.json").read_text(encoding="utf-8")))
    assert resumed["pii=on"]["collect"] == "skipped"
    assert resumed["pii=on"][killed_in] == "ran"
    assert tree(wd, CURATION) == tree(run.wd, CURATION)


# -------------------------------------------------------------------------------------- 5. pretraining
def test_the_recipe_runs_to_pretrain_and_the_model_fills_a_korean_mask(run):
    proc = klue_subprocess("run", RECIPE, "--workdir", run.wd, "--workers", "2", "--set", "variants=null")
    rec = json.loads((run.wd / "run.json").read_text(encoding="utf-8"))
    st = statuses(rec)
    assert list(st) == ["default"], proc.stdout
    # the single arm `default` (pii on) reuses the curation of the pii=on arm
    assert st["default"] == {**dict.fromkeys(CURATION, "skipped"),
                             **dict.fromkeys(("pretokenize", "vocab", "encode", "pretrain", "finetune"), "ran")}
    keys = {s["stage"]: s["key"] for s in rec["arms"][0]["stages"]}
    assert keys["pii"] == next(s["key"] for a in run.run1["arms"] if a["name"] == "pii=on"
                               for s in a["stages"] if s["stage"] == "pii")
    ms = arm_manifests(run.wd, rec, "default")
    for stage in ("pretokenize", "encode"):
        assert Funnel.from_json(ms[stage]["funnel"]).problems() == []
        assert ms[stage]["funnel"]["docs_in"] == ms["pii"]["funnel"]["docs_kept"], stage
    assert ms["pretrain"]["meta"]["report"]["steps"] == 3

    from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline

    final = run.wd / "arms/default/pretrain/final"
    assert (final / "model.safetensors").is_file()
    tok = AutoTokenizer.from_pretrained(final)
    model = AutoModelForMaskedLM.from_pretrained(final)
    assert model.config.vocab_size == len(tok) == ms["vocab"]["meta"]["vocab_size"]
    # the PII placeholders survive tokenization as single tokens
    for t in ms["pii"]["meta"]["placeholder_tokens"]:
        assert tok.tokenize(t) == [t] and t in tok.tokenize(f"연락처는 {t}입니다."), t
    sentence = "서울은 대한민국의 수도이며 한강이 도시를 가로질러 흐른다."
    ids = tok(sentence)["input_ids"]
    assert ids.count(tok.unk_token_id) <= len(ids) // 4, tok.convert_ids_to_tokens(ids)
    fill = pipeline("fill-mask", model=model, tokenizer=tok)
    preds = fill(f"서울은 대한민국의 {tok.mask_token}이며 한강이 도시를 가로질러 흐른다.", top_k=5)
    assert len(preds) == 5
    scores = [p["score"] for p in preds]
    assert scores == sorted(scores, reverse=True) and 0 < sum(scores) <= 1.0 + 1e-6
    assert len({p["token"] for p in preds}) == 5 and all(0 <= p["token"] < len(tok) for p in preds)


def test_the_pipeline_goes_on_into_fine_tuning_and_the_report_page_shows_every_section(run):
    """The graph after pretrain: the finetune stage fine-tunes the pipeline's own model on two tasks (2 seeds,
    against random init and the TF-IDF floor), then `klue report` writes report.md and a self-contained
    report.html, which a real headless Chromium renders with every section and every image loaded."""
    from testkit.browser import chromium, page_facts
    from testkit.finetune import FX

    sets = ["--set", "variants=null", "--set", "stages.finetune.tasks=[ynat, nli]",
            "--set", f"stages.finetune.data_dir={FX}", "--set", "stages.finetune.seeds=[1, 2]",
            "--set", "stages.finetune.vs_random_init=true", "--set", "stages.finetune.max_steps=2",
            "--set", "stages.finetune.threads=1"]
    ran = klue_subprocess("run", RECIPE, "--workdir", run.wd, "--workers", "2", *sets)
    rec = json.loads((run.wd / "run.json").read_text(encoding="utf-8"))
    assert statuses(rec)["default"]["finetune"] == "ran" and statuses(rec)["default"]["pretrain"] == "skipped"
    ms = arm_manifests(run.wd, rec, "default")
    tasks = ms["finetune"]["meta"]["tasks"]
    assert set(tasks) == {"ynat", "nli"}
    assert set(tasks["ynat"]) == {"pretrained", "random-init", "floor:no-model", "floor:majority"}
    assert ms["finetune"]["meta"]["runs"] == [
        "ynat/pretrained", "ynat/random-init", "ynat/floor-no-model", "ynat/floor-majority",
        "nli/pretrained", "nli/random-init", "nli/floor-no-model", "nli/floor-majority"]

    proc = klue_subprocess("report", run.wd, "--arm", "default")
    html = run.wd / "report.default.html"
    assert f"report: {html}" in proc.stderr
    md = (run.wd / "report.default.md").read_text(encoding="utf-8")
    titles = ["Verdict", "Curation funnel", "PII detected", "PII replaced, per arm", "Tokenizer", "Pretraining",
              "Fine-tuning"]
    assert [line[3:] for line in md.splitlines() if line.startswith("## ")][:len(titles)] == titles
    # the verdict, right under the header: fine-tuning against random init (2 tasks), then the order gain
    head, verdict = md.split("\n## Verdict\n\n", 1)
    assert head.splitlines()[-1].startswith("- klue-pipeline ")
    verdict_lines = verdict.split("\n\n", 1)[0].splitlines()
    assert verdict_lines[0].startswith("- Pretraining beat random init on ") and " of 2 tested tasks and lost on " \
        in verdict_lines[0]
    assert verdict_lines[-1].startswith("- Order gain ") and " nats at the end of pretraining (" in verdict_lines[-1]
    # and `klue run` printed the same lines at its end, after the report's path
    assert f"Report: {run.wd / 'report.html'}" in ran.stdout
    assert ran.stdout.splitlines()[-len(verdict_lines) - 1:] == ["Verdict:", *verdict_lines]
    for name in ("funnel", "pii_types", "loss", "finetune", "verdict-forest"):
        assert f"](report_files/{name}.default.png)" in md and (run.wd / f"report_files/{name}.default.png").is_file()
    assert "| pretrained ¹ |" in md and "| random init ¹ |" in md and "| majority-class floor |" in md and "KLUE-RoBERTa-base" in md
    # both arms ran with the same capped steps (a departure from KLUE-baseline's whole epochs): one footnote names it
    assert "\n¹ departs from KLUE-baseline's defaults" in md and "max_steps " in md.split("\n¹ departs", 1)[1]
    if chromium() is None:
        pytest.skip("no Chromium on PATH (Debian's `chromium` package; .ci/run installs it): the page was "
                    "written but not rendered")
    facts = page_facts(html)
    assert facts["title"] == "Run report: e2e-tiny"
    assert [h["text"] for h in facts["h2"]][:len(titles)] == titles
    assert facts["lead"] == ["H1", "UL"]  # nothing between the header and the verdict
    assert facts["h2"][0]["body"].splitlines() == [line[2:] for line in verdict_lines]  # shown, as bullets
    assert len(facts["images"]) >= 4
    assert all(i["complete"] and i["width"] > 100 and i["height"] > 100 and i["inline"] for i in facts["images"])
    assert facts["external"] == [] and facts["tables"] >= 10


def test_raising_max_steps_continues_the_finished_pretraining_from_its_last_checkpoint(run):
    """A longer run of a finished pretraining is a new key that starts from the parent's final checkpoint and
    records it: the first steps of its metrics are the parent's, byte for byte, and it trains only the rest."""
    klue_subprocess("run", RECIPE, "--workdir", run.wd, "--workers", "2", "--set", "variants=null",
                    "--until", "pretrain")
    parent = (run.wd / "arms/default/pretrain").resolve()
    parent_rows = (parent / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads((parent / "manifest.json").read_text())["meta"]["report"]["steps"] == 3
    proc = klue_subprocess("run", RECIPE, "--workdir", run.wd, "--workers", "2", "--set", "variants=null",
                           "--until", "pretrain", "--set", "stages.pretrain.max_steps=5")
    child = (run.wd / "arms/default/pretrain").resolve()
    assert child != parent and "resuming from step-00000003" in proc.stdout + proc.stderr
    meta = json.loads((child / "manifest.json").read_text())["meta"]
    assert meta["parent"] == {"key": json.loads((parent / "manifest.json").read_text())["key"],
                              "folder": parent.name, "step": 3}
    rows = (child / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    assert rows[:len(parent_rows)] == parent_rows and [json.loads(r)["step"] for r in rows] == [1, 2, 3, 4, 5]
    assert meta["report"]["steps"] == 5 and (child / "final" / "model.safetensors").is_file()


# -------------------------------------------------------------------------------------- 6. shared data
@pytest.mark.shared_data
def test_klue_tiny_cpu_recipe_runs_to_decontaminate_on_a_bounded_sample(shared_data, tmp_path):
    recipe = REPO / "recipes" / "klue-tiny-cpu.yaml"
    n_sources = len(yaml.safe_load(recipe.read_text(encoding="utf-8"))["sources"])
    wd = tmp_path / "tiny"
    sets = [a for i in range(n_sources) for a in ("--set", f"sources.{i}.max_docs=200")]
    klue_subprocess("run", recipe, "--workdir", wd, "--until", "decontaminate", "--workers", "2", *sets)
    rec = json.loads((wd / "run.json").read_text(encoding="utf-8"))
    assert rec["status"] == "ok"
    ms = arm_manifests(wd, rec, rec["arms"][0]["name"])
    assert list(ms) == ["collect", "filter", "dedup", "decontaminate"]
    collect = ms["collect"]
    assert len(collect["by_source"]) == n_sources
    for src, f in collect["by_source"].items():
        assert f["docs_kept"] == 200 or not collect["meta"]["sources"][src]["max_docs_reached"], src
        assert f["docs_kept"] <= 200, src
    for st, m in ms.items():
        assert Funnel.from_json(m["funnel"]).problems() == [], st
        assert funnel_sum(list(m["by_source"].values())) == m["funnel"], st
    report = json.loads(klue("report", wd, "--format", "json"))
    assert report["problems"] == []
    assert Counter(s["status"] for s in rec["arms"][0]["stages"]) == Counter(ran=4)
