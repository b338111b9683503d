"""The documentation's pointers hold: every relative link of the Markdown pages resolves, and every file that
docs/architecture.md names (its source tree and its "To add a stage / fine-tuning task / encoder architecture /
language" lists) exists. Pure text checks over the checkout, no imports of the project: fast.

Links: `[text](target)` and `![alt](target)` in README.md, docs/**/*.md and the packages' README.md files, outside
fenced code blocks and inline code; web addresses are skipped. A target must exist (file or folder, relative to
the page); an anchor (`page.md#heading`, `#heading`) must be a heading of that page, slugged as GitHub does.
Every `python -m MODULE` of a reference page (not of a dated record) that names a project module must exist.

Architecture paths: in the "To add" lists, every backticked token that is a path (it has a `/` or a file
extension); in the tree block, every entry of the name column and every `.py` file, folder (`x/`) or file path
(`x/y.md`) of its descriptions, resolved against the folder the line is under, its top folder or the repository
root. A placeholder (`<task>`) checks the folder before it; a glob (`test_*.py`) needs one match."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {".git", "tests", "runs", "out", "node_modules", "build", "dist"}

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def markdown_pages() -> list[Path]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for depth in ("*/README.md", "*/*/README.md"):
        pages += [p for p in sorted(ROOT.glob(depth))
                  if not (set(p.relative_to(ROOT).parts[:-1]) & SKIP_DIRS or p.parts[len(ROOT.parts)].startswith("."))]
    return [p for p in pages if p.is_file()]


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    out, fenced = [], False
    for no, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append((no, line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, line in prose_lines(page.read_text(encoding="utf-8")):
        m = HEADING.match(line)
        if not m:
            continue
        s = slug(m.group(2))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    bad = []
    for no, line in prose_lines(page.read_text(encoding="utf-8")):
        for target in LINK.findall(INLINE_CODE.sub("", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:, ...
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(root)}:{no}: {target}"
            if not dest.exists():
                bad.append(f"{where}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                bad.append(f"{where}: no heading #{anchor} in {dest.relative_to(root)}")
    return bad


PAGES = markdown_pages()


def test_the_pages_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md", "docs/README.md", "docs/architecture.md", "finetune/README.md",
            "docs/experiments/README.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path):
    assert broken_links(page) == []


def test_the_link_check_fails_on_a_missing_file_or_heading(tmp_path: Path):
    (tmp_path / "b.md").write_text("# Title\n\n## A `code` heading: yes?\n", encoding="utf-8")
    page = tmp_path / "a.md"
    page.write_text("[ok](b.md) [ok](b.md#a-code-heading-yes) [web](https://x.org/y.md) `[no](c.md)`\n"
                    "```\n[in code](gone.md)\n```\n[missing](c.md) and ![img](img/x.png) [anchor](b.md#nope)\n",
                    encoding="utf-8")
    assert broken_links(page, tmp_path) == ["a.md:5: c.md: no such file", "a.md:5: img/x.png: no such file",
                                  "a.md:5: b.md#nope: no heading #nope in b.md"]


# ---- reference pages: the project's modules they run ----

PACKAGES = {"pipeline": ROOT, "corpora": ROOT, "tokenizer": ROOT, "pretrain": ROOT, "finetune": ROOT,
            "datagen": ROOT, "bench": ROOT, "testkit": ROOT / "tests"}
PYTHON_M = re.compile(r"python3? -m ([A-Za-z_][\w.]*)")


def missing_modules(page: Path) -> list[str]:
    """`python -m MODULE` of a project package whose module is not in the checkout (other modules: skipped)."""
    out = []
    for module in PYTHON_M.findall(page.read_text(encoding="utf-8")):
        base = PACKAGES.get(module.split(".")[0])
        if base is None:
            continue
        path = base.joinpath(*module.split("."))
        if not (path.with_suffix(".py").is_file() or (path / "__main__.py").is_file()):
            out.append(module)
    return out


@pytest.mark.parametrize("page", [p for p in PAGES if "experiments" not in p.parts],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_module_a_reference_page_runs_exists(page: Path):
    """Reference pages only: an experiment record keeps its commands as they were run."""
    assert missing_modules(page) == []


def test_the_module_check_fails_on_a_moved_module(tmp_path: Path):
    page = tmp_path / "p.md"
    page.write_text("`python -m finetune.floors mrc`, `python -m finetune.gone OUT`, `python -m pytest -q`\n",
                    encoding="utf-8")
    assert missing_modules(page) == ["finetune.gone"]


# ---- docs/architecture.md: the files it names ----

ARCH = ROOT / "docs" / "architecture.md"
TO_ADD = ("To add a stage", "To add a fine-tuning task", "To add an encoder architecture", "To add a language")
FILE_EXT = re.compile(r"\.(py|ya?ml|toml|md|json|sh|txt|sbatch)$")


def sections(text: str) -> dict[str, str]:
    """Heading text -> the text under it, up to the next heading (fenced code included)."""
    out: dict[str, str] = {}
    current, buf, fenced = None, [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        m = None if fenced else HEADING.match(line)
        if m:
            if current is not None:
                out[current] = "\n".join(buf)
            current, buf = m.group(2), []
        else:
            buf.append(line)
    if current is not None:
        out[current] = "\n".join(buf)
    return out


def exists(token: str, bases: list[Path]) -> bool:
    """`token` (a path, maybe with a <placeholder> or a glob) exists under one of `bases`."""
    token = token.rstrip(".,;:")
    if "<" in token:  # `finetune/tasks/<task>.py`: the folder before the placeholder
        token = token[:token.index("<")].rpartition("/")[0]
        if not token:
            return True
    if "*" in token:
        return any(any(b.glob(token)) for b in bases)
    return any((b / token).exists() for b in bases)


def missing_in_lists(text: str, root: Path) -> dict[str, list[str]]:
    """Per "To add" list: the backticked paths in it that do not exist. A bare file name (`make_fixtures.py`) may
    sit at the root or in a folder the same list names."""
    secs = sections(text)
    out = {}
    for title in TO_ADD:
        body = next((b for h, b in secs.items() if h.startswith(title)), None)
        assert body is not None, f"docs/architecture.md has no '### {title}' section"
        tokens = [t for t in re.findall(r"`([^`\s]+)`", body) if "/" in t or FILE_EXT.search(t)]
        assert tokens, f"'{title}' names no file"
        dirs = [root] + [root / t[:t.index("<")].rpartition("/")[0] if "<" in t else (root / t).parent
                         for t in tokens if "/" in t]
        out[title] = [t for t in tokens if not exists(t, [root] if "/" in t else dirs)]
    return out


def tree_block(text: str) -> str:
    body = next((b for h, b in sections(text).items() if h.startswith("Where each kind of thing lives")), None)
    assert body is not None, "docs/architecture.md has no 'Where each kind of thing lives' section"
    m = re.search(r"```\n(.*?)\n```", body, re.S)
    assert m, "the source tree block is missing"
    return m.group(1)


def missing_in_tree(block: str, root: Path) -> list[str]:
    """Entries of the tree's name column, and the `.py` files and `/`-paths of its descriptions, that do not exist.
    A line at indent 0 names a top folder; an indented one an entry under it; a line whose name column is blank
    continues the previous one."""
    bad: list[str] = []
    top = here = root
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        words = line.split()
        names = []
        if indent < 20:  # the name column: file-like words before the first run of 2+ spaces (or the prose)
            for w in re.split(r"\s{2,}", line.strip())[0].split():
                if w.endswith("/") or FILE_EXT.search(w):
                    names.append(w)
                else:
                    break
        if names and indent == 0:
            top = here = root / names[0].rstrip("/")
        elif names:
            here = top / names[0].rstrip("/") if names[0].endswith("/") else top
        bases = [here, top, root]
        for n in names:
            if not exists(n, [top] if indent else [root]):
                bad.append(n)
        rest = words[len(names):]
        for w in rest:
            w = w.strip("(),;:`")
            is_path = w.endswith(".py") or ("/" in w and (w.endswith("/") or FILE_EXT.search(w)))
            if re.fullmatch(r"[\w./<>*-]+", w) and is_path and not exists(w, bases):
                bad.append(w)
    return bad


def test_the_files_the_to_add_lists_name_exist():
    missing = missing_in_lists(ARCH.read_text(encoding="utf-8"), ROOT)
    assert missing == {title: [] for title in TO_ADD}


def test_the_files_the_source_tree_names_exist():
    block = tree_block(ARCH.read_text(encoding="utf-8"))
    assert len(block.splitlines()) > 20
    assert missing_in_tree(block, ROOT) == []


def test_the_architecture_checks_fail_on_a_missing_file(tmp_path: Path):
    for p in ("pipeline/stages.py", "pipeline/io.py", "finetune/tasks/base.py", "tests/fixtures/t/make_fixtures.py"):
        (tmp_path / p).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / p).write_text("", encoding="utf-8")
    text = "\n".join([
        "## Where each kind of thing lives", "```",
        "pipeline/                 the ground floor", "  stages.py io.py          the graph; writers",
        "  gone.py                 removed", "finetune/                 tasks/<task>.py; data.py (the reader)", "```",
        "### To add a stage", "1. `pipeline/stages.py` and `pipeline/missing.py`",
        "### To add a fine-tuning task", "1. `finetune/tasks/<task>.py`, `tests/fixtures/t/<task>/` by `make_fixtures.py`",
        "### To add an encoder architecture", "1. `pretrain/architectures.py`",
        "### To add a language", "1. `corpora/lang/<code>.py` and `pyproject.toml`",
    ])
    assert missing_in_lists(text, tmp_path) == {
        "To add a stage": ["pipeline/missing.py"], "To add a fine-tuning task": [],
        "To add an encoder architecture": ["pretrain/architectures.py"],
        "To add a language": ["corpora/lang/<code>.py", "pyproject.toml"]}
    assert missing_in_tree(tree_block(text), tmp_path) == ["gone.py", "data.py"]
