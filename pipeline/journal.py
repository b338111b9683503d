"""The records of shard-level resume (`Stage.shard_resume`): a task's result as JSON, read back without pickle.

Why not pickle: reading a pickle runs whatever it names, and the project loads nothing that way (safetensors,
`yaml.safe_load`). Task results are plain data: numbers, strings, lists, dicts, Counters, numpy values and the
project's dataclasses (`Funnel`, `ShardReport`, `ShardResult`), so a tagged JSON covers them. A dataclass is
rebuilt only if its module is one of this project's packages and the name is a dataclass there, or if the class
was registered (`register`) by the code that defines it outside them (a stage registry of one's own, `klue run
--registry module:DICT`, or a test's helpers); anything else in a record is an error naming it, never an import
of arbitrary code.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections import Counter
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

TAG = "__journal__"
PACKAGES = ("pipeline", "corpora", "tokenizer", "pretrain", "finetune", "datagen")  # the installed packages
_REGISTERED: dict[str, type] = {}  # "module:qualname" -> a dataclass from outside PACKAGES, by `register`

T = TypeVar("T", bound=type)


def register(cls: T) -> T:
    """Let records hold `cls`, a dataclass defined outside this project's packages, and rebuild it on reading
    (from this table: a record never imports its module). Called, or used as a decorator, where the class is
    defined, so that the process reading the records has registered it once it has imported that module (as the
    runner has imported a `--registry` module before it reads a journal)."""
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"journal.register: {cls!r} is not a dataclass")
    _REGISTERED[_name(cls)] = cls
    return cls


def _name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def dumps(obj: Any) -> str:
    return json.dumps(_enc(obj), ensure_ascii=False, separators=(",", ":"))


def loads(text: str, where: str = "journal record") -> Any:
    return _dec(json.loads(text), where)


def _enc(o: Any) -> Any:
    if o is None or isinstance(o, (bool, str)) or type(o) in (int, float):
        return o
    if isinstance(o, np.generic):
        return {TAG: "np", "dtype": o.dtype.str, "v": o.item()}
    if isinstance(o, np.ndarray):
        return {TAG: "nd", "dtype": o.dtype.str, "shape": list(o.shape), "v": o.ravel().tolist()}
    if isinstance(o, Path):
        return {TAG: "path", "v": str(o)}
    if isinstance(o, Counter):
        return {TAG: "counter", "v": [[_enc(k), _enc(v)] for k, v in o.items()]}
    if isinstance(o, dict):
        if all(type(k) is str for k in o) and TAG not in o:
            return {k: _enc(v) for k, v in o.items()}
        return {TAG: "dict", "v": [[_enc(k), _enc(v)] for k, v in o.items()]}
    if isinstance(o, tuple):
        return {TAG: "tuple", "v": [_enc(x) for x in o]}
    if isinstance(o, list):
        return [_enc(x) for x in o]
    if isinstance(o, (set, frozenset)):
        return {TAG: "frozenset" if isinstance(o, frozenset) else "set", "v": [_enc(x) for x in o]}
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        cls = type(o)
        return {TAG: "dc", "cls": _name(cls),
                "v": {f.name: _enc(getattr(o, f.name)) for f in dataclasses.fields(o)}}
    raise TypeError(f"journal: a task result holds a {type(o).__module__}.{type(o).__qualname__}, which a "
                    "record cannot hold (plain data, numpy values and the project's dataclasses only)")


def _dataclass(name: str, where: str) -> type:
    if name in _REGISTERED:
        return _REGISTERED[name]
    module, _, qualname = name.partition(":")
    if module.split(".")[0] not in PACKAGES:
        raise ValueError(f"{where}: refers to {name!r}, outside this project's packages and not registered "
                         "(journal.register); not loaded")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if not (isinstance(obj, type) and dataclasses.is_dataclass(obj)):
        raise ValueError(f"{where}: {name!r} is not a dataclass of this project")
    return obj


def _dec(o: Any, where: str) -> Any:
    if isinstance(o, list):
        return [_dec(x, where) for x in o]
    if not isinstance(o, dict):
        return o
    kind = o.get(TAG)
    if kind is None:
        return {k: _dec(v, where) for k, v in o.items()}
    v = o["v"]
    if kind == "np":
        return np.array(v, dtype=np.dtype(o["dtype"]))[()]
    if kind == "nd":
        return np.array(v, dtype=np.dtype(o["dtype"])).reshape(o["shape"])
    if kind == "path":
        return Path(v)
    if kind == "counter":
        return Counter({_dec(k, where): _dec(x, where) for k, x in v})
    if kind == "dict":
        return {_dec(k, where): _dec(x, where) for k, x in v}
    if kind == "tuple":
        return tuple(_dec(x, where) for x in v)
    if kind in ("set", "frozenset"):
        items = [_dec(x, where) for x in v]
        return set(items) if kind == "set" else frozenset(items)
    if kind == "dc":
        cls = _dataclass(o["cls"], where)
        values = {k: _dec(x, where) for k, x in v.items()}
        init = {f.name for f in dataclasses.fields(cls) if f.init}
        inst = cls(**{k: x for k, x in values.items() if k in init})
        for k, x in values.items():
            if k not in init:
                object.__setattr__(inst, k, x)
        return inst
    raise ValueError(f"{where}: unknown record tag {kind!r}")
