"""Order-preserving maps over shards: a local process pool, or Ray core tasks on a cluster. Work is split by
shard and results come back in input order, so outputs never depend on the executor or the worker count."""

from __future__ import annotations

import collections
import functools
import multiprocessing as mp
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tqdm.auto import tqdm

from pipeline.versions import package_versions

# Ray retries a task whose worker process or node died (its default for tasks is 3); an exception raised by the
# task's own code is a bug or bad input and is not retried, so it fails the stage with its message.
RAY_MAX_RETRIES = 3


@dataclass(frozen=True)
class Executor:
    """Where `ordered_map` runs tasks. `local`: this machine's process pool. `ray`: Ray core tasks on the
    cluster at `address` (`auto`, `host:port`, `ray://…`; None: $RAY_ADDRESS, else a Ray instance started
    for this process). Not part of any stage key: outputs do not depend on it (the manifest records it)."""

    kind: Literal["local", "ray"] = "local"
    address: str | None = None

    def describe(self) -> dict[str, Any]:
        if self.kind == "local":
            return {"kind": "local"}
        import ray

        return {"kind": "ray", "address": self.address or os.environ.get("RAY_ADDRESS") or "local instance",
                "ray": ray.__version__, "nodes": sum(1 for n in ray.nodes() if n.get("Alive")) if ray.is_initialized()
                else None}


LOCAL = Executor()


def ordered_map(fn: Callable[[Any], Any], items: Iterable[Any], workers: int = 1, desc: str | None = None,
                total: int | None = None, executor: Executor = LOCAL,
                start: Literal["fork", "spawn"] = "fork", devices: int = 0) -> Iterator[Any]:
    """Yield fn(item) for each item, in input order, computed on `workers` processes (1: in this process),
    or as Ray tasks on a cluster (`executor.kind == "ray"`; see `_ray_map`).

    `devices` > 0: each task gets an accelerator of its own. Locally, one worker process per device (`workers`
    is then `devices`), each started with `CUDA_VISIBLE_DEVICES` set to its own device id (`_claim_device`), so
    the tasks of a node's GPUs run side by side, one per GPU; with one device, in this process as before. On Ray,
    each task asks for `num_gpus=1` and Ray sets `CUDA_VISIBLE_DEVICES` for it.

    `start` is how the local pool's processes start. `fork` (fast) suits tasks that have not used torch's
    thread pool in this process; `spawn` for those that train: a child forked after the parent ran torch's
    OpenMP threads hangs in its first multi-threaded op (measured: torch 2.13 on Linux, a 2-thread matmul in the
    parent, then 2 threads in a forked child: no return in 120 s; 1 thread returns)."""
    items = list(items)
    total = len(items) if total is None else total
    bar = tqdm(total=total, desc=desc, unit="shard", disable=desc is None, leave=False)
    try:
        if executor.kind == "ray":
            for res in _ray_map(fn, items, executor, desc, gpus=1 if devices else 0):
                yield res
                bar.update(1)
            return
        if devices:
            workers = devices
        if workers <= 1 or len(items) <= 1:
            for item in items:
                yield fn(item)
                bar.update(1)
            return
        # fork: workers inherit imported modules (fast start); every task function builds its own heavy
        # objects (MeCab taggers, analyzers) lazily, per process.
        ctx = mp.get_context(start)
        claims: Any = None
        if devices > 1:
            claims = ctx.Queue()
            for device in range(devices):
                claims.put(device)
        with ctx.Pool(processes=min(workers, len(items)), initializer=_claim_device if claims else None,
                      initargs=(claims,) if claims else ()) as pool:
            for res in pool.imap(fn, items, chunksize=1):
                yield res
                bar.update(1)
    finally:
        bar.close()


def _claim_device(claims: Any) -> None:
    """A local worker's device for its lifetime (`ordered_map`'s `devices`): the next free id from the queue, as
    `CUDA_VISIBLE_DEVICES`, set before anything in the process starts CUDA (torch reads it then). For the
    process's lifetime, not per task: CUDA cannot change devices once started."""
    os.environ["CUDA_VISIBLE_DEVICES"] = str(claims.get(timeout=60))


PROJECT_PACKAGES = ("pipeline", "corpora", "tokenizer", "pretrain", "finetune")
OUTPUT_EXTRAS = ("ja",)  # extras whose packages change stage outputs (language packs), checked with the core


