"""Helpers shared by the tests, imported one way: `from testkit.X import ...` (pytest puts tests/ on the path,
see `pythonpath` in pyproject.toml; subprocesses get it through PYTHONPATH, see `testkit.toy.subprocess_env`).

collect, curation, pretrain: stage contexts and fixture data built by hand (no runner needed);
toy_stages, toy: a small instrumented stage graph and its recipes, for the runner and CLI tests;
pausing_run: `klue` entry point that the kill -9 tests start; kill: kill -9 a `klue` process group at a
chosen point; pii_cli: `klue pii detect` on a JSON-lines file; tiny_model: a tiny model of each encoder
architecture (ARCHITECTURES) for fine-tuning tests;
finetune: the fixture texts of every fine-tuning task (for a tiny model's vocabulary) and predictions writers.
"""
