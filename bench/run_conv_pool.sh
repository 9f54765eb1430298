#!/usr/bin/env bash
# Convolution and pooling (issue 13) against PyTorch 1.13
# (/usr/bin/python3) and, when the venv exists, PyTorch 2.x, in one run; each script's output goes
# to bench/results/<stamp>-<script>-<torch>.txt.
#     bench/run_conv_pool.sh [BUILD_DIR] [--quick]
# Environment: OPGRAD_TORCH2_PY (default build-test/torch2venv/bin/python; skipped if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
stamp=$(date +%Y%m%d-%H%M%S)
py2=${OPGRAD_TORCH2_PY:-build-test/torch2venv/bin/python}
export OPGRAD_LIBRARY="$PWD/$build/libopgrad.so" PYTHONPATH="$PWD/python"
mkdir -p bench/results
for b in bench_conv bench_pool; do
    for py in /usr/bin/python3 "$py2"; do
        [ -x "$py" ] || continue
        tag=$("$py" -c "import torch; print('torch' + torch.__version__.split('+')[0])")
        out="bench/results/$stamp-$b-$tag.txt"
        echo "== $b ($tag) -> $out"
        "$py" "bench/$b.py" "$@" 2>&1 | tee "$out"
    done
done
