"""`launcher: slurm` (issue 51, item 1): the pretrain stage's loop as an sbatch job, waited for, re-attached to by a
later call, its folder adopted when done. Without Slurm: the stage key ignores the launcher, the rendered
script's lines, the global batch kept over the allocation's processes (or refused). On a real one-node Slurm
started here (tests/testkit/slurm.py; skips saying why without slurm-wlm): the job's weights are the bytes of the
same 2 ranks under local torchrun, and a stage call killed while its job runs is re-attached by the next one."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from pretrain.config import PretrainParams, SlurmParams, TrainConfig
from pretrain.slurm import JOB_FILE, job_state, render_script
from testkit.pretrain import context, encode_fixture, pretrain_key, two_rank_params

TESTS = Path(__file__).resolve().parent


# -- without Slurm ------------------------------------------------------------------------------------------


def test_the_launcher_and_the_allocation_are_not_in_the_key_but_the_processes_are(tmp_path):
    local, _ = pretrain_key(tmp_path, "stages.pretrain.num_processes=4")
    slurm, params = pretrain_key(tmp_path, "stages.pretrain.launcher=slurm", "stages.pretrain.num_processes=4",
                                  "stages.pretrain.slurm={time: '2:00:00', partition: cpu, signal_s: 60}")
    assert slurm == local and params["launcher"] == "slurm", "the manifest keeps them; the key does not"
    # 2 nodes x 2 ranks for a recipe of 1 process x grad_accum 4: the run is 4 ranks x grad_accum 1, keyed so
    moved, params = pretrain_key(tmp_path, "stages.pretrain.launcher=slurm", "stages.pretrain.grad_accum=4",
                                  "stages.pretrain.slurm={nodes: 2, procs_per_node: 2}")
    assert (params["num_processes"], params["grad_accum"]) == (4, 1)
    assert moved == local
    # `klue run --launcher slurm` is the override `stages.pretrain.launcher=slurm`: the dry run shows the same key
    from click.testing import CliRunner

    from pipeline.cli import main

    res = CliRunner().invoke(main, ["run", "--dry-run", "--until", "pretrain", "--workdir", str(tmp_path / "d"),
                                    "--launcher", "slurm", "--set", "stages.pretrain.num_processes=4"])
    assert res.exit_code == 0, res.output
    assert re.search(rf"^  pretrain\s+would run\s+key {local[:8]}", res.output, re.M), res.output
    assert "launcher: slurm: 1 node x 4 ranks (CPU); an sbatch job (slurm_job.sbatch in the stage folder), " \
           "waited for; a rerun re-attaches to it" in res.output


def test_the_global_batch_is_the_recipes_whatever_the_allocation():
    p = PretrainParams(launcher="slurm", batch_size=8, grad_accum=8, num_processes=1,
                       slurm=SlurmParams(nodes=2, gpus_per_node=4))
    assert (p.num_processes, p.grad_accum) == (8, 1)
    assert PretrainParams.model_validate(p.model_dump()) == p, "idempotent: a manifest's params reload the same"
    p = PretrainParams(launcher="slurm", batch_size=8, grad_accum=1, num_processes=4, slurm={"nodes": 2})
    assert (p.num_processes, p.grad_accum, p.slurm.ranks_per_node(4)) == (4, 1, 2), "CPU: the recipe's ranks"
    assert PretrainParams(batch_size=8, grad_accum=8, slurm={"nodes": 2, "gpus_per_node": 4}).num_processes == 1, \
        "launcher local: the allocation is ignored"
    with pytest.raises(ValidationError, match=r"the global batch 16 \(batch_size 8 x grad_accum 2 x num_processes "
                                              r"1\) does not divide over 4 processes \(2 nodes x 2\)"):
        PretrainParams(launcher="slurm", batch_size=8, grad_accum=2, slurm={"nodes": 2, "procs_per_node": 2})
    with pytest.raises(ValidationError, match="num_processes 3 do not divide over 2 nodes"):
        PretrainParams(launcher="slurm", num_processes=3, slurm={"nodes": 2})


def _cfg(p: PretrainParams, out: Path) -> TrainConfig:
    return TrainConfig.model_validate({**p.model_dump(), "seed": 7, "encode_dir": "/e", "tokenizer_dir": "/t",
                                       "out_dir": str(out)})


def test_the_rendered_script(tmp_path):
    run = tmp_path / "abc.partial"
    p = PretrainParams(launcher="slurm", batch_size=16, grad_accum=4, num_processes=1, threads=4,
                       slurm=SlurmParams(nodes=2, gpus_per_node=2, partition="gpu", account="lab", time="48:00:00",
                                         signal_s=600, extra_args=["--qos=high"]))
    cfg = _cfg(p, run)
    assert "launcher" not in cfg.model_dump() and "slurm" not in cfg.model_dump(), "train_config.json: the run's"
    lines = render_script(cfg, run / "train_config.json", p.slurm, python="/venv/bin/python",
                          chdir=Path("/src")).splitlines()
    assert lines[1] == "# Rendered by pretrain/slurm.py for abc.partial: 4 ranks (2 nodes x 2), batch 16 x " \
                       "grad_accum 1."
    assert [x for x in lines if x.startswith("#SBATCH")] == [
        "#SBATCH --job-name=klue-pretrain", "#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=1",
        "#SBATCH --gpus-per-node=2", "#SBATCH --partition=gpu", "#SBATCH --account=lab", "#SBATCH --time=48:00:00",
        "#SBATCH --signal=USR1@600", f"#SBATCH --output={run}/slurm-%j.out", "#SBATCH --chdir=/src",
        "#SBATCH --export=ALL", "#SBATCH --no-requeue", "#SBATCH --qos=high"]
    assert [x for x in lines if x.startswith("export ")] == [
        "export KLUE_PYTHON=/venv/bin/python", f"export KLUE_TRAIN_CONFIG={run}/train_config.json",
        "export KLUE_PROCS_PER_NODE=2", "export TOKENIZERS_PARALLELISM=false", "export OMP_NUM_THREADS=4",
        "export MASTER_ADDR MASTER_PORT",
        'export SRUN_CPUS_PER_TASK="${SLURM_CPUS_PER_TASK:-1}"']
    assert lines[-1] == (
        "srun --kill-on-bad-exit=1 bash -c 'exec \"$KLUE_PYTHON\" -m torch.distributed.run --nnodes "
        "\"$SLURM_NNODES\" --nproc_per_node \"$KLUE_PROCS_PER_NODE\" --node_rank \"$SLURM_NODEID\" --rdzv_backend "
        "c10d --rdzv_endpoint \"$MASTER_ADDR:$MASTER_PORT\" --rdzv_id \"$SLURM_JOB_ID\" --signals-to-handle "
        "SIGTERM,SIGINT,SIGHUP,SIGQUIT,SIGUSR1 --shutdown-timeout 600 -m pretrain.train \"$KLUE_TRAIN_CONFIG\"'")
    # on CPU: the cores the ranks' threads need, one torch thread count, DeepSpeed's CPU accelerator; no signal
    p = PretrainParams(launcher="slurm", num_processes=2, threads=3, deepspeed="zero2",
                       slurm=SlurmParams(signal_s=0))
    cpu = render_script(_cfg(p, run), run / "train_config.json", p.slurm, python="/p", chdir=Path("/s"))
    assert "#SBATCH --cpus-per-task=6" in cpu and "--gpus" not in cpu and "--signal=" not in cpu
    assert "export OMP_NUM_THREADS=3\nexport DS_ACCELERATOR=cpu\n" in cpu
    spaced = render_script(_cfg(p, tmp_path / "a b"), tmp_path / "a b" / "train_config.json", p.slurm)
    assert f"export KLUE_TRAIN_CONFIG='{tmp_path}/a b/train_config.json'" in spaced


# -- on a real one-node Slurm -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from testkit.slurm import SlurmUnavailable, local_slurm

    try:
        with local_slurm(tmp_path_factory.mktemp("slurm"), cpus=2) as slurm:
            yield slurm
    except SlurmUnavailable as e:
        pytest.skip(f"no local Slurm: {e}")


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    return encode_fixture(tmp_path_factory.mktemp("slurm-enc"), n_shards=2, repeat=3, eval_fraction=0.15)


def _params(launcher: str) -> PretrainParams:
    # a hung job ends the test in minutes (TIMEOUT, no resubmission), never the CI run
    return two_rank_params(launcher, slurm={"poll_s": 0.5, "signal_s": 0, "time": "00:08:00", "max_resubmits": 0})


def _ctx(encoded, out: Path, p: PretrainParams):
    enc, vocab, result = encoded
    return context(out, p, {"encode": (enc, result.meta), "vocab": (vocab, {"tokenizer_dir": "tok"})})


@pytest.fixture(scope="module")
def local_run(encoded, tmp_path_factory):
    """The 2 ranks under local torchrun: the bytes a Slurm job of the same params must give."""
    from pretrain.stages.pretrain import PretrainStage

    out = tmp_path_factory.mktemp("local") / "run"
    PretrainStage().run(_ctx(encoded, out, _params("local")))
    return out


def _weights(run: Path) -> bytes:
    return (run / "final" / "model.safetensors").read_bytes()


STAGE_CALL = """
import sys
from pathlib import Path
from pretrain.config import PretrainParams
from pretrain.stages.pretrain import PretrainStage
from testkit.pretrain import context
enc, vocab, meta, out, params = sys.argv[1:]
ctx = context(Path(out), PretrainParams.model_validate_json(params),
              {"encode": (Path(enc), __import__("json").loads(meta)), "vocab": (Path(vocab), {"tokenizer_dir": "tok"})})
