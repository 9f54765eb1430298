#!/usr/bin/env bash
# The cross-framework consistency table with JAX beside PyTorch, one command:
#     tests/python/jax.sh
# Makes (if missing) a venv and pip-installs jax[cpu] (default 0.10.2) and numpy into it, then
# runs tests/python/consistency.py with Debian's PyTorch 1.13 (/usr/bin/python3) and --jax: the
# same quantized inputs go to opgrad, PyTorch and (tests/python/jax_side.py, in the venv) JAX,
# each measured against the float64 truth; the table goes to <build-test>/consistency_jax.md.
# Environment: OPGRAD_JAX_VENV (default <repo>/build-test/jaxvenv), OPGRAD_JAX_VERSION (default
# 0.10.2), OPGRAD_LIBRARY (a built libopgrad.so; default: build one in OPGRAD_JAX_BUILD, default
# <repo>/build-test/jax), OPGRAD_JAX_OUT (the table; default <repo>/build-test/consistency_jax.md).
# Exit status: 0 passed, 1 a check failed, 3 JAX could not be installed or run here (reason above).
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${OPGRAD_JAX_VENV:-$repo/build-test/jaxvenv}"
version="${OPGRAD_JAX_VERSION:-0.10.2}"
out="${OPGRAD_JAX_OUT:-$repo/build-test/consistency_jax.md}"

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import jax" 2>/dev/null; then
    t0=$(date +%s)
    python3 -m venv "$venv" || { echo "[jax] cannot make a venv at $venv"; exit 3; }
    "$venv/bin/pip" install -q "jax[cpu]==$version" numpy \
        || { echo "[jax] pip install jax[cpu]==$version failed"; exit 3; }
    echo "[jax] installed jax $version in $(( $(date +%s) - t0 )) s"
fi
# jaxlib needs a CPU it was built for (AVX): a JAX that installs but cannot run is a skip too
"$venv/bin/python" -c "import jax.numpy as jnp; jnp.ones(2).block_until_ready()" \
    || { echo "[jax] jax is installed but cannot run on this machine"; exit 3; }

if [ -z "${OPGRAD_LIBRARY:-}" ]; then
    build="${OPGRAD_JAX_BUILD:-$repo/build-test/jax}"
    cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAD_BUILD_TESTS=OFF \
        -DOPGRAD_BUILD_BENCH=OFF >/dev/null || exit 1
    ninja -C "$build" opgrad >/dev/null || exit 1
    OPGRAD_LIBRARY="$build/libopgrad.so"
fi
export OPGRAD_LIBRARY PYTHONPATH="$repo/python"
mkdir -p "$(dirname "$out")"
cd "$repo"
# the full table goes to $out; the log keeps the summary and what follows it (failures, notes)
/usr/bin/python3 tests/python/consistency.py --jax "$venv/bin/python" --out "$out" > "$out.log"
rc=$?
sed -n '/^$/,$p' "$out.log"
[ "$rc" = 0 ] || { echo "[jax] FAILED (exit $rc; table in $out, log in $out.log)"; exit 1; }
echo "[jax] PASSED (table in $out)"
