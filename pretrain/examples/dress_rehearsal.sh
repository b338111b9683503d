#!/usr/bin/env bash
# KLUE-base dress rehearsal on the CPU (pretrain/examples/dress_rehearsal.py; options: --help). From anywhere:
cd "$(dirname "$0")/../.." && exec env PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false python3 pretrain/examples/dress_rehearsal.py "$@"
