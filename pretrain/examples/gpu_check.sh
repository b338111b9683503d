#!/usr/bin/env bash
# The prepared GPU check (pretrain/examples/gpu_check.py): one command for a lent GPU machine, under 10 minutes
# on one H200. Run from the repository root:
#   bash pretrain/examples/gpu_check.sh [OUT]          # default OUT: gpu-check (or $OUT when set, e.g. the device tool's)
#   bash pretrain/examples/gpu_check.sh OUT --toy      # the same pieces at toy size on CPU
# A GPU image without this project's dependencies: carry them as wheels in .whl/ (see the device tool's README:
# pydantic, deepspeed, click, rich, zstandard, ...); they are installed into /tmp/site first, no index needed.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${1:-${OUT:-gpu-check}}"
shift || true
mkdir -p "$out"
if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
command -v nvidia-smi > /dev/null && nvidia-smi > "$out/nvidia-smi.txt" 2>&1
python3 pretrain/examples/gpu_check.py --out "$out" "$@" 2>&1 | tee "$out/log.txt"
exit "${PIPESTATUS[0]}"
