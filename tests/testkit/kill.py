"""Kill -9 a `klue` process group at a chosen point, for the resume tests: wait until `ready()` holds (a pause
flag written, a unit's file appeared), failing with the process's output if it exits or the deadline passes first,
then SIGKILL the whole group (the runner and its pool workers) at once."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable

import pytest


def kill_group_when(p: subprocess.Popen[bytes], ready: Callable[[], bool], timeout_s: float, what: str) -> None:
    """SIGKILL `p`'s process group (started with `start_new_session=True`) once `ready()`; `what` names the
    point in the failure message."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        if p.poll() is not None or time.monotonic() > deadline:
            p.kill()
            pytest.fail(f"never reached {what}: {p.communicate()[0].decode()}")
        time.sleep(0.02)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
