#!/usr/bin/env bash
# The HTML report of `opgrad check --html` in a real browser (docs/check-report.md), one command:
#
#     tests/html/run.sh
#
# 1. installs Debian's chromium when it is missing (apt-get, as root);
# 2. builds opgrad, verify_html and test_html_report (cmake + ninja) unless OPGRAD_HTML_BUILD
#    already has them;
# 3. writes two reports: `opgrad check` over a few operators (mish, relu, add, softmax, float32
#    and bfloat16), and test_html_report's report with a planted failure (mish with the sign of
#    its gradient wrong), a mistrusted, a skipped and a synthetic case; verify_html checks both;
# 4. loads each in headless chromium: the page must log no console message (no error, no
#    uncaught exception) and its script must finish (the title becomes "opgrad report: N cases
#    rendered", checked with --dump-dom, N the report's case count); the failures must be drawn
#    with their own plots;
# 5. takes a screenshot of the opgrad check report (1400x1000) into
#    build/ci-artifacts/check-report.png (and of the planted one into check-report-failures.png)
#    and checks each is a PNG of that size with more than a blank page's worth of bytes.
#
# Environment (all optional):
#   OPGRAD_HTML_BUILD   the build directory   default <repo>/build (built there if needed)
#   OPGRAD_HTML_OUT     reports and logs      default <repo>/build/ci-artifacts
#   OPGRAD_HTML_JOBS    build parallelism     default: the number of CPUs
#
# Exit status: 0 every check passed; 1 a real failure; 3 chromium is not installable here (the
# reason is printed; CI skips the stage).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${OPGRAD_HTML_BUILD:-$repo/build}"
out="${OPGRAD_HTML_OUT:-$repo/build/ci-artifacts}"
jobs="${OPGRAD_HTML_JOBS:-$(nproc 2>/dev/null || echo 2)}"

fail() { echo "tests/html: FAILED: $*"; exit 1; }

# ---- 1. chromium
browser=""
for b in chromium chromium-browser; do
    command -v "$b" >/dev/null 2>&1 && browser="$b" && break
done
if [ -z "$browser" ]; then
    echo "== installing chromium (apt-get)"
    if ! { export DEBIAN_FRONTEND=noninteractive; apt-get update -qq &&
           apt-get install -y -qq --no-install-recommends chromium; } >"${TMPDIR:-/tmp}/opgrad-chromium-install.log" 2>&1; then
        tail -n 20 "${TMPDIR:-/tmp}/opgrad-chromium-install.log"
        echo "tests/html: SKIPPED: chromium is not installable here (apt-get install chromium failed, above)"
        exit 3
    fi
    command -v chromium >/dev/null 2>&1 && browser=chromium
    if [ -z "$browser" ]; then
        echo "tests/html: SKIPPED: chromium installed but no chromium command on PATH"
        exit 3
    fi
fi
echo "browser: $("$browser" --version 2>/dev/null | head -1)"

# ---- 2. build
if [ ! -x "$build/bin/opgrad" ] || [ ! -x "$build/tests/verify_html" ] ||
   [ ! -x "$build/tests/test_html_report" ]; then
    echo "== building opgrad, verify_html, test_html_report in $build"
    cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null ||
        fail "cmake configure"
    ninja -C "$build" -j "$jobs" opgrad_cli verify_html test_html_report >/dev/null ||
        fail "build"
fi

# ---- 3. the reports
mkdir -p "$out" || fail "cannot create $out"
report="$out/check-report.html"
planted="$out/check-report-failures.html"
"$build/bin/opgrad" check --op mish relu add softmax --dtype float32,bfloat16 --seed 1 \
    --html "$report" --json "$out/check-report.json" >"$out/check-report.txt"
rc=$?
[ $rc -eq 0 ] || { tail -n 30 "$out/check-report.txt"; fail "opgrad check exited $rc"; }
"$build/tests/verify_html" "$report" --json "$out/check-report.json" --min-plots 8 --failures 0 ||
    fail "verify_html $report"
