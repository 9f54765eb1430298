#!/usr/bin/env bash
# The main job: builds opgrad (Release) and runs `opgrad check` over every registered operator
# (forward and backward, every dtype and layout, against float64 and finite differences), after
# the aclnn MishBackward example and `opgrad selfcheck` (every ISA). Extra arguments go to
# `opgrad check`, e.g. scripts/run.sh --op mish --mode full --json out.json
# Installs the build tools it needs on Debian 12 when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
for pkg in cmake ninja-build gcc g++; do dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg"); done
if [ ${#need[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build >/dev/null
./build/bin/opgrad info
echo
./build/examples/example_mish_backward
echo
./build/bin/opgrad selfcheck
echo
./build/bin/opgrad check "$@"
echo
# the custom-operator example (examples/custom): every stage of the custom checker
./build/bin/opgrad check --custom "$(pwd)/build/examples/custom/fused_add_scale.json" | tail -2
