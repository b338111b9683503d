"""`klue` entry point for collect kill tests: logs every read task of the collect stage and can pause in one.

KLUE_COLLECT_READ_LOG=<file>: each read of a file, or of a piece of a split file, appends a line
"<rel> <start>-<end>" ("<rel> whole" for a whole file), from the pool workers too (they are forked after this
module patched `read_file`). With KLUE_COLLECT_PAUSE_AT=N and KLUE_COLLECT_PAUSE_FILE, the N-th read (and every
read after it) writes the pause file before reading and sleeps until killed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import corpora.stages.collect as collect
from pipeline.cli import main

_real_read_file = collect.read_file


def _read_file(spec: Any, src: Any, opts: Any, span: Any = None) -> Any:
    log = os.environ.get("KLUE_COLLECT_READ_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{src.rel} {'whole' if span is None else f'{span.start}-{span.end}'}\n")
        at = os.environ.get("KLUE_COLLECT_PAUSE_AT")
        if at and len(Path(log).read_text(encoding="utf-8").splitlines()) >= int(at):
            Path(os.environ["KLUE_COLLECT_PAUSE_FILE"]).write_text("paused\n")
            time.sleep(120)
    return _real_read_file(spec, src, opts, span)


collect.read_file = _read_file  # type: ignore[assignment]

if __name__ == "__main__":
    main()
