"""The layout rules of docs/architecture.md, checked on the source: the ground floor leans on nothing above it,
modules do not import each other in circles, every stage sits in `<package>/stages/<name>.py` with its params
model, and files are written one way (pipeline.io)."""

from __future__ import annotations

import ast
import re
import sys
from fnmatch import fnmatchcase
from pathlib import Path

from pipeline.stage import Stage
from pipeline.stages import STAGE_CLASSES, STAGES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the dev extra installs tomli on 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pipeline", "corpora", "tokenizer", "pretrain", "finetune")


def modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            parts = f.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


MODULES = modules()


def module_level_imports(path: Path, name: str) -> set[str]:
    """Project modules imported at module level (inside `if TYPE_CHECKING:` too; not inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()

    def visit(stmts: list[ast.stmt]) -> None:
        for node in stmts:
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative import
                    pkg = name.split(".")[: -node.level] if not path.name == "__init__.py" else name.split(".")
                    base = ".".join([*pkg, *([base] if base else [])])
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names)
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)

    visit(tree.body)
    return {m for m in found if m in MODULES}


GRAPH = {name: module_level_imports(path, name) - {name} for name, path in MODULES.items()}


def test_ground_floor_imports_nothing_above_it():
    above = ("corpora", "tokenizer", "pretrain", "finetune")
    bad = {m: sorted(i for i in deps if i.split(".")[0] in above)
           for m, deps in GRAPH.items() if m.startswith("pipeline")}
    assert not {m: d for m, d in bad.items() if d}, "pipeline/ must reach the stages through its registries"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every elementary cycle's members, found by a depth-first search (one representative per cycle)."""
    out, state, stack = [], {}, []

    def dfs(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for d in sorted(graph.get(n, ())):
            if state.get(d) == 1:
                out.append(stack[stack.index(d):] + [d])
            elif d not in state:
                dfs(d)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            dfs(n)
    return out


def test_no_import_cycles_in_the_ground_floor():
    pipeline_graph = {m: {d for d in deps if d.startswith("pipeline")} for m, deps in GRAPH.items()
                      if m.startswith("pipeline")}
    assert _cycles(pipeline_graph) == []


def test_no_two_modules_import_each_other():
    mutual = sorted({tuple(sorted((a, b))) for a, deps in GRAPH.items() for b in deps if a in GRAPH.get(b, ())})
    assert mutual == []


def all_imports(path: Path, name: str) -> set[str]:
    """Project modules imported anywhere in a module, inside functions too."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add(node.module or "")
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return {m for m in found if m in MODULES} - {name}


FULL_GRAPH = {name: all_imports(path, name) for name, path in MODULES.items()}


def test_the_ground_floor_imports_nothing_above_it_even_inside_a_function():
    """What `python ../shared/hooks/import_floor.py .` checks: an import inside a function climbs all the same when
    it runs, so pipeline/ reaches the stage packages only through registries of import paths."""
    above = ("corpora", "tokenizer", "pretrain", "finetune")
    bad = {m: sorted(i for i in deps if i.split(".")[0] in above)
           for m, deps in FULL_GRAPH.items() if m.startswith("pipeline")}
    assert not {m: d for m, d in bad.items() if d}


def test_no_import_circles_counting_imports_inside_functions():
    assert _cycles(FULL_GRAPH) == []


def test_the_lazy_import_check_sees_an_import_inside_a_function(tmp_path):
    """The two tests above would pass on a reader that skipped function bodies: this one fails on such a reader."""
    mod = tmp_path / "m.py"
    mod.write_text("def f():\n    from corpora.lang import get_language\n    return get_language\n")
    assert "corpora.lang" in all_imports(mod, "pipeline.m")


def test_pretrain_stands_on_nothing_of_finetune():
    """Data flows corpus -> pretrain -> finetune, and so do imports: the model card's KLUE table comes from the
    finetune stage's `card_facts` hook (pipeline/release/card.py asks it), not from pretrain reading finetune.
    Inside functions too. pretrain/examples/ holds repository scripts, not installed modules (the GPU check
    fine-tunes too)."""
    bad = {m: sorted(i for i in deps if i.split(".")[0] == "finetune") for m, deps in FULL_GRAPH.items()
           if m.startswith("pretrain") and not m.startswith("pretrain.examples")}
    assert not {m: d for m, d in bad.items() if d}


def lazy_project_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of a project module inside a function."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                found = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
                out |= {(node.lineno, m) for m in found if m.split(".")[0] in PACKAGES}
    return sorted(out)


# modules whose function-level imports are explained once, in their docstring: the CLIs (`klue --help` loads click
# only: tests/test_cli_run.py, test_finetune_registry.py) and the GPU check (a section whose import fails is
# recorded, the others run)
LAZY_BY_DESIGN = ("pipeline/commands.py", "finetune/cli.py", "pretrain/examples/gpu_check.py")


def test_an_import_inside_a_function_says_why():
    """Imports at the top unless the import is heavy (torch, presidio, a task module, ...) or breaks a real cycle,
    with a one-line `# lazy: ...` reason above it (issue 53: at most 60 such imports in all)."""
    unexplained, total = [], 0
    for path in MODULES.values():
        rel = path.relative_to(ROOT).as_posix()
        lines = path.read_text(encoding="utf-8").splitlines()
        for lineno, mod in lazy_project_imports(path):
            total += 1
            above = lines[lineno - 2].strip()
            if rel not in LAZY_BY_DESIGN and not (above.startswith("# lazy:") or
                                                  (above.startswith("from ") and lines[lineno - 3].strip()
                                                   .startswith("# lazy:"))):
                unexplained.append(f"{rel}:{lineno} imports {mod}")
    assert unexplained == []
    assert total <= 60, f"{total} function-level project imports"


def test_no_korean_default_below_the_recipe():
    """A language that is not passed on is an error, never Korean by default: no parameter or field defaults to
    "ko" outside the Korean folder (corpora/lang/ko/) and the recipe's one DEFAULT_LANGUAGE (pipeline/recipe.py)."""
    found = []
    for path in MODULES.values():
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("corpora/lang/ko/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            defaults: list[ast.expr | None] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defaults = [*node.args.defaults, *node.args.kw_defaults]
            elif isinstance(node, ast.AnnAssign):  # a pydantic field or dataclass attribute
                defaults = [node.value]
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Field":
                defaults = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "default")]
            found += [f"{rel}:{node.lineno}" for d in defaults
                      if isinstance(d, ast.Constant) and d.value == "ko"]
    assert found == []


