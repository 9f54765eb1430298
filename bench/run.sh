#!/bin/sh
# Builds (Release) and runs the Mish benchmarks; saves the outputs under bench/results/.
#
#   bench/run.sh [--quick] [--no-torch] [--torch-avx512] [--ops] [--build-dir DIR] [-- BENCH_MISH_ARGS...]
#
#   --quick         CI smoke test: small sizes, few reps (about 20 s)
#   --no-torch      only the C benchmark (bench_mish)
#   --torch-avx512  also run the PyTorch comparison with ATEN_CPU_CAPABILITY=avx512 (torch's
#                   faster, opt-in kernels; the default run uses what torch picks: AVX2)
#   --ops           also run torch_ops.py: every activation / arithmetic op vs PyTorch (+~5 min)
#   --build-dir DIR build directory (default: <repo>/build-bench)
#   -- ARGS         passed to bench_mish (e.g. -- --sizes 24,26 --dtypes fp32)
#
# Works from a fresh clone on Debian 12: needs cmake and a C compiler; PyTorch comes from the
# python3-torch package (installed with apt-get when missing and running as root). Without torch
# the C benchmark still runs. Run on an otherwise idle machine: both benchmarks record the CPU
# time other processes used during each measurement ("foreign" column) and repeat noisy ones.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD="$ROOT/build-bench"
QUICK=0
TORCH=1
TORCH_AVX512=0
OPS=0
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) QUICK=1 ;;
    --no-torch) TORCH=0 ;;
    --torch-avx512) TORCH_AVX512=1 ;;
    --ops) OPS=1 ;;
    --build-dir) BUILD=$2; shift ;;
    --build-dir=*) BUILD=${1#--build-dir=} ;;
    --) shift; break ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac

# ---- build ----
if [ ! -f "$BUILD/CMakeCache.txt" ] || ! grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$BUILD/CMakeCache.txt"; then
    GEN=""
    if [ ! -f "$BUILD/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then GEN="-G Ninja"; fi
    # shellcheck disable=SC2086
    cmake -S "$ROOT" -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release -DOPGRAD_BUILD_BENCH=ON \
        -DOPGRAD_BUILD_TESTS=OFF -DOPGRAD_BUILD_EXAMPLES=OFF >/dev/null
fi
JOBS=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
cmake --build "$BUILD" --target opgrad bench_mish -j "$JOBS"
BENCH="$BUILD/bench/bench_mish"
LIB="$BUILD/libopgrad.so"

# ---- results ----
RES="$HERE/results"
mkdir -p "$RES"
STAMP=$(date +%Y%m%d-%H%M%S)
[ "$QUICK" = 1 ] && STAMP="$STAMP-quick"
{
    echo "date: $(date -Iseconds)"
    echo "git: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ' (+ uncommitted changes)')"
    echo "kernel: $(uname -srm)"
    echo "loadavg: $(cat /proc/loadavg 2>/dev/null || echo '?')"
    if command -v lscpu >/dev/null 2>&1; then
        lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|L1d|L2|L3|Hypervisor)' || true
    fi
    echo "cc: $(grep '^CMAKE_C_COMPILER:' "$BUILD/CMakeCache.txt" | cut -d= -f2) ($(grep '^CMAKE_BUILD_TYPE:' "$BUILD/CMakeCache.txt" | cut -d= -f2))"
} >"$RES/$STAMP-sysinfo.txt"
cat "$RES/$STAMP-sysinfo.txt"
echo

# Runs a command, copies its output to a file, and returns the command's status (not tee's).
run_tee() {
    out=$1
    shift
    rcf=$(mktemp)
    { rc=0; "$@" || rc=$?; echo "$rc" >"$rcf"; } | tee "$out"
    rc=$(cat "$rcf")
    rm -f "$rcf"
    return "$rc"
}

QARGS=""
[ "$QUICK" = 1 ] && QARGS="--quick"
STATUS=0

# ---- C benchmark ----
echo "== bench_mish (opgrad vs same-process bandwidth probe) =="
# shellcheck disable=SC2086
run_tee "$RES/$STAMP-bench_mish.txt" "$BENCH" $QARGS --csv "$RES/$STAMP-bench_mish.csv" "$@" || STATUS=1
echo

# ---- PyTorch comparison ----
PY=/usr/bin/python3
have_torch() { [ -x "$PY" ] && "$PY" -c 'import torch' >/dev/null 2>&1; }
if [ "$TORCH" = 1 ] && ! have_torch; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing python3-torch (Debian package) ..."
        (apt-get install -y python3-torch >/dev/null 2>&1 ||
            { apt-get update >/dev/null 2>&1 && apt-get install -y python3-torch >/dev/null 2>&1; }) || true
    fi
    have_torch || { echo "PyTorch is not available (/usr/bin/python3 -c 'import torch' fails): skipping the comparison"; TORCH=0; }
fi
if [ "$TORCH" = 1 ]; then
    echo "== torch_mish.py (opgrad vs PyTorch, one process) =="
    # shellcheck disable=SC2086
    run_tee "$RES/$STAMP-torch_mish.txt" "$PY" "$HERE/torch_mish.py" --lib "$LIB" $QARGS \
        --csv "$RES/$STAMP-torch_mish.csv" || STATUS=1
    if [ "$TORCH_AVX512" = 1 ]; then
        echo
        echo "== torch_mish.py with ATEN_CPU_CAPABILITY=avx512 =="
        # shellcheck disable=SC2086
        run_tee "$RES/$STAMP-torch_mish_avx512.txt" env ATEN_CPU_CAPABILITY=avx512 "$PY" \
            "$HERE/torch_mish.py" --lib "$LIB" $QARGS --csv "$RES/$STAMP-torch_mish_avx512.csv" || STATUS=1
    fi
    if [ "$OPS" = 1 ]; then
        echo
        echo "== torch_ops.py (every activation / arithmetic op vs PyTorch, one process) =="
        # shellcheck disable=SC2086
        run_tee "$RES/$STAMP-torch_ops.txt" "$PY" "$HERE/torch_ops.py" --lib "$LIB" $QARGS \
            --csv "$RES/$STAMP-torch_ops.csv" || STATUS=1
    fi
    echo
fi

# ---- summary ----
echo "== summary ($RES/$STAMP-*) =="
# bench_mish rows at n >= 2^24, or at the largest n measured when no such n was run
awk -F, 'FNR == 1 { next } NR == FNR { if ($3 + 0 > max) max = $3 + 0; next }
    ($3 + 0 >= 16777216 || $3 + 0 == max) {
        if (!hdr) { printf "%-9s %-5s %10s %3s %9s %8s %8s\n", "op", "dtype", "n", "thr", "GB/s", "frac", "fracNT"; hdr = 1 }
        printf "%-9s %-5s %10s %3s %9.2f %8.3f %8.3f\n", $1, $2, $3, $4, $11, $14, $15 }' \
    "$RES/$STAMP-bench_mish.csv" "$RES/$STAMP-bench_mish.csv" || true
grep '^# *target\|^#   mish\|FAILED' "$RES/$STAMP-bench_mish.txt" || true
for f in "$RES/$STAMP-torch_mish.txt" "$RES/$STAMP-torch_mish_avx512.txt" "$RES/$STAMP-torch_ops.txt"; do
    [ -f "$f" ] && { echo "$(basename "$f"):"; grep '^# summary\|^# every\|^# [0-9]* comparison' "$f" || true; }
done
exit $STATUS
