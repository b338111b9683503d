"""The install a new user runs: the README's two set-up commands, and the Pythons the project says it supports.

The commands themselves run in CI (`.ci/run` makes a new venv and executes the README's second command as
written). Here: the README keeps two one-line commands that share one install; the supported Pythons are stated
alike in `requires-python`, the classifiers and the README; on the range's two ends, where found on this machine
(the oldest and the newest supported Python, where a dependency's floor or ceiling bites first; CI installs for
real on its own Python), the whole install (torch first, every extra, sdists built in isolation) resolves, while the Python just below the supported range is refused by the project's own metadata.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the dev extra installs tomli on 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
_spec = importlib.util.spec_from_file_location("readme_commands", ROOT / ".ci" / "readme_commands.py")
assert _spec is not None and _spec.loader is not None
readme_commands = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(readme_commands)


def supported_versions() -> list[tuple[int, int]]:
    """The minor versions named by the `Programming Language :: Python :: 3.N` classifiers, sorted."""
    out = []
    for c in PYPROJECT["project"]["classifiers"]:
        m = re.fullmatch(r"Programming Language :: Python :: (\d+)\.(\d+)", c)
        if m:
            out.append((int(m.group(1)), int(m.group(2))))
    return sorted(out)


SUPPORTED = supported_versions()
# Where the full install is resolved: the range's ends. Each resolution costs about a minute of CPU (pip parsing
# ~150 index pages and building two sdists' metadata), and the Pythons between the ends add little: a package
# that drops an old Python or lacks wheels for a new one fails at an end first.
ENDS = sorted({SUPPORTED[0], SUPPORTED[-1]}) if SUPPORTED else []


# ---------------------------------------------------------------------------------------------------------
# what the files say


def test_readme_has_two_commands_sharing_one_install():
    cmds = readme_commands.quick_start_commands()
    run, test = (readme_commands.steps(cmds[k]) for k in ("run", "test"))
    assert run[:-1] == test[:-1], "the two set-up commands must install the same way"
    install = run[:-1]
    assert install[0] == "pip install torch==2.13.0", "torch (the local CPU build) must come first"
    assert not any("--no-build-isolation" in s for s in install), "every sdist builds in isolation"
    extras = set(PYPROJECT["project"]["optional-dependencies"])
    for step in install[1:]:
        m = re.fullmatch(r'pip install -e "\.\[([a-z,]+)\]"', step)
        assert m, f"unexpected install step {step!r}"
        assert set(m.group(1).split(",")) <= extras, f"{step!r} names an extra pyproject.toml lacks"
    # the embedded default: no recipe, no data folder (pipeline/sample/recipe.yaml, shipped in the package)
    assert run[-1] == "klue run", f"the first command must run the embedded default, got {run[-1]!r}"
    assert (ROOT / "pipeline" / "sample" / "recipe.yaml").is_file()
    assert re.fullmatch(r"KLUE_DATA_DIR=\S+ python -m pytest -q", test[-1]), test[-1]


def test_ci_runs_the_readme_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 -m venv" in ci and "readme_commands.py test --steps" in ci
    assert "pip install" not in ci, ".ci/run must install only through the README's command"


def test_supported_pythons_stated_alike():
    """requires-python's lower bound is the oldest classifier, the classifiers have no gap, and the README
    names the same range."""
    assert SUPPORTED, "no Python 3.N classifiers in pyproject.toml"
    low = re.fullmatch(r">=\s*(\d+)\.(\d+)", PYPROJECT["project"]["requires-python"])
    assert low, "requires-python must be a plain lower bound (>=3.N)"
    assert (int(low.group(1)), int(low.group(2))) == SUPPORTED[0]
    minors = [m for _, m in SUPPORTED]
    assert minors == list(range(minors[0], minors[-1] + 1)), f"gap in the classifiers: {minors}"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lo, hi = SUPPORTED[0], SUPPORTED[-1]
    assert f"Python {lo[0]}.{lo[1]}–{hi[0]}.{hi[1]}" in readme
    assert sys.version_info[:2] in SUPPORTED, f"running the tests on an unsupported Python {sys.version}"


# ---------------------------------------------------------------------------------------------------------
# what the wheel holds (built here from a copy of the checkout: no index needed)


def test_the_wheel_holds_the_packages_and_neither_the_test_kit_nor_the_examples(tmp_path):
    """The wheel a user installs: the six packages with their data, and nothing of the test kit (tests/testkit)
    or of the scripts that run from a checkout (pretrain/examples/: the GPU check puts the checkout's tests/ on
    sys.path), which stay in the repository."""
    pytest.importorskip("setuptools.build_meta", reason="setuptools (the build backend) is not installed")
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "runs", "tmp"))
    out = tmp_path / "wheel"
    out.mkdir()
    proc = subprocess.run([sys.executable, "-c", "import sys; from setuptools import build_meta as b; "
                           "print(b.build_wheel(sys.argv[1]))", str(out)],
                          cwd=src, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = out.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    packages = [p.rstrip("*") for p in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]]
    assert tops == set(packages), tops
    assert "pipeline/sample/recipe.yaml" in names and "pretrain/train.py" in names
    kit = [n for n in names if "testkit" in n or n.startswith("tests/")]
    examples = [n for n in names if "/examples/" in n]
    assert kit == [] and examples == [], f"in the wheel: {kit + examples}"


# ---------------------------------------------------------------------------------------------------------
# what pip does with them (network: PyPI)


def find_python(version: tuple[int, int]) -> str | None:
    """An interpreter of exactly `version`: `python3.N` on PATH, else a pyenv installation of it."""
    name = f"python{version[0]}.{version[1]}"
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates = [shutil.which(name), *sorted(glob.glob(f"{root}/versions/{version[0]}.{version[1]}.*/bin/{name}"))]
    for exe in filter(None, candidates):
        p = subprocess.run([exe, "-c", "import sys, venv; print(*sys.version_info[:2])"], capture_output=True,
                           text=True)
        if p.returncode == 0 and tuple(map(int, p.stdout.split())) == version:
            return exe
    return None


@pytest.fixture(scope="module")
def package_index() -> None:
    p = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "pip"], capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        pytest.skip(f"no package index answers `pip index versions pip`: {p.stderr.strip()[-200:]}")


def _dry_run(exe: str, tmp: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    """`pip install --dry-run ARGS` in a new venv of interpreter `exe`."""
    venv = tmp / "venv"
    subprocess.run([exe, "-m", "venv", str(venv)], check=True, capture_output=True)
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--dry-run", "--quiet", *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)


@pytest.fixture(scope="module")
def resolutions(package_index, tmp_path_factory) -> dict[tuple[int, int], Future | None]:
    """For the oldest and the newest supported Python on this machine, the full install's resolution, both
    started at once."""
    pool = ThreadPoolExecutor(max_workers=len(ENDS))
    out: dict[tuple[int, int], Future | None] = {}
    extras = ",".join(sorted(PYPROJECT["project"]["optional-dependencies"]))
    for v in ENDS:
        exe = find_python(v)
        if exe is None:
            out[v] = None
            continue
        tmp = tmp_path_factory.mktemp(f"py{v[0]}{v[1]}")
        args = ["--report", str(tmp / "report.json"), "torch==2.13.0", "-e", f".[{extras}]"]
        out[v] = pool.submit(lambda exe=exe, tmp=tmp, args=args: (_dry_run(exe, tmp, args), tmp / "report.json"))
    yield out
    pool.shutdown(wait=True)


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("version", ENDS, ids=[f"py{a}.{b}" for a, b in ENDS])
def test_full_install_resolves(resolutions, version):
    """torch==2.13.0 plus the project with every extra: pip resolves it and builds the sdists' metadata in
    isolation (seqeval through setuptools_scm, DeepSpeed without torch), with the versions the project needs."""
    fut = resolutions[version]
    if fut is None:
        pytest.skip(f"no Python {version[0]}.{version[1]} interpreter on this machine (python3.N or pyenv)")
    proc, report_path = fut.result()
    assert proc.returncode == 0, f"pip failed on Python {version}:\n{proc.stderr[-3000:]}"
    report = json.loads(report_path.read_text(encoding="utf-8"))
    resolved = {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in report["install"]}
    assert resolved["torch"].split("+")[0] == "2.13.0"  # "2.13.0+cpu" where the local CPU build is found
    assert resolved["klue-pipeline"] == PYPROJECT["project"]["version"]
    for pkg in ("deepspeed", "seqeval", "datatrove", "orjson", "pytest", "ruff"):
        assert pkg in resolved, f"{pkg} missing from the resolution on Python {version}"
    assert resolved["seqeval"] != "0.0.0", "seqeval's sdist was built without setuptools_scm"


@pytest.mark.network
def test_python_below_the_range_is_refused(package_index, tmp_path):
    major, minor = SUPPORTED[0]
    below = (major, minor - 1)
    exe = find_python(below)
    if exe is None:
        pytest.skip(f"no Python {below[0]}.{below[1]} interpreter on this machine to check the refusal with")
    proc = _dry_run(exe, tmp_path, ["--no-deps", "-e", "."])
    assert proc.returncode != 0
    assert "requires a different Python" in proc.stderr, proc.stderr[-2000:]