def test_the_product_never_imports_the_workshop():
    """datagen/ (the generators) may import anything and nothing in the product packages imports it, not even
    inside a function: a product command that needs a generator (`klue pii gen`) reaches it as an entry point
    (pyproject's `klue.commands`, pipeline/plugins.py), which is not an import."""
    offenders = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            offenders += [f"{name}:{node.lineno} imports {m}" for m in found if m.split(".")[0] == "datagen"]
    assert offenders == []


def test_the_finetune_framework_imports_one_way():
    """records (the leaf) <- tasks.base <- data / registry, with no import back, not even inside a function:
    a task declares what the registry reports about it as its class's `entry`, and the registry reads it there."""
    core = ("finetune.records", "finetune.tasks.base", "finetune.data", "finetune.registry")
    graph = {m: all_imports(MODULES[m], m) & set(core) for m in core}
    assert graph["finetune.records"] == set() and all_imports(MODULES["finetune.records"], "finetune.records") == set()
    assert graph["finetune.tasks.base"] == {"finetune.records"}
    assert _cycles(graph) == []


def test_every_stage_in_its_own_module_with_its_params_model():
    for name, target in STAGE_CLASSES.items():
        module, _, attr = target.partition(":")
        assert re.fullmatch(rf"(corpora|tokenizer|pretrain|finetune)\.stages\.{name}", module), target
        cls = STAGES.get(name)
        assert issubclass(cls, Stage) and cls.name == name
        # beside the stage, or in its package's `config` leaf when code below the stage needs the same model
        # (pretrain/config.py: the training loop and the exporter read PretrainParams without importing the stage,
        # which imports them: no circle)
        package = module.split(".")[0]
        assert cls.params_model.__module__ in (module, f"{package}.config"), \
            f"{name}: params model {cls.params_model} lives elsewhere"
    assert list(STAGES.names) == list(STAGE_CLASSES)


