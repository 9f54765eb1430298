#!/usr/bin/env bash
# The checker's false-failure rate: the default `opgrad check` (every ISA level, every operator,
# dtype and layout) over seeds FIRST..LAST of correct kernels. Any FAIL or MISTRUSTED row is a
# false failure: it is printed with its reproducer and the script exits 1.
#   scripts/check_seeds.sh [OPGRAD] [FIRST] [LAST]   (default: build/bin/opgrad 1 100)
set -uo pipefail
opgrad=${1:-build/bin/opgrad}
first=${2:-1}
last=${3:-100}
bad=0 cases=0
start=$(date +%s)
for ((seed = first; seed <= last; seed++)); do
    out=$("$opgrad" check --seed "$seed")
    rc=$?
    summary=$(tail -1 <<<"$out")
    cases=$((cases + $(awk '{print $1}' <<<"$summary")))
    if [ $rc -ne 0 ] || grep -q "MISTRUSTED\|FAIL " <<<"$out"; then
        bad=$((bad + 1))
        echo "seed $seed: $summary"
        sed -n '/^Failures and mistrusted cases:/,$p' <<<"$out"
    fi
done
echo "seeds $first..$last: $cases cases passed, $bad seed(s) with a failure or mistrust" \
    "in $(($(date +%s) - start)) s"
[ $bad -eq 0 ]
