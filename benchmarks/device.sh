#!/usr/bin/env bash
# benchmarks/device.py on the lent GPU machine (../shared/gpu.md), from what travels in .gpu/:
#   .gpu/whl      wheels the machine lacks (transformers==5.24.0 nlpaug gdown beautifulsoup4 soupsieve)
#   .gpu/data     a copy of $LRD_HOME/data without hellaswag, trivia_qa and boolq
#   .gpu/tok      minilm/ and smollm2/ tokenizer files;  .gpu/configs  <key>/config.json of the panel
#   .gpu/whl also: pytest, pluggy, iniconfig (for `tests`)
# Usage (the device tool's command, with carry [".gpu"]):
#   bash benchmarks/device.sh [device.py arguments...]     e.g. --parts units,extract,sweep
#   bash benchmarks/device.sh tests                        the tests that run only where CUDA is
# Logs and CSV tables go to $OUT (or ./device-out).
set -euo pipefail
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT" /tmp/lrd-home
python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu/whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LRD_HOME=/tmp/lrd-home TOKENIZERS_PARALLELISM=true
ln -sfn "$PWD/.gpu/data" /tmp/lrd-home/data
if [ "${1:-}" = "tests" ]; then  # pinned host copies, GPU training: skipped on a CPU machine
    python3 -m pytest -q -p no:cacheprovider -o addopts= tests/test_pipeline.py tests/test_aggregation.py 2>&1 | tee -a "$OUT/tests.log"
    exit "${PIPESTATUS[0]}"
fi
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader || true
python3 benchmarks/device.py --configs .gpu/configs --tokenizers .gpu/tok --out "$OUT" "$@" 2>&1 | tee -a "$OUT/device.log"