def test_no_stage_casts_its_params():
    offenders = [f"{p.relative_to(ROOT)}:{i}" for p in MODULES.values()
                 for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if re.search(r"=\s*ctx\.params\s*#\s*type:\s*ignore", line)]
    assert offenders == []


# Renames that publish something other than a freshly written file: the runner's stage folders, collect's
# part files becoming consecutive shards, a checkpoint folder that every rank wrote into.
RENAMES_ALLOWED = {"pipeline/io.py", "pipeline/runner.py", "corpora/stages/collect.py", "pretrain/checkpoint.py"}


def test_files_are_written_one_way():
    """No hand-made temp names or renames outside pipeline.io (and the publishing steps above)."""
    problems = []
    for p in MODULES.values():
        rel = p.relative_to(ROOT).as_posix()
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if rel not in RENAMES_ALLOWED and re.search(r"os\.replace\(|\.rename\(", code):
                problems.append(f"{rel}:{i}: rename outside pipeline.io: {line.strip()}")
            if rel != "pipeline/io.py" and re.search(r"""["'][^"']*\.tmp\b""", code) and "tmp-allranks" not in code:
                problems.append(f"{rel}:{i}: a temp name made by hand: {line.strip()}")
    assert problems == []


def installed_modules() -> dict[str, Path]:
    """Every module the wheel installs: the folders that pyproject's [tool.setuptools.packages.find] includes and
    does not exclude, matched as setuptools matches them (namespace packages: any folder of a matching name)."""
    find = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"]["find"]
    out = {}
    for top in sorted({p.split(".")[0].rstrip("*") for p in find["include"]}):
        for d in [ROOT / top, *sorted(x for x in (ROOT / top).rglob("*") if x.is_dir())]:
            pkg = ".".join(d.relative_to(ROOT).parts)
            if any(fnmatchcase(pkg, p) for p in find["include"]) and \
                    not any(fnmatchcase(pkg, p) for p in find.get("exclude", [])):
                out.update({f"{pkg}.{f.stem}": f for f in sorted(d.glob("*.py"))})
    return out


def names_of_the_test_kit(path: Path) -> list[str]:
    """Where a module imports the test kit (anywhere, inside functions too) or names it in a string that is not a
    docstring (a package list, a "module:attr" registry entry, an importlib call)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and n.body and isinstance(n.body[0], ast.Expr)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            found = [node.module or ""]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found = [node.value] if re.search(r"\btestkit\b", node.value) else []
        else:
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found = [m for m in found if m.split(".")[0] == "testkit"]
        out += [f"{path}:{node.lineno}: {m!r}" for m in found]
    return out


def test_no_installed_module_names_the_test_kit():
    """The installed packages stand without tests/: none imports or names testkit (the journal's trusted
    packages included: a test registers its own dataclasses, `pipeline.journal.register`). The scripts of
    pretrain/examples/ may, as they run from a checkout and are not installed."""
    mods = installed_modules()
    assert {"pipeline.journal", "datagen.__init__", "pretrain.train", "finetune.tasks.base"} <= set(mods)
    assert not any(m.startswith("pretrain.examples") for m in mods), "pretrain/examples/ is not installed"
    assert [hit for path in mods.values() for hit in names_of_the_test_kit(path)] == []


def test_the_test_kit_check_sees_an_import_and_a_name(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text('"""Docs may say testkit."""\nPACKAGES = ("pipeline", "testkit")\n\n\ndef f():\n'
                   '    from testkit.toy import TOY\n    import testkit\n    return TOY, testkit\n')
    assert sorted(h.split(": ", 1)[1] for h in names_of_the_test_kit(mod)) == ["'testkit'", "'testkit'", "'testkit.toy'"]