"$build/tests/test_html_report" "$planted" >"$out/test_html_report.txt" 2>&1 ||
    { cat "$out/test_html_report.txt"; fail "test_html_report"; }
"$build/tests/verify_html" "$planted" --failures 4 || fail "verify_html $planted"

# ---- 4. load each page; 5. screenshots
profile="$(mktemp -d "${TMPDIR:-/tmp}/opgrad-chromium.XXXXXX")"
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run
       --user-data-dir="$profile" --enable-logging=stderr --v=0)

# check_page HTML CASES PNG
check_page() {
    local html=$1 cases=$2 png=$3 name dom log
    name=$(basename "$html" .html)
    dom="$out/$name.dom.html"
    log="$out/$name.chromium.log"
    timeout 120 "$browser" "${flags[@]}" --virtual-time-budget=5000 --dump-dom \
        "file://$html" >"$dom" 2>"$log" || { tail -n 20 "$log"; fail "chromium --dump-dom $name"; }
    # console messages (console.log/error, uncaught exceptions) are logged as CONSOLE lines
    if grep -E 'CONSOLE|Uncaught|SyntaxError|TypeError|ReferenceError' "$log"; then
        fail "$name: the page logged the console messages above"
    fi
    local want="<title>opgrad report: $cases cases rendered</title>"
    grep -qF "$want" "$dom" || {
        grep -o '<title>[^<]*</title>' "$dom" | head -1
        fail "$name: the page's script did not finish (want $want)"
    }
    local rows
    rows=$(grep -o '<tr class="row s-[A-Z]' "$dom" | wc -l)
    [ "$rows" -gt 0 ] || fail "$name: no table rows drawn"
    local svgs
    svgs=$(grep -o '<svg class="plot" width="[0-9]' "$dom" | wc -l)
    [ "$svgs" -gt 0 ] || fail "$name: no plots drawn"
    echo "$name: $cases cases, $rows table rows drawn (first page), $svgs SVG plots drawn," \
        "no console messages"
    rm -f "$png"
    timeout 120 "$browser" "${flags[@]}" --virtual-time-budget=5000 --screenshot="$png" \
        --window-size=1400,1000 "file://$html" >>"$log" 2>&1 || fail "chromium --screenshot $name"
    [ -f "$png" ] || fail "$name: no screenshot"
    # a PNG of 1400x1000: the signature, then IHDR's width and height (big-endian)
    local sig size w h
    sig=$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')
    [ "$sig" = "89504e470d0a1a0a" ] || fail "$png is not a PNG"
    w=$(od -An -tu1 -j16 -N4 "$png" | awk '{print $1*16777216+$2*65536+$3*256+$4}')
    h=$(od -An -tu1 -j20 -N4 "$png" | awk '{print $1*16777216+$2*65536+$3*256+$4}')
    [ "$w" = 1400 ] && [ "$h" = 1000 ] || fail "$png is ${w}x$h, not 1400x1000"
    # a blank or nearly blank page compresses to a few KB; a drawn table does not
    size=$(wc -c <"$png")
    [ "$size" -gt 40000 ] || fail "$png is only $size bytes: the page looks empty"
    echo "$name: screenshot $png (${w}x$h, $size bytes)"
}

cases=$(grep -c '^  {' "$out/check-report.json")
skipped=$(grep -oE '[0-9]+ skipped' "$out/check-report.txt" | tail -1 | cut -d' ' -f1)
check_page "$report" $((cases + ${skipped:-0})) "$out/check-report.png"
check_page "$planted" 8 "$out/check-report-failures.png"
grep -q '<div class="caseplots" data-row="[0-9]*"><div class="plotrow">' \
    "$out/check-report-failures.dom.html" || fail "the failures' own plots were not drawn"
echo "tests/html: all checks passed ($(wc -c <"$report") bytes for $cases cases)"