@functools.cache
def environment() -> dict[str, str]:
    """What must be the same on every node for a task's output not to depend on where it ran: Python, a digest
    of this project's files (code and shipped data), and the installed versions of its dependencies and Ray."""
    import hashlib
    import platform
    import re
    from importlib import metadata

    h = hashlib.sha256()
    base = Path(__file__).resolve().parent.parent  # the project's packages sit side by side (checkout or wheel)
    for pkg in PROJECT_PACKAGES:
        root = base / pkg
        for f in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            h.update(f"{pkg}/{f.relative_to(root).as_posix()}\0".encode())
            h.update(f.read_bytes())
    # a PEP 508 requirement starts with the distribution's name
    names = {re.match(r"[A-Za-z0-9._-]+", r)[0] for r in metadata.requires("klue-pipeline") or []  # type: ignore[index]
             if "extra ==" not in r or any(f'extra == "{x}"' in r for x in OUTPUT_EXTRAS)}

    return {"python": platform.python_version(), "klue-pipeline files": h.hexdigest()[:16],
            **package_versions(*sorted(names | {"ray"}))}


class ClusterMismatch(RuntimeError):
    """A Ray worker's environment differs from the driver's (see `environment`)."""


def check_environment(expected: dict[str, str]) -> None:
    """In a Ray worker: raise ClusterMismatch, naming the node and what differs, where the worker's environment
    is not the driver's (`expected`): a node with another numpy, MeCab dictionary or edit of this project would
    silently write other bytes."""
    got = environment()
    diff = {k: (got.get(k, "missing"), v) for k, v in expected.items() if got.get(k, "missing") != v}
    if diff:
        import ray

        node = ray.util.get_node_ip_address()
        what = "; ".join(f"{k} {there} there, {here} on the driver" for k, (there, here) in sorted(diff.items()))
        raise ClusterMismatch(f"Ray node {node} differs from the driver: {what}. Outputs would depend on where a "
                              "task ran; install the same versions (and the same checkout) on every node "
                              "(docs/scaling.md)")


def _checked_call(fn: Callable[[Any], Any], item: Any, expected: dict[str, str]) -> Any:
    """Runs `fn(item)` in a Ray worker after `check_environment`. Checked in every task (cached per worker
    process), so nodes that join the cluster later are checked too."""
    check_environment(expected)
    return fn(item)


def ray_connect(executor: Executor) -> None:
    """Connect this process (the driver) to the cluster once; quiet: no dashboard, worker logs not echoed."""
    import ray

    if not ray.is_initialized():
        ray.init(address=executor.address or os.environ.get("RAY_ADDRESS") or None, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)


_remote_checked: Any = None  # `_checked_call` as a Ray remote function, made once per driver


def _ray_map(fn: Callable[[Any], Any], items: list[Any], executor: Executor, desc: str | None,
             gpus: int = 0) -> Iterator[Any]:
    """fn over items as Ray tasks, results in input order. At most twice the cluster's CPUs are in flight (the
    driver does not hold every shard's result at once); a task whose worker or node dies is retried by Ray.
    One line per finished task on stderr when `desc` is set (a cluster's progress, readable in a log). `gpus`:
    what each task asks for (Ray then sets its `CUDA_VISIBLE_DEVICES`); refused on a cluster without GPUs, where
    such tasks would wait forever."""
    import ray

    ray_connect(executor)
    global _remote_checked
    if _remote_checked is None:
        _remote_checked = ray.remote(max_retries=RAY_MAX_RETRIES, retry_exceptions=False)(_checked_call)
    resources = ray.cluster_resources()
    if gpus and resources.get("GPU", 0) < gpus:
        raise RuntimeError(f"tasks that need {gpus} GPU each, on a Ray cluster with {resources.get('GPU', 0):g} "
                           "GPUs: they would never be scheduled")
    remote = _remote_checked.options(num_gpus=gpus) if gpus else _remote_checked
    expected = ray.put(environment())
    window = max(2, 2 * int(resources.get("CPU", 1)))
    pending: collections.deque = collections.deque()
    done = 0
    for item in items:
        pending.append(remote.remote(fn, item, expected))
        if len(pending) >= window:
            yield ray.get(pending.popleft())
            done += 1
            if desc:
                print(f"{desc}: {done}/{len(items)} done", file=sys.stderr, flush=True)
    while pending:
        yield ray.get(pending.popleft())
        done += 1
        if desc:
            print(f"{desc}: {done}/{len(items)} done", file=sys.stderr, flush=True)
