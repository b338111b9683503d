"""The run report: what each stage of each arm did to the documents, and what the stages say about themselves.

Built only from files (`run.json` and the manifests it points to), so it can be regenerated at any time and
describes exactly the outputs on disk. The accounting is re-checked here rather than trusted: a funnel that
does not reconcile (in = kept + dropped + quarantined, per source and in total) is flagged at the top of the
report, because a silently lost document is the kind of bug nobody finds later.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pipeline import io
from pipeline.manifest import MANIFEST, result_problems
from pipeline.plots import Figure, lines, md_table
from pipeline.registry import RegistryError
from pipeline.runner import RUN_JSON
from pipeline.stage import ArmOutput, Funnel, ReportSection, Stage, StageResult
from pipeline.stages import STAGES

FILES = "report_files"  # the figures of report.md, beside it (report.html inlines them)


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


VERDICT = "Verdict"  # the title of the section that render_markdown puts right under the header


def build_sections(workdir: str | Path, report: dict[str, Any], registry: Any = None) -> list[ReportSection]:
    """The report's sections before the stage details: the verdict (`Stage.verdict` of every stage), the
    curation funnel (generic, from every stage's counts), then each stage's own section
    (`Stage.report_section`) across the arms, in stage order."""
    staged = stage_outputs(workdir, report, registry)
    figures = [f for cls, outputs in reversed(staged) for f in cls.verdict_figures(outputs)]
    sections = [s for s in (_verdict_section(_collect_verdict(staged), figures), _funnel_section(report))
                if s is not None]
    for cls, outputs in staged:
        section = cls.report_section(outputs)
        if section is not None:
            sections.append(section)
    return sections


def build_verdict(workdir: str | Path, report: dict[str, Any], registry: Any = None) -> list[str]:
    """The verdict's lines alone: what `klue run` prints when it is done, the same as the report's section."""
    return _collect_verdict(stage_outputs(workdir, report, registry))


def stage_outputs(workdir: str | Path, report: dict[str, Any], registry: Any = None
                  ) -> list[tuple[type[Stage[Any]], list[ArmOutput]]]:
    """Each stage of the run that has finished folders, in stage order, with those folders (one `ArmOutput`
    per distinct folder, naming the arms it served). A stage name the registry does not know (a test graph) is
    left out: there is no class to ask for its section or verdict."""
    registry = registry or STAGES
    workdir = Path(workdir)
    order: list[str] = []
    for arm in report["arms"]:
        order += [s["stage"] for s in arm["stages"] if s["stage"] not in order]
    out: list[tuple[type[Stage[Any]], list[ArmOutput]]] = []
    for name in order:
        outputs = _arm_outputs(workdir, report, name)
        if not outputs or name not in registry.names:
            continue
        try:
            out.append((registry.get(name), outputs))
        except RegistryError:
            continue
    return out


def _arm_outputs(workdir: Path, report: dict[str, Any], name: str) -> list[ArmOutput]:
    """The finished folders of stage `name` across the arms, each once, in arm order."""
    outputs: dict[str, ArmOutput] = {}
    for arm in report["arms"]:
        s = next((x for x in arm["stages"] if x["stage"] == name), None)
        if s is None or not s.get("path") or s.get("status") == "failed":
            continue
        prev = outputs.get(s["path"])
        if prev is not None:
            outputs[s["path"]] = ArmOutput((*prev.arms, arm["name"]), prev.path, prev.manifest)
            continue
        try:
            manifest = json.loads((workdir / s["path"] / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # flagged in the report's problems already
        outputs[s["path"]] = ArmOutput((arm["name"],), workdir / s["path"], manifest)
    return list(outputs.values())


def _collect_verdict(staged: list[tuple[type[Stage[Any]], list[ArmOutput]]]) -> list[str]:
    """Every stage's verdict lines, the last stage first: it judges the end product (fine-tuning against
    random init), and the stages before it explain it (did pretraining leave the plateau)."""
    return [line for cls, outputs in reversed(staged) for line in cls.verdict(outputs)]


def _verdict_section(lines: list[str], figures: list[Any] | None = None) -> ReportSection | None:
    """The verdict as a bullet list, its figures under it; none when no stage concluded anything."""
    if not lines:
        return None
    return ReportSection(VERDICT, "\n".join(f"- {line}" for line in lines), list(figures or []))


def _funnel_section(report: dict[str, Any]) -> ReportSection | None:
    """Documents kept after each stage, per source (the first arm; arms share curation up to their first
    differing stage) with a line per other arm's total where it differs."""
    arms = report["arms"]
    if not arms:
        return None
    first = arms[0]
    staged = [s for s in first["stages"] if s.get("funnel")]
    if not staged:
        return None
    sources = sorted({src for s in staged for src in (s.get("by_source") or {})})
    names = [s["stage"] for s in staged]
    series: dict[str, list[tuple[float, float]]] = {
        src: [(i, s["by_source"][src]["docs_kept"]) for i, s in enumerate(staged) if src in (s.get("by_source") or {})]
        for src in sources}
    series["total" + (f" ({first['name']})" if len(arms) > 1 else "")] = [
        (i, s["funnel"]["docs_kept"]) for i, s in enumerate(staged)]
    header = ["stage", *sources, "total"]
    body = [[s["stage"], *(str((s.get("by_source") or {}).get(src, {}).get("docs_kept", "–")) for src in sources),
             str(s["funnel"]["docs_kept"])] for s in staged]
    for arm in arms[1:]:
        totals = {s["stage"]: s["funnel"]["docs_kept"] for s in arm["stages"] if s.get("funnel")}
        if any(totals.get(s["stage"]) != s["funnel"]["docs_kept"] for s in staged):
            series[f"total ({arm['name']})"] = [(names.index(n), v) for n, v in totals.items() if n in names]
            header.append(f"total ({arm['name']})")
            for row, s in zip(body, staged, strict=True):
                row.append(str(totals.get(s["stage"], "–")))
    first_in = staged[0]["funnel"]["docs_in"]
    md = [f"{first_in} documents read; each row is what a stage kept (the stage details below give every drop "
          "reason).", "", *md_table(header, body)]
    fig = Figure("funnel.png", lines(series, xlabel="stage", ylabel="documents kept", xticks=names, log_y=True),
                 "Documents kept after each stage, per source (log scale).")
    return ReportSection("Curation funnel", "\n".join(md), [fig])


