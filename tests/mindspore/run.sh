#!/usr/bin/env bash
# MindSpore integration test, one command:
#
#     tests/mindspore/run.sh
#
# 1. makes (if missing) a virtual environment with `python3` (3.9-3.12: MindSpore 2.10.0's
#    Requires-Python is >=3.9,<3.13; PyPI has its Linux x86_64 wheels for 3.10, 3.11 and 3.12) and
#    pip-installs MindSpore (CPU; the PyPI wheel, about 1 GB, 2.8 GB installed) and numpy<2 into it;
# 2. builds libopgrad.so and examples/custom/libfused_add_scale.so with cmake + ninja;
# 3. runs tests/mindspore/test_mindspore.py with the venv's python (see its docstring).
#
# Environment (all optional):
#   OPGRAD_MS_VENV      the venv               default <repo>/build-test/msvenv (reused if present)
#   OPGRAD_MS_BUILD     the build directory    default <repo>/build-test/ms
#                       (when the checkout is not writable: ${TMPDIR:-/tmp}/opgrad-ms-<uid>/msvenv
#                       and .../ms, so the test runs from a read-only tree)
#   OPGRAD_MS_VERSION   MindSpore version      default 2.10.0 (pinned)
#   OPGRAD_MS_NUMPY     NumPy requirement      default "numpy<2" (the 2.10.0 wheels are built
#                       against NumPy 1.x; with NumPy 2 PYNATIVE_MODE's first Tensor op raises);
#                       set it empty to leave NumPy to pip
#   OPGRAD_MS_PYTHON    interpreter for the venv   default python3
#   OPGRAD_MS_JOBS      build parallelism      default: the number of CPUs
#   MS_CUSTOM_AOT_WHITE_LIST   MindSpore's aot security whitelist: when unset it is set to the
#                       build directory, so the test runs the way a locked-down deployment would
#   Extra arguments are passed to test_mindspore.py (e.g. --steps 20).
#
# Exit status, so that CI can tell "MindSpore unavailable" from a real failure:
#   0  every check passed
#   1  a check failed (a real failure)
#   2  setup error: no suitable python3, venv creation, cmake/ninja/compiler or build failure
#   3  MindSpore unavailable: `pip install mindspore==VERSION` failed (its error is printed)
#   4  MindSpore unavailable: installed but `import mindspore` fails here (its error is printed)
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# A read-only checkout (a mounted source tree, a CI cache) keeps the venv and the build outside
# the tree by default, under ${TMPDIR:-/tmp}/opgrad-ms-<uid>.
if [ -w "$repo" ] && { [ ! -e "$repo/build-test" ] || [ -w "$repo/build-test" ]; }; then
    out_default="$repo/build-test"
else
    out_default="${TMPDIR:-/tmp}/opgrad-ms-$(id -u)"
fi
venv="${OPGRAD_MS_VENV:-$out_default/msvenv}"
build="${OPGRAD_MS_BUILD:-$out_default/ms}"
version="${OPGRAD_MS_VERSION:-2.10.0}"
numpy_req="${OPGRAD_MS_NUMPY-numpy<2}"
python="${OPGRAD_MS_PYTHON:-python3}"
jobs="${OPGRAD_MS_JOBS:-$(nproc 2>/dev/null || echo 2)}"

