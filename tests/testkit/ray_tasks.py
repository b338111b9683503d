"""Task functions for the Ray executor tests; importable by Ray's worker processes (the test puts tests/ on
their PYTHONPATH)."""

from __future__ import annotations

import os
from pathlib import Path


def crash_once(task: tuple[str, int]) -> tuple[int, int]:
    """Kills its own worker process on the first attempt at each item (a marker file remembers it), as a
    machine fault would; the retry returns (x*x, attempt pid)."""
    marker_dir, x = task
    marker = Path(marker_dir) / f"{x}.crashed"
    if not marker.exists():
        marker.write_text(str(os.getpid()), encoding="utf-8")
        os._exit(1)
    return x * x, os.getpid()


def bad_input(x: int) -> int:
    """Raises on one item: a task's own error, which must fail the map (not be retried into silence)."""
    if x == 3:
        raise ValueError(f"shard {x}: malformed record")
    return x


def slow_square(task: tuple[str, int, float]) -> tuple[int, str]:
    """Records which node started it (a file per attempt), sleeps, returns (x*x, node id)."""
    import time

    import ray

    marker_dir, x, seconds = task
    node = ray.get_runtime_context().get_node_id()
    Path(marker_dir, f"{x}-{os.getpid()}.{node}").touch()
    time.sleep(seconds)
    return x * x, node


def visible_device(x: int) -> tuple[int, str | None]:
    """The item and the `CUDA_VISIBLE_DEVICES` Ray gave the task that ran it."""
    import time

    time.sleep(0.5)  # long enough that two tasks hold their devices at once
    return x, os.environ.get("CUDA_VISIBLE_DEVICES")