def render_markdown(report: dict[str, Any], sections: list[ReportSection] | None = None) -> str:
    lines = [f"# Run report: {report['recipe']}", ""]
    lines += [f"- workdir: `{report['workdir']}`", f"- recipe file: `{report['recipe_file']}`",
              f"- status: **{report['status']}** (started {report['started']}, finished {report['finished']})",
              f"- arms: {', '.join(a['name'] for a in report['arms'])}",
              f"- klue-pipeline {report['klue_version']}", ""]
    sections = sections or []
    # the verdict first, right under the header: the one thing every reader of the report needs
    lines += _md_sections([s for s in sections if s.title == VERDICT])
    if report["problems"]:
        lines += ["> **⚠ PROBLEMS: this run's accounting or stages need attention**", ">"]
        lines += [f"> - {p}" for p in report["problems"]]
        lines.append("")
    lines += _md_sections([s for s in sections if s.title != VERDICT])
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


def _md_sections(sections: list[ReportSection]) -> list[str]:
    lines: list[str] = []
    for sec in sections:
        lines += [f"## {sec.title}", "", sec.markdown.rstrip(), ""]
        for fig in sec.figures:
            lines += [f"![{fig.caption}]({FILES}/{fig.name})", ""]
    return lines


def _md_comparison(report: dict[str, Any]) -> list[str]:
    comp = report["comparison"]
    arms = [a["name"] for a in report["arms"]]
    lines = ["## Arms side by side", "", "Stage folders (cache keys); *shared* = the same folder serves several arms.",
             ""]
    lines += md_table(["stage", *arms],
                       [[st, *[_key_cell(ks.get(a), comp["shared"][st]) for a in arms]]
                        for st, ks in comp["keys"].items()])
    differ = {k: v for k, v in comp["scalars"].items() if len({_fmt(v.get(a, "")) for a in arms}) > 1}
    if differ:
        lines += ["", "Report values that differ between arms:", ""]
        lines += md_table(["value", *arms], [[k, *[_fmt(v.get(a, "")) for a in arms]] for k, v in differ.items()])
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
        lines += md_table(["source", "docs in", "kept", "dropped", "quarantined", "chars in", "chars kept",
                            "check"], rows)
        lines.append("")
    for c in s.get("checks") or []:
        lines.append(f"**⚠ MISMATCH**: {c}  ")
    if s.get("checks"):
        lines.append("")
    report = s.get("report") or {}
    scalars = {k: v for k, v in report.items() if _is_scalar(v)}
    if scalars:
        lines += md_table(["value", ""], [[k, _fmt(v)] for k, v in scalars.items()])
        lines.append("")
    for k, v in report.items():
        if _is_scalar(v):
            continue
        lines += [f"**{k}**", ""]
        if isinstance(v, dict) and all(_is_scalar(x) for x in v.values()):
            lines += md_table(["", k], [[sk, _fmt(sv)] for sk, sv in v.items()])
        elif isinstance(v, dict) and v and all(isinstance(r, dict) for r in v.values()):  # rows by name
            cols: list[str] = []
            for r in v.values():
                cols += [c for c in r if c not in cols]
            lines += md_table(["", *cols], [[rk, *[_fmt(r.get(c, "")) for c in cols]] for rk, r in v.items()])
        elif isinstance(v, list) and v and all(isinstance(r, dict) for r in v):
            cols = []
            for r in v:
                cols += [c for c in r if c not in cols]
            lines += md_table(cols, [[_fmt(r.get(c, "")) for c in cols] for r in v])
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


