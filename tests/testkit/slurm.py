"""A one-node Slurm on this machine for the tests of `launcher: slurm` (pretrain/slurm.py): Debian's slurm-wlm
(slurmctld + slurmd) and munge, started from a generated slurm.conf in a temporary folder and stopped after.

Nothing of the system's is used or changed: the daemons get their own munge key and socket, spool and state
folders, log files and ports, and the client commands (sbatch, squeue, scontrol) find this cluster through
`SLURM_CONF`, which `LocalSlurm.env` sets for the test's process (and `klue run` subprocesses inherit). Where
slurm-wlm or munge is not installed, or the daemons do not come up, `start_local_slurm` raises `SlurmUnavailable`
with the reason, and the fixture skips with it (.ci/run installs the packages as it installs Chromium).

No cgroups (`proctrack/linuxproc`, `task/none`): they need a systemd-managed cgroup tree that containers and
CI runners rarely give; the tests need a scheduler that runs a batch script and srun steps, not isolation.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "sinfo", "srun")


class SlurmUnavailable(RuntimeError):
    """Slurm cannot run here: the message says why (what is missing, or the daemon log's last lines)."""


@dataclass
class LocalSlurm:
    """A running one-node cluster: its folder, config, node name, and the processes to stop."""

    root: Path
    conf: Path
    node: str
    cpus: int
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        """What a client needs to reach this cluster (set it in os.environ, or pass it to a subprocess)."""
        return {"SLURM_CONF": str(self.conf)}

    def logs(self) -> str:
        """The daemons' logs' last lines, for a failure message."""
        out = []
        for name in ("slurmctld.log", "slurmd.log", "munged.log"):
            path = self.root / name
            if path.is_file():
                lines = path.read_text(errors="replace").splitlines()[-15:]
                out.append(f"--- {name}\n" + "\n".join(lines))
        return "\n".join(out)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(what: str, check: object, timeout_s: float, slurm: LocalSlurm) -> None:
    """Poll `check()` (a callable returning bool) until true, or raise SlurmUnavailable with the logs."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for proc in slurm.procs:
            if proc.poll() is not None:
                raise SlurmUnavailable(f"{proc.args[0]} exited ({proc.returncode}) while waiting for {what}\n"
                                       f"{slurm.logs()}")
        if check():  # type: ignore[operator]
            return
        time.sleep(0.3)
    raise SlurmUnavailable(f"timed out after {timeout_s:.0f} s waiting for {what}\n{slurm.logs()}")


def slurm_conf(root: Path, node: str, cpus: int, ctld_port: int, slurmd_port: int, munge_socket: Path) -> str:
    """slurm.conf of a one-node cluster in `root`: the node is this machine (`hostname -s`), with `cpus` CPUs,
    whatever it has (`config_overrides`), in one default partition; no accounting, no cgroups."""
    user = os.environ.get("USER") or ("root" if os.getuid() == 0 else str(os.getuid()))
    return "\n".join([
        "ClusterName=klue-test",
        f"SlurmctldHost={node}(127.0.0.1)",
        f"SlurmctldPort={ctld_port}",
        f"SlurmdPort={slurmd_port}",
        f"SlurmUser={user}",
        f"SlurmdUser={user}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={munge_socket}",
        f"StateSaveLocation={root / 'state'}",
        f"SlurmdSpoolDir={root / 'spool'}",
        f"SlurmctldPidFile={root / 'slurmctld.pid'}",
        f"SlurmdPidFile={root / 'slurmd.pid'}",
        f"SlurmctldLogFile={root / 'slurmctld.log'}",
        f"SlurmdLogFile={root / 'slurmd.log'}",
        "SlurmctldDebug=info",
        "SlurmdDebug=info",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "MpiDefault=none",
        "SchedulerType=sched/backfill",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_CPU",
        "SlurmdParameters=config_overrides",
        "ReturnToService=2",
        "MinJobAge=600",  # finished jobs stay in scontrol's memory for the tests to read
        "KillWait=30",
        "SchedulerParameters=sched_interval=1",
        f"NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN",
        f"PartitionName=debug Nodes={node} Default=YES MaxTime=INFINITE State=UP",
        "",
    ])


def _start(root: Path, cpus: int) -> LocalSlurm:
    missing = [c for c in (*DAEMONS, *CLIENTS) if shutil.which(c) is None
               and not Path("/usr/sbin", c).is_file()]
    if missing:
        raise SlurmUnavailable(f"not installed: {', '.join(missing)} (apt-get install slurm-wlm munge)")
    node = subprocess.run(["hostname", "-s"], capture_output=True, text=True, check=True).stdout.strip()
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o700)  # munged refuses a key or socket folder others can write to
    for d in ("state", "spool", "munge"):
        (root / d).mkdir(exist_ok=True)
        (root / d).chmod(0o700)
    key = root / "munge" / "munge.key"
    key.write_bytes(os.urandom(128))
    key.chmod(0o600)
    munge_socket = root / "munge" / "munge.socket"
    conf = root / "slurm.conf"
    conf.write_text(slurm_conf(root, node, cpus, _free_port(), _free_port(), munge_socket))
    slurm = LocalSlurm(root=root, conf=conf, node=node, cpus=cpus)

    def daemon(*cmd: str) -> None:
        exe = shutil.which(cmd[0]) or str(Path("/usr/sbin", cmd[0]))
        log = open(root / f"{cmd[0]}.stderr", "wb")  # noqa: SIM115 - kept open for the daemon's lifetime
        slurm.procs.append(subprocess.Popen([exe, *cmd[1:]], stdout=log, stderr=subprocess.STDOUT,
                                            env={**os.environ, "SLURM_CONF": str(conf)}, start_new_session=True))

    try:
        daemon("munged", "--foreground", "--force", f"--socket={munge_socket}", f"--key-file={key}",
               f"--pid-file={root / 'munge' / 'munged.pid'}", f"--log-file={root / 'munged.log'}",
               f"--seed-file={root / 'munge' / 'munged.seed'}", "--num-threads=2")
        _wait("munged's socket", munge_socket.exists, 20, slurm)
        daemon("slurmctld", "-D", "-i", "-f", str(conf))
        daemon("slurmd", "-D", "-f", str(conf), "-N", node)

        def idle() -> bool:
            r = subprocess.run(["sinfo", "-h", "-N", "-o", "%t"], capture_output=True, text=True,
                               env={**os.environ, "SLURM_CONF": str(conf)})
            return r.returncode == 0 and r.stdout.strip() in ("idle", "mix", "alloc")

        _wait("the node to be idle in sinfo", idle, 60, slurm)
    except BaseException:
        stop(slurm)
        raise
    return slurm


def stop(slurm: LocalSlurm) -> None:
    """Cancel what is left, then stop slurmd, slurmctld and munged (SIGTERM, then SIGKILL after 10 s)."""
    if any(p.poll() is None for p in slurm.procs[1:]):
        subprocess.run(["scancel", "--full", "--user", str(os.getuid())], capture_output=True,
                       env={**os.environ, **slurm.env}, timeout=20, check=False)
    for proc in reversed(slurm.procs):
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    slurm.procs.clear()


@contextmanager
def local_slurm(root: Path, cpus: int = 2) -> Iterator[LocalSlurm]:
    """A running one-node cluster for the block, `SLURM_CONF` set in os.environ while it runs."""
    slurm = _start(root, cpus)
    before = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(slurm.conf)
    try:
        yield slurm
    finally:
        if before is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = before
        stop(slurm)
