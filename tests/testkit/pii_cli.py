"""`klue pii detect` on a JSON-lines file through click's runner, for the Korean and Japanese CLI tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from corpora.pii.cli import pii


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def detect(src: Path, out: Path, *args: str) -> list[dict[str, Any]]:
    """The records `klue pii detect SRC --output OUT ARGS` writes (it must succeed)."""
    res = CliRunner().invoke(pii, ["detect", str(src), "--output", str(out), *args])
    assert res.exit_code == 0, res.output
    return [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