# ---------------------------------------------------------------------------------------------------------
# files: report.md (+ report_files/*.png) and a self-contained report.html

HTML_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.2em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
img { max-width: 100%; }
code { background: #f3f3f3; padding: 0 0.2em; }
blockquote { border-left: 4px solid #d33; margin-left: 0; padding-left: 1em; }
"""


def write_report(workdir: str | Path, arm: str | None = None) -> tuple[Path, Path, str]:
    """Build the report of a run and write `report.md` with its figures under `report_files/`, and
    `report.html`, the same content in one file (figures inlined as data URIs, no external resource). Returns
    (markdown path, html path, markdown text)."""
    import base64

    import markdown

    workdir = Path(workdir)
    data = build_report(workdir, arm)
    sections = build_sections(workdir, data)
    md = render_markdown(data, sections)
    suffix = "" if arm is None else f".{arm}"
    for sec in sections:
        for fig in sec.figures:
            io.write_bytes(workdir / FILES / f"{Path(fig.name).stem}{suffix}.png", fig.png)
    if suffix:
        for sec in sections:
            for fig in sec.figures:
                md = md.replace(f"]({FILES}/{fig.name})", f"]({FILES}/{Path(fig.name).stem}{suffix}.png)")
    md_path = workdir / f"report{suffix}.md"
    io.write_text(md_path, md)
    body = markdown.markdown(md, extensions=["tables", "toc", "fenced_code"], output_format="html")

    def inline(m: re.Match[str]) -> str:  # every image the page shows, from report_files/ or a stage folder
        path = workdir / m.group(1)
        if not path.is_file() or path.suffix.lower() != ".png":
            return m.group(0)
        return f'src="data:image/png;base64,{base64.b64encode(path.read_bytes()).decode("ascii")}"'

    body = re.sub(r'src="([^":]+)"', inline, body)
    title = f"Run report: {data['recipe']}"
    page = (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n"
            f"<style>{HTML_STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")
    html_path = workdir / f"report{suffix}.html"
    io.write_text(html_path, page)
    return md_path, html_path, md
