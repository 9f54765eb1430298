#!/usr/bin/env bash
# The opgrad.torch benchmarks of one issue's operators against PyTorch 1.13 (/usr/bin/python3)
# and, when the venv exists, PyTorch 2.x, in one run; each script's output goes to
# bench/results/<stamp>-<script>-<torch>.txt.
#     bench/run_torch.sh SET [BUILD_DIR] [--quick ...]    (the rest goes to every script)
# SET: training_ops (issue 14: norms, losses, dropout / embedding, GLUs), conv_pool (issue 13),
#      optim (issue 15: AdamW, SGD, AMP unscale), or a comma-separated list of bench_*.py names.
# Environment: OPGRAD_TORCH2_PY (default build-test/torch2venv/bin/python; skipped if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
set_name=${1:?usage: bench/run_torch.sh SET [BUILD_DIR] [args...]}
build=${2:-build}
shift $(($# < 2 ? $# : 2))
case "$set_name" in
training_ops) scripts="bench_norm bench_batch_norm bench_cross_entropy bench_loss bench_dropout_embedding bench_glu" ;;
conv_pool) scripts="bench_conv bench_pool" ;;
optim) scripts="bench_optim" ;;
*) scripts=${set_name//,/ } ;;
esac
stamp=$(date +%Y%m%d-%H%M%S)
py2=${OPGRAD_TORCH2_PY:-build-test/torch2venv/bin/python}
export OPGRAD_LIBRARY="$PWD/$build/libopgrad.so" PYTHONPATH="$PWD/python"
mkdir -p bench/results
for b in $scripts; do
    for py in /usr/bin/python3 "$py2"; do
        [ -x "$py" ] || continue
        tag=$("$py" -c "import torch; print('torch' + torch.__version__.split('+')[0])")
        out="bench/results/$stamp-$b-$tag.txt"
        echo "== $b ($tag) -> $out"
        "$py" "bench/$b.py" "$@" 2>&1 | tee "$out"
    done
done
