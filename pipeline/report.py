"""The run report: what each stage of each arm did to the documents, and what the stages say about themselves.

Built only from files (`run.json` and the manifests it points to), so it can be regenerated at any time and
describes exactly the outputs on disk. The accounting is re-checked here rather than trusted: a funnel that
does not reconcile (in = kept + dropped + quarantined, per source and in total) is flagged at the top of the
report, because a silently lost document is the kind of bug nobody finds later.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.manifest import MANIFEST, result_problems
from pipeline.runner import RUN_JSON
from pipeline.stage import Funnel, StageResult


class ReportError(ValueError):
    pass


def build_report(workdir: str | Path, arm: str | None = None) -> dict[str, Any]:
    """The report as plain JSON-able data (what `klue report --format json` prints)."""
    workdir = Path(workdir)
    try:
        run = json.loads((workdir / RUN_JSON).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(f"{workdir}: no {RUN_JSON} here; run `klue run RECIPE --workdir {workdir}` first") \
            from None
    except ValueError as e:
        raise ReportError(f"{workdir / RUN_JSON}: not valid JSON: {e}") from None
    arms = run.get("arms", [])
    if arm is not None:
        names = [a["name"] for a in arms]
        if arm not in names:
            raise ReportError(f"no arm {arm!r} in {workdir / RUN_JSON}; arms: {', '.join(names)}")
        arms = [a for a in arms if a["name"] == arm]

    problems: list[str] = []
    out_arms = []
    for a in arms:
        stages = []
        for s in a["stages"]:
            stages.append(_stage_entry(workdir, a["name"], s, problems))
        out_arms.append({"name": a["name"], "values": a.get("values", {}), "stages": stages})
    report = {
        "workdir": str(workdir),
        "recipe": run.get("recipe", {}).get("name"),
        "recipe_file": run.get("recipe_file"),
        "status": run.get("status"),
        "started": run.get("started"),
        "finished": run.get("finished"),
        "klue_version": run.get("klue_version"),
        "problems": problems,
        "arms": out_arms,
    }
    if len(out_arms) > 1:
        report["comparison"] = _comparison(out_arms)
    return report


def _stage_entry(workdir: Path, arm: str, s: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"stage": s["stage"], "key": s.get("key"), "status": s.get("status"),
                             "seconds": s.get("seconds"), "path": s.get("path"), "checks": []}
    if s.get("status") == "failed" or not s.get("path"):
        entry["error"] = s.get("error")
        problems.append(f"arm {arm}: stage {s['stage']} failed: {s.get('error')}")
        return entry
    folder = workdir / s["path"]
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        entry["checks"].append(f"manifest unreadable: {e}")
        problems.append(f"arm {arm}: stage {s['stage']}: {folder / MANIFEST} unreadable ({e})")
        return entry
    funnel = manifest.get("funnel")
    by_source = manifest.get("by_source") or {}
    entry["funnel"] = funnel
    entry["by_source"] = by_source
    result = StageResult(Funnel.from_json(funnel) if funnel else None,
                         {k: Funnel.from_json(v) for k, v in by_source.items()})
    entry["checks"] = result_problems(result)
    for p in entry["checks"]:
        problems.append(f"arm {arm}: stage {s['stage']}: COUNTS DO NOT RECONCILE: {p}")
    meta = manifest.get("meta") or {}
    entry["report"] = meta.get("report") or {}
    entry["plots"] = [f"{s['path']}/{p}" for p in meta.get("plots") or []]
    entry["timings"] = manifest.get("timings")
    return entry


def _scalars(report: dict[str, Any]) -> dict[str, Any]:
    """Scalars of a stage's meta.report, one level of dicts flattened (`per_type.PERSON`)."""
    out = {}
    for k, v in report.items():
        if _is_scalar(v):
            out[k] = v
        elif isinstance(v, dict) and all(_is_scalar(x) for x in v.values()):
            out.update({f"{k}.{sk}": sv for sk, sv in v.items()})
    return out


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def _comparison(arms: list[dict[str, Any]]) -> dict[str, Any]:
    """Arms side by side: each stage's key per arm (shared when equal) and every report scalar per arm."""
    stage_names: list[str] = []
    for a in arms:
        stage_names += [s["stage"] for s in a["stages"] if s["stage"] not in stage_names]
    keys = {st: {a["name"]: next((s["key"] for s in a["stages"] if s["stage"] == st), None) for a in arms}
            for st in stage_names}
    shared = {st: sorted({k for k in ks.values() if k and list(ks.values()).count(k) > 1})
              for st, ks in keys.items()}
    scalars: dict[str, dict[str, Any]] = {}
    for a in arms:
        for s in a["stages"]:
            for k, v in _scalars(s.get("report") or {}).items():
                scalars.setdefault(f"{s['stage']}.{k}", {})[a["name"]] = v
            if s.get("funnel"):
                scalars.setdefault(f"{s['stage']}.docs_kept", {})[a["name"]] = s["funnel"]["docs_kept"]
    return {"keys": keys, "shared": shared, "scalars": dict(sorted(scalars.items()))}


# ---------------------------------------------------------------------------------------------------------
# markdown


