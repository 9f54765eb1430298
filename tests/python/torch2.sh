#!/usr/bin/env bash
# opgrad.torch on PyTorch >= 2.4 (the torch.library.custom_op / register_autograd / register_fake
# path), one command:
#     tests/python/torch2.sh
# Makes (if missing) a venv with `python3` and pip-installs torch (default 2.5.1) and numpy, builds
# libopgrad.so and the custom-op example, then runs the adapter tests, torch.library.opcheck on
# every operator and the cross-framework consistency table against that PyTorch; last, builds the
# wheel (pip wheel .), installs it into the venv and runs the adapter tests against it.
# Environment: OPGRAD_TORCH2_VENV (default <repo>/build-test/torch2venv), OPGRAD_TORCH2_BUILD
# (default <repo>/build-test/torch2), OPGRAD_TORCH2_VERSION (default 2.5.1).
# Exit status: 0 passed, 1 a check failed, 3 PyTorch could not be installed (pip's error above).
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${OPGRAD_TORCH2_VENV:-$repo/build-test/torch2venv}"
build="${OPGRAD_TORCH2_BUILD:-$repo/build-test/torch2}"
version="${OPGRAD_TORCH2_VERSION:-2.5.1}"

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
    t0=$(date +%s)
    python3 -m venv "$venv" || exit 3
    "$venv/bin/pip" install -q "torch==$version" numpy || { echo "pip install torch==$version failed"; exit 3; }
    echo "[torch2] installed torch $version in $(( $(date +%s) - t0 )) s"
fi
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAD_BUILD_TESTS=OFF \
    -DOPGRAD_BUILD_BENCH=OFF >/dev/null || exit 1
ninja -C "$build" opgrad fused_add_scale >/dev/null || exit 1
export OPGRAD_LIBRARY="$build/libopgrad.so" PYTHONPATH="$repo/python"
cd "$repo"
for t in tests/python/test_torch_*.py; do "$venv/bin/python" "$t" || exit 1; done
"$venv/bin/python" tests/python/opcheck_torch2.py || exit 1
"$venv/bin/python" tests/python/consistency.py --out "$build/consistency.md" | tail -1 || exit 1
# the wheel (pyproject.toml: scikit-build-core builds libopgrad into the package), installed into
# this venv and tested as a user gets it: no OPGRAD_LIBRARY, no PYTHONPATH, run from outside the
# tree; then uninstalled, so that the source-tree runs above stay what they test
"$venv/bin/pip" wheel "$repo" --no-deps -w "$build/wheel" -q || exit 1
wheel=$(ls -t "$build"/wheel/opgrad-*.whl | head -1)
"$venv/bin/pip" install -q --force-reinstall --no-deps "$wheel" || exit 1
(cd "$build" && env -u OPGRAD_LIBRARY -u PYTHONPATH OPGRAD_TEST_INSTALLED=1 \
    OPGRAD_CUSTOM_SPEC="$build/examples/custom/fused_add_scale.json" \
    "$venv/bin/python" "$repo/tests/python/test_torch_adapter.py") || exit 1
"$venv/bin/pip" uninstall -q -y opgrad
echo "[torch2] wheel $(basename "$wheel") built, installed and tested"
echo "[torch2] PASSED"
