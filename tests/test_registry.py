"""pipeline.registry: names in order, imports on first use, aliases, 'did you mean', and the checks its users add."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pipeline.registry import Registry, RegistryError


def test_lookup_is_lazy_ordered_and_cached():
    reg: Registry[object] = Registry("thing", {"b": "json:dumps", "a": "os.path:join"}, aliases={"J": "a"})
    assert reg.names == ("b", "a") and list(reg) == ["b", "a"] and len(reg) == 2
    import json
    import os.path

    assert reg.get("b") is json.dumps and reg.get("j") is os.path.join and reg.resolve("A") == "a"
    assert "j" in reg and "zz" not in reg and reg.target("a") == "os.path:join"
    assert reg.get("b") is reg.get("B")


def test_names_are_listed_without_importing_anything():
    code = ("import sys; from pipeline.cli import COMMANDS; from pipeline.stages import STAGES; "
            "from finetune.registry import TASK_CLASSES; "
            "print(len(COMMANDS.names), len(STAGES.names), len(TASK_CLASSES.names)); "
            "heavy = [m for m in ('torch', 'MeCab', 'transformers', 'corpora.stages.collect') if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0].split()[1] == "12" and out[1] == "[]"  # collect .. pretrain, finetune


def test_unknown_names_and_broken_entries_say_what_exists():
    reg: Registry[object] = Registry("stage", {"filter": "json:dumps", "dedup": "no_such_module_xyz:X",
                                               "decontaminate": "json:no_such_attr"})
    with pytest.raises(RegistryError, match=r"unknown stage 'filtr'; did you mean 'filter'\? \(known: filter, dedup"):
        reg.get("filtr")
    with pytest.raises(RegistryError, match=r"unknown stage 'zzz' \(known: filter, dedup, decontaminate\)$"):
        reg.get("zzz")
    with pytest.raises(RegistryError, match="stage 'dedup' is declared as no_such_module_xyz:X but its module cannot "
                                            "be imported: ModuleNotFoundError"):
        reg.get("dedup")
    with pytest.raises(RegistryError, match="declared as json:no_such_attr, which does not exist"):
        reg.get("decontaminate")
    with pytest.raises(RegistryError, match="alias 'x' points to 'nope'"):
        Registry("task", {"a": "json:dumps"}, aliases={"x": "nope"})


def test_check_and_from_spec():
    def only_callables(name: str, obj: object) -> None:
        if not callable(obj):
            raise RegistryError(f"{name}: not callable")

    reg: Registry[object] = Registry("fn", {"ok": "json:dumps", "bad": "json:__name__"}, check=only_callables)
    assert reg.get("ok")
    with pytest.raises(RegistryError, match="bad: not callable"):
        reg.get("bad")
    assert Registry.from_spec("stage", "pipeline.stages:STAGE_CLASSES").names[0] == "collect"
    with pytest.raises(RegistryError, match="expected a dict of name -> stage, got str"):
        Registry.from_spec("stage", "json:__name__")
    with pytest.raises(RegistryError, match="cannot import"):
        Registry.from_spec("stage", "no_such_module_xyz:R")