def render_markdown(report: dict[str, Any]) -> str:
    lines = [f"# Run report: {report['recipe']}", ""]
    lines += [f"- workdir: `{report['workdir']}`", f"- recipe file: `{report['recipe_file']}`",
              f"- status: **{report['status']}** (started {report['started']}, finished {report['finished']})",
              f"- klue-pipeline {report['klue_version']}", ""]
    if report["problems"]:
        lines += ["> **⚠ PROBLEMS: this run's accounting or stages need attention**", ">"]
        lines += [f"> - {p}" for p in report["problems"]]
        lines.append("")
    if "comparison" in report:
        lines += _md_comparison(report)
    first_arm: dict[str, str] = {}  # key -> the arm where the stage was shown in full
    for arm in report["arms"]:
        title = f"## Arm `{arm['name']}`" if len(report["arms"]) > 1 or arm["name"] != "default" else "## Stages"
        lines += [title, ""]
        for s in arm["stages"]:
            if s.get("key") and s["key"] in first_arm:
                lines += [f"### {s['stage']} — shared with arm `{first_arm[s['key']]}` (key `{s['key'][:8]}`)", ""]
                continue
            if s.get("key") and s.get("status") != "failed":
                first_arm[s["key"]] = arm["name"]
            lines += _md_stage(s)
    return "\n".join(lines).rstrip() + "\n"


def _md_comparison(report: dict[str, Any]) -> list[str]:
    comp = report["comparison"]
    arms = [a["name"] for a in report["arms"]]
    lines = ["## Arms side by side", "", "Stage folders (cache keys); *shared* = the same folder serves several arms.",
             ""]
    lines += _md_table(["stage", *arms],
                       [[st, *[_key_cell(ks.get(a), comp["shared"][st]) for a in arms]]
                        for st, ks in comp["keys"].items()])
    differ = {k: v for k, v in comp["scalars"].items() if len({_fmt(v.get(a, "")) for a in arms}) > 1}
    if differ:
        lines += ["", "Report values that differ between arms:", ""]
        lines += _md_table(["value", *arms], [[k, *[_fmt(v.get(a, "")) for a in arms]] for k, v in differ.items()])
    if len(comp["scalars"]) > len(differ):
        lines += ["", f"{len(comp['scalars']) - len(differ)} report values are equal in every arm (see each arm "
                      "below, or `--format json`)."]
    lines.append("")
    return lines


def _key_cell(key: str | None, shared: list[str]) -> str:
    if not key:
        return "—"
    return f"`{key[:8]}` *shared*" if key in shared else f"`{key[:8]}`"


def _md_stage(s: dict[str, Any]) -> list[str]:
    seconds = f"{s['seconds']:.2f} s" if isinstance(s.get("seconds"), (int, float)) else "?"
    took = (s.get("timings") or {}).get("seconds")
    built = f", built in {took:.2f} s" if s.get("status") == "skipped" and took is not None else ""
    key = (s.get("key") or "")[:8]
    lines = [f"### {s['stage']} — {s['status']} ({seconds}{built}), key `{key}`", ""]
    if s.get("status") == "failed":
        return [*lines, f"**FAILED**: {s.get('error')}", ""]
    funnel = s.get("funnel")
    if funnel:
        rows = [_funnel_row(name, f) for name, f in sorted((s.get("by_source") or {}).items())]
        rows.append(_funnel_row("**total**", funnel))
        lines += _md_table(["source", "docs in", "kept", "dropped", "quarantined", "chars in", "chars kept",
                            "check"], rows)
        lines.append("")
    for c in s.get("checks") or []:
        lines.append(f"**⚠ MISMATCH**: {c}  ")
    if s.get("checks"):
        lines.append("")
    report = s.get("report") or {}
    scalars = {k: v for k, v in report.items() if _is_scalar(v)}
    if scalars:
        lines += _md_table(["value", ""], [[k, _fmt(v)] for k, v in scalars.items()])
        lines.append("")
    for k, v in report.items():
        if _is_scalar(v):
            continue
        lines += [f"**{k}**", ""]
        if isinstance(v, dict) and all(_is_scalar(x) for x in v.values()):
            lines += _md_table(["", k], [[sk, _fmt(sv)] for sk, sv in v.items()])
        elif isinstance(v, dict) and v and all(isinstance(r, dict) for r in v.values()):  # rows by name
            cols: list[str] = []
            for r in v.values():
                cols += [c for c in r if c not in cols]
            lines += _md_table(["", *cols], [[rk, *[_fmt(r.get(c, "")) for c in cols]] for rk, r in v.items()])
        elif isinstance(v, list) and v and all(isinstance(r, dict) for r in v):
            cols = []
            for r in v:
                cols += [c for c in r if c not in cols]
            lines += _md_table(cols, [[_fmt(r.get(c, "")) for c in cols] for r in v])
        else:
            lines.append(f"`{json.dumps(v, ensure_ascii=False)[:500]}`")
        lines.append("")
    for p in s.get("plots") or []:
        lines += [f"![{Path(p).name}]({p})", ""]
    return lines


def _funnel_row(name: str, f: dict[str, Any]) -> list[str]:
    problems = Funnel.from_json(f).problems()
    dropped = ", ".join(f"{r}: {n}" for r, n in sorted(f.get("dropped", {}).items()) if n) or "0"
    return [name, str(f["docs_in"]), str(f["docs_kept"]), dropped, str(f.get("quarantined", 0)),
            str(f.get("chars_in", 0)), str(f.get("chars_kept", 0)),
            "ok" if not problems else "**MISMATCH**"]


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    def esc(x: str) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(esc(h) for h in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return out