PretrainStage().run(ctx)
"""


@pytest.mark.slow
def test_a_slurm_job_killed_while_waited_for_is_re_attached_and_trains_the_bytes_of_local_torchrun(
        cluster, encoded, local_run, tmp_path, capsys):
    """What `klue run` killed and rerun does to the stage: the first call (a process of its own) submits the job
    and is SIGKILLed once the job runs; the job runs on; the second call finds it and waits for it, submitting
    nothing, and ends with the bytes of the same 2 ranks under local torchrun. A third call adopts the finished
    folder. (One job for all of it: each costs half a minute on two shared cores.)"""
    from pretrain.stages.pretrain import PretrainStage

    enc, vocab, result = encoded
    out = tmp_path / "key.partial"
    p = _params("slurm")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", STAGE_CALL, str(enc), str(vocab), json.dumps(result.meta),
                             str(out), p.model_dump_json()], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        state = ""
        while time.monotonic() < deadline and proc.poll() is None:
            if (out / JOB_FILE).is_file():
                state = job_state(json.loads((out / JOB_FILE).read_text())["job_id"]).state
                if state == "RUNNING":
                    break
            time.sleep(0.2)
        assert state == "RUNNING", f"no running job (exit {proc.poll()}): {proc.stdout.read() if proc.poll() else ''}"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    job_id = json.loads((out / JOB_FILE).read_text())["job_id"]
    res = PretrainStage().run(_ctx(encoded, out, p))
    printed = capsys.readouterr().out
    assert f"re-attaching to Slurm job {job_id} (RUNNING)" in printed and "submitted" not in printed
    job = json.loads((out / JOB_FILE).read_text())
    assert job["job_id"] == job_id and job["earlier_jobs"] == [], "no second submission"
    assert job_state(job_id).state == "COMPLETED" and res.meta["report"]["steps"] == 6
    assert res.meta["report"]["world_size"] == 2
    assert (out / f"slurm-{job_id}.out").is_file() and (out / "slurm_job.sbatch").is_file()
    assert _weights(out) == _weights(local_run)
    assert (out / "train_config.json").read_bytes() == (local_run / "train_config.json").read_bytes().replace(
        str(local_run).encode(), str(out).encode()), "the same config but for the folder"
    # a later call on the finished folder adopts it: no second job
    again = PretrainStage().run(_ctx(encoded, out, p))
    assert json.loads((out / JOB_FILE).read_text())["job_id"] == job_id
    assert again.meta["report"] == res.meta["report"]
    assert f"Slurm job {job_id} finished (COMPLETED); adopting key.partial" in capsys.readouterr().out
    assert PretrainStage.progress(out, {}).startswith(f"Slurm job {job_id} COMPLETED: step 6 of 6, loss")


# -- the waiting, resubmitting and refusing, against a scripted Slurm ---------------------------------------


class ScriptedSlurm:
    """Stands in for sbatch and scontrol (`pretrain.slurm._slurm`): job N (from 1) reports the states of
    `jobs[N - 1]` one per query, the last one for ever, and runs `on_end(run_dir)` when it first reports it."""

    def __init__(self, run_dir: Path, jobs: list[tuple[list[str], str, object]]):
        self.run_dir, self.jobs, self.submitted, self.queries = run_dir, jobs, 0, {}

    def __call__(self, *cmd: str, timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
        if cmd[0] == "sbatch":
            self.submitted += 1
            return subprocess.CompletedProcess(cmd, 0, f"{self.submitted}\n", "")
        if cmd[0] == "scontrol":
            n = int(cmd[-1])
            states, code, on_end = self.jobs[n - 1]
            i = self.queries.get(n, 0)
            self.queries[n] = i + 1
            state = states[min(i, len(states) - 1)]
            if i == len(states) - 1 and on_end is not None:
                on_end(self.run_dir)  # type: ignore[operator]
            return subprocess.CompletedProcess(cmd, 0, f"JobId={n} JobState={state} Reason=None ExitCode={code}", "")
        return subprocess.CompletedProcess(cmd, 1, "", "not scripted")


def _setup(tmp_path: Path, monkeypatch, jobs, max_resubmits: int = 3):
    import pretrain.slurm

    run = tmp_path / "abc.partial"
    run.mkdir()
    p = PretrainParams(launcher="slurm", num_processes=2, threads=1,
                       slurm={"poll_s": 0.01, "max_resubmits": max_resubmits})
    cfg = _cfg(p, run)
    (run / "train_config.json").write_text(cfg.model_dump_json())
    fake = ScriptedSlurm(run, jobs)
    monkeypatch.setattr(pretrain.slurm, "_slurm", fake)
    steps = iter(range(0, 1000, 3))  # each submission finds a newer checkpoint than the last
    monkeypatch.setattr(pretrain.slurm, "_newest_step", lambda run_dir: next(steps))
    return run, cfg, p.slurm, fake


def _summary(run: Path) -> None:
    (run / "summary.json").write_text('{"steps": 6}')


def _preempted(run: Path) -> None:
    (run / "preempted.json").write_text('{"message": "preempted"}')


def test_a_preempted_job_is_resubmitted_and_a_failed_one_names_its_output(tmp_path, monkeypatch, capsys):
    from pretrain.slurm import SlurmError, run_on_slurm

    run, cfg, slurm, fake = _setup(tmp_path, monkeypatch, [
        (["PENDING", "RUNNING", "FAILED"], "1:0", _preempted),  # the ranks checkpointed on USR1 and exited 75
        (["RUNNING", "TIMEOUT"], "0:15", None),
        (["RUNNING", "FAILED"], "1:0", lambda r: (r / "slurm-3.out").write_text("Traceback\nValueError: boom\n")),
        (["COMPLETED"], "0:0", _summary)])
    with pytest.raises(SlurmError) as e:
        run_on_slurm(cfg, run / "train_config.json", slurm)
    assert str(e.value).startswith(f"Slurm job 3 ended FAILED (exit 1:0); its output {run}/slurm-3.out:\n"
                                   "  | Traceback\n  | ValueError: boom\nrerun to submit it again")
    printed = capsys.readouterr().out
    assert "Slurm job 1 stopped (FAILED) at checkpoint step 3; submitting again" in printed
    assert "Slurm job 2 stopped (TIMEOUT) at checkpoint step 6; submitting again" in printed
    assert not (run / "preempted.json").exists(), "a new job's marker is its own"
    # the next call (the rerun) submits again, from the newest checkpoint, and takes the finished job
    assert run_on_slurm(cfg, run / "train_config.json", slurm) == {"steps": 6}
    job = json.loads((run / JOB_FILE).read_text())
    assert (job["job_id"], job["earlier_jobs"], fake.submitted) == ("4", ["1", "2", "3"], 4)
    # and the one after it adopts the finished folder without asking for another job
    assert run_on_slurm(cfg, run / "train_config.json", slurm) == {"steps": 6} and fake.submitted == 4


def test_preemptions_without_progress_stop_and_another_config_is_not_attached_to(tmp_path, monkeypatch):
    import pretrain.slurm
    from pretrain.slurm import SlurmError, refuse_active_job, run_on_slurm

    run, cfg, slurm, fake = _setup(tmp_path, monkeypatch, [(["PREEMPTED"], "0:0", None)] * 3, max_resubmits=1)
    monkeypatch.setattr(pretrain.slurm, "_newest_step", lambda run_dir: 3)  # no new checkpoint
    with pytest.raises(SlurmError, match="Slurm job 2 ended PREEMPTED"):
        run_on_slurm(cfg, run / "train_config.json", slurm)
    assert fake.submitted == 2
    fake.jobs[1] = (["RUNNING"], "0:0", None)  # job 2 as if running (requeued)
    (run / "train_config.json").write_text(cfg.model_copy(update={"lr": 0.5}).model_dump_json())
    with pytest.raises(SlurmError, match=r"Slurm job 2 in .*abc.partial \(RUNNING\) was submitted for another "
                                         r"train_config.json .*scancel 2"):
        run_on_slurm(cfg, run / "train_config.json", slurm)
    # nor does a local run start beside it (a recipe switched back to launcher: local)
    with pytest.raises(SlurmError, match=r"Slurm job 2 is still training in .*abc.partial \(RUNNING\): rerun "
                                         r"with launcher: slurm to wait for it, or scancel 2 first"):
        refuse_active_job(run)
