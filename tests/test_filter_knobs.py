"""A filter declares its knobs: the filter stage's thresholds are assembled from the registered filters' `Knobs`,
the language packs' defaults are checked against them, and a new filter is one module plus one registry line
(a fixture filter, `testkit.exclaim_filter`, registered in a subprocess: validated, run, and its bounds enforced)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import Field, ValidationError

import corpora.stages.filter as filter_stage
from corpora.filters.base import FilterKnobs
from corpora.filters.length import LengthFilter
from corpora.filters.params import (
    FILTER_NAMES,
    KNOB_OWNERS,
    Thresholds,
    language_thresholds,
    thresholds_model,
)
from corpora.filters.registry import FILTER_CLASSES, check_filter
from corpora.lang import get_language
from corpora.lang.ko import DEFAULTS as KO
from corpora.lang.ko import Korean
from corpora.stages.filter import FilterParams
from pipeline.registry import Registry, RegistryError

ROOT = Path(__file__).resolve().parents[1]


def _sha(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj).encode()).hexdigest()[:16]


# ---- the assembled thresholds ---------------------------------------------------------------------------------
def test_the_thresholds_are_the_knobs_of_the_registered_filters_in_registry_order():
    declared = [k for _, cls in FILTER_CLASSES.items() for k in cls.Knobs.model_fields]
    assert list(Thresholds.model_fields) == declared
    assert set(KNOB_OWNERS) == set(declared)
    for knob, owner in KNOB_OWNERS.items():
        info = FILTER_CLASSES.get(owner).Knobs.model_fields[knob]
        assert info.description, f"the {owner!r} filter's knob {knob!r} has no description"
    # bounds come from the filter's declaration
    with pytest.raises(ValidationError, match="min_chars"):
        Thresholds(min_chars=-1)


def test_the_default_params_dump_exactly_as_before_the_knobs_moved():
    """Field names, order and defaults of the filter stage's params enter every recipe's filter key (and run.json):
    these pins were taken before the thresholds moved into the filters. Change them only on purpose."""
    assert FILTER_NAMES == ("boilerplate", "short_sentences", "length", "script", "gopher_repetition",
                            "fineweb_quality", "gopher_quality")
    ko, ja = FilterParams(language="ko"), FilterParams(language="ja")
    assert _sha(ko.model_dump(mode="json")) == "cd15c53b64bf7662"
    assert _sha(ko.thresholds_for("x").model_dump(mode="json")) == "cdc20ff74ae8ce94"
    assert _sha(ja.model_dump(mode="json")) == "b13a3b42311c3d69"
    assert _sha(ja.thresholds_for("x").model_dump(mode="json")) == "f94e820e2ffac22f"


def test_a_knob_declared_by_two_filters_is_an_error():
    class Other(LengthFilter):
        name = "other"

        class Knobs(FilterKnobs):
            min_chars: int | None = Field(3, ge=0, description="the same name as the length filter's")

    with pytest.raises(RegistryError, match="filter 'other' declares the knob 'min_chars', which filter 'length'"):
        thresholds_model(Registry("filter", {"length": LengthFilter, "other": Other}))


def test_a_registry_line_must_name_a_filter_of_that_name():
    reg: Registry[Any] = Registry("filter", {"len": LengthFilter, "dumps": "json:dumps"},
                                  check=check_filter)
    with pytest.raises(RegistryError, match="filter 'len' is registered as LengthFilter, whose name is 'length'"):
        reg.get("len")
    with pytest.raises(RegistryError, match="filter 'dumps' is registered as .*, which is not a Filter class"):
        reg.get("dumps")


def test_ordered_knob_pairs_are_checked_together():
    with pytest.raises(ValidationError, match="min_words=5 is larger than max_words=3"):
        FilterParams(language="ko", min_words=5, max_words=3)
    with pytest.raises(ValidationError, match="min_avg_word_length=9.0 is larger than max_avg_word_length=4.0"):
        FilterParams(language="ko", min_avg_word_length=9, max_avg_word_length=4)


# ---- language defaults against the declared knobs --------------------------------------------------------------
def _language(defaults: dict[str, Any]) -> Korean:
    class Xx(Korean):
        code: ClassVar[str] = "xx"
        default_thresholds: ClassVar[dict[str, Any]] = defaults

    return Xx()


def test_every_language_pack_states_exactly_its_knobs():
    for code in ("ko", "ja"):
        assert dict(language_thresholds(get_language(code))) == get_language(code).default_thresholds


def test_an_unknown_knob_in_a_language_names_the_language_and_the_key():
    with pytest.raises(ValueError, match=r"language 'xx' \(.*default_thresholds\): min_charz: unknown knob; the "
                                         r"registered filters declare: min_chars, "):
        language_thresholds(_language({**KO, "min_charz": 3}))


def test_a_language_value_out_of_bounds_or_missing_names_the_language_and_the_key():
    with pytest.raises(ValueError, match=r"language 'xx' .*: line_punct_thr: Input should be less than or equal "
                                         r"to 1 \(got 2\)"):
        language_thresholds(_language({**KO, "line_punct_thr": 2}))
    with pytest.raises(ValueError, match=r"language 'xx' .*: dup_line_frac: not set; the 'gopher_repetition' "
                                         r"filter's knob 'dup_line_frac' has no default"):
        language_thresholds(_language({k: v for k, v in KO.items() if k != "dup_line_frac"}))
    # a knob with a default (the same for every language) may be left out, or set
    assert language_thresholds(_language({**KO, "min_chars": 5}))["min_chars"] == 5


def test_the_filter_stage_params_check_the_language_pack(monkeypatch):
    bad = _language({**KO, "min_charz": 3})
    monkeypatch.setattr(filter_stage, "get_language", lambda code: bad)
    with pytest.raises(ValidationError, match="language 'xx' .*min_charz: unknown knob"):
        FilterParams(language="ko")


# ---- a new filter: one module and one registry line ------------------------------------------------------------
REGISTRY_LINE = '    "exclaim": "testkit.exclaim_filter:ExclaimFilter",\n'

# Runs with corpora/filters/registry.py replaced by its source plus REGISTRY_LINE, before anything imports it.
SCRIPT = textwrap.dedent('''
    import json, sys, types
    from pathlib import Path

    registry_py, up, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    module = types.ModuleType("corpora.filters.registry")
    module.__file__ = registry_py
    sys.modules[module.__name__] = module
    exec(compile(Path(registry_py).read_text(), registry_py, "exec"), module.__dict__)

    from corpora.filters.params import THRESHOLD_KEYS
    from corpora.stages.filter import FilterParams, FilterStage
    from pipeline.recipe import load_recipe
    from pipeline.recipe_file import RecipeError
    from testkit.curation import docs_of, read_all, run_stage, write_shards

    report = {"knob": "max_exclaim_ratio" in THRESHOLD_KEYS, "order": list(FilterParams(language="ko").order),
              "default": FilterParams(language="ko").max_exclaim_ratio}
    recipe = Path("pipeline/sample/recipe.yaml")
    errors = []
    for override in ("stages.filter.max_exclaim_ratio=2", "stages.filter.per_source={nsmc: {max_exclaim_ratio: -1}}",
                     "stages.filter.max_exclaim_ratio=0.01"):
        try:
            load_recipe(recipe, [override], until="filter", check_sources=False)
            errors.append(None)
        except RecipeError as e:
            errors.append(str(e))
    report["errors"] = errors
    good = ("서울시는 올해 하반기부터 시내버스 노선을 대폭 개편한다고 밝혔다. 시는 출퇴근 시간에 혼잡한 구간을 중심으로 "
            "배차 간격을 줄이고, 이용객이 적은 노선은 통합할 계획이다. 이번 개편은 지난 2년 동안 수집한 교통카드 자료를 "
            "분석한 결과에 따른 것이다. 시 관계자는 시민들의 의견을 충분히 듣고 최종안을 확정하겠다고 말했다.")
    loud = good.replace("다.", "다!!!!!")
    write_shards(up, [docs_of([good, loud])])
    res = run_stage(FilterStage(), {"max_exclaim_ratio": 0.02}, "collect", up, out)
    report["kept"] = [d.text == good for d in read_all(out)]
    report["dropped"] = dict(res.funnel.dropped)
    report["checks"] = res.meta["report"]["checks"]
    print(json.dumps(report))
''')


def _registry_with_the_fixture_line() -> str:
    src = (ROOT / "corpora" / "filters" / "registry.py").read_text(encoding="utf-8")
    head, sep, tail = src.partition("}, check=")
    assert sep, "FILTER_CLASSES in corpora/filters/registry.py no longer ends with '}, check=': update this test"
    return head + REGISTRY_LINE + sep + tail


def test_a_new_filter_is_its_module_and_one_registry_line(tmp_path):
    registry_py = tmp_path / "registry.py"
    registry_py.write_text(_registry_with_the_fixture_line(), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)]), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(registry_py), str(tmp_path / "up"), str(tmp_path / "out")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    # the knob is a recipe key with the fixture's default, and the filter runs after the others by default
    assert report["knob"] and report["default"] is None
    assert report["order"] == [*FILTER_NAMES, "exclaim"]
    # its bounds are the recipe's, the error naming the key path (under per_source too)
    too_big, negative, fine = report["errors"]
    assert "stages.filter.max_exclaim_ratio: Input should be less than or equal to 1 (got 2)" in too_big
    assert "stages.filter.max_exclaim_ratio: Input should be greater than or equal to 0 (got -1)" in negative
    assert fine is None
    # and the stage runs it: the shouting copy is dropped with the filter's name as the reason
    assert report["kept"] == [True]
    assert report["dropped"] == {"exclaim": 1}
    assert report["checks"] == {"exclaim.too_many_exclaims": 1}