say() { printf '[mindspore-test] %s\n' "$*"; }
die() { local code="$1"; shift; printf '[mindspore-test] ERROR: %s\n' "$*" >&2; exit "$code"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

t_start="$(now)"

# ---- 1. the venv and MindSpore ---------------------------------------------------------------
pyver_ok() { # $1 = interpreter; prints its version, fails unless 3.9 <= version < 3.13
    "$1" -c 'import sys; v = sys.version_info; print("%d.%d.%d" % v[:3]);
sys.exit(0 if (3, 9) <= v[:2] <= (3, 12) else 1)' 2>/dev/null
}

if [ ! -x "$venv/bin/python" ]; then
    command -v "$python" >/dev/null 2>&1 ||
        die 2 "no '$python' on PATH: install Python 3.9-3.12 or set OPGRAD_MS_PYTHON"
    if ! v="$(pyver_ok "$python")"; then
        die 2 "'$python' is Python ${v:-?}; MindSpore $version needs Python 3.9-3.12 (its wheels:" \
              "3.10-3.12 on Linux x86_64). Set OPGRAD_MS_PYTHON, e.g. OPGRAD_MS_PYTHON=python3.11"
    fi
    say "creating venv $venv with $python ($v)"
    mkdir -p "$(dirname "$venv")"
    "$python" -m venv "$venv" ||
        die 2 "'$python -m venv $venv' failed (on Debian/Ubuntu: apt-get install python3-venv)"
else
    v="$(pyver_ok "$venv/bin/python")" ||
        die 2 "the venv $venv has Python ${v:-?}; MindSpore needs 3.9-3.12:" \
              "remove it or set OPGRAD_MS_VENV"
    say "reusing venv $venv (Python $v)"
fi

mkdir -p "$build"
pip_log="$build/pip-install.log"
reqs=("mindspore==$version")
[ -n "$numpy_req" ] && reqs+=("$numpy_req")
say "pip install ${reqs[*]} (log: $pip_log)"
t_pip="$(now)"
"$venv/bin/python" -m pip install --progress-bar off "${reqs[@]}" >"$pip_log" 2>&1
pip_rc=$?
say "install step: $(since "$t_pip") s (pip exit $pip_rc)"
if [ "$pip_rc" -ne 0 ]; then
    printf '[mindspore-test] MindSpore unavailable: pip install %s failed (exit %d). The error:\n' \
        "${reqs[*]}" "$pip_rc" >&2
    tail -n 25 "$pip_log" >&2
    exit 3
fi
grep -E '^(Successfully installed|Requirement already satisfied: (mindspore|numpy))' "$pip_log" |
    sed 's/^/[mindspore-test]   /'

t_imp="$(now)"
probe='import mindspore, numpy; print(mindspore.__version__, numpy.__version__)'
if ! ms_info="$("$venv/bin/python" -c "$probe" 2>&1)"; then
    printf '[mindspore-test] MindSpore unavailable: import mindspore failed. The error:\n%s\n' \
        "$(printf '%s\n' "$ms_info" | tail -n 25)" >&2
    exit 4
fi
ms_info="$(printf '%s\n' "$ms_info" | tail -n 1)"
say "import mindspore: $(since "$t_imp") s; MindSpore ${ms_info% *}, NumPy ${ms_info#* }"

# ---- 2. the libraries ------------------------------------------------------------------------
command -v cmake >/dev/null 2>&1 || die 2 "cmake not found"
gen=()
if command -v ninja >/dev/null 2>&1; then
    [ -f "$build/CMakeCache.txt" ] || gen=(-G Ninja)
else
    say "ninja not found: using CMake's default generator"
fi
t_build="$(now)"
cmake -S "$repo" -B "$build" ${gen[@]+"${gen[@]}"} -DCMAKE_BUILD_TYPE=Release \
    -DOPGRAD_BUILD_TESTS=OFF -DOPGRAD_BUILD_BENCH=OFF -DOPGRAD_BUILD_EXAMPLES=ON \
    >"$build/cmake-configure.log" 2>&1 ||
    { tail -n 30 "$build/cmake-configure.log" >&2
      die 2 "cmake configure failed (log: $build/cmake-configure.log)"; }
cmake --build "$build" --target opgrad fused_add_scale opgrad_cli -j "$jobs" \
    >"$build/cmake-build.log" 2>&1 ||
    { tail -n 40 "$build/cmake-build.log" >&2
      die 2 "build of opgrad, fused_add_scale and opgrad_cli failed (log: $build/cmake-build.log)"; }
build_abs="$(cd "$build" && pwd -P)"
fused_lib="$build_abs/examples/custom/libfused_add_scale.so"
opgrad_lib="$build_abs/libopgrad.so"
opgrad_cli="$build_abs/bin/opgrad"
# part G's deliberately broken kernel (tests/mindspore/bias_add.c): a test fixture, not a target
bias_lib="$build_abs/libbias_add.so"
cc="$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")"
"${cc:-cc}" -O2 -shared -fPIC -Wall -Wextra -Werror -I"$repo/include" "$here/bias_add.c" \
    -o "$bias_lib" || die 2 "could not build $bias_lib"
for f in "$fused_lib" "$opgrad_lib" "$opgrad_cli"; do
    [ -f "$f" ] || die 2 "the build did not produce $f"
done
say "build: $(since "$t_build") s -> $opgrad_lib, $fused_lib, $bias_lib, $opgrad_cli"

# ---- 3. the test -----------------------------------------------------------------------------
export MS_CUSTOM_AOT_WHITE_LIST="${MS_CUSTOM_AOT_WHITE_LIST:-$build_abs}"
export GLOG_v="${GLOG_v:-3}" # MindSpore's log: errors only (its INFO/WARNING lines are noise here)
say "running test_mindspore.py (cwd $build_abs, MS_CUSTOM_AOT_WHITE_LIST=$MS_CUSTOM_AOT_WHITE_LIST)"
t_test="$(now)"
# From the build directory: MindSpore writes rank_0/, analyze_fail.ir etc. into the cwd.
(cd "$build_abs" && PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" "$here/test_mindspore.py" \
    --fused-lib "$fused_lib" --opgrad-lib "$opgrad_lib" --bias-add-lib "$bias_lib" \
    --opgrad-cli "$opgrad_cli" --workdir "$build_abs" "$@")
rc=$?
say "test: $(since "$t_test") s, exit $rc; total $(since "$t_start") s"
case "$rc" in
0) say "PASSED" ;;
4) say "MindSpore unavailable (import failed inside the test)" ;;
*) say "FAILED (exit $rc)"; [ "$rc" -eq 2 ] || rc=1 ;;
esac
exit "$rc"
