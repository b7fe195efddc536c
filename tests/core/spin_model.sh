#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# spin_model.sh MODEL WORKDIR EXPECT [spin -D flags...] - check the sleep protocol's
# Promela model (core/sleep/sleep.pml) with spin: generate the verifier (spin -a),
# compile it with gcc, run it. EXPECT is "holds" (no error may be found) or "violated"
# (a counterexample must be found: the variant with a known bug put back). Prints
# spin's summary, and the counterexample's trail when one is found.
set -euo pipefail
model=$1
work=$2
expect=$3
shift 3
command -v spin > /dev/null || { echo "spin_model: spin is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
mkdir -p "$work"
cd "$work"
cp "$model" sleep.pml
spin "$@" -a sleep.pml > spin.log 2>&1 || { cat spin.log >&2; exit 1; }
# -O0: pan.c takes 5-10x longer to compile optimised than the search takes unoptimised.
gcc -O0 -DSAFETY -o pan pan.c
# -E: stuck states are judged by the model's own assertion (its monitor process), not
# as invalid end states; -m: search depth (the model's runs are under 1,000 steps).
./pan -E -m100000 > pan.log 2>&1 || true
grep -E "errors:|states, stored|depth reached|assertion violated" pan.log || true
if grep -q "max search depth too small" pan.log; then
  echo "spin_model: the search was truncated (raise -m)" >&2
  exit 1
fi
errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | head -1)
[ -n "$errors" ] || { cat pan.log >&2; echo "spin_model: no result from pan" >&2; exit 1; }
if [ "$expect" = holds ]; then
  if [ "$errors" != 0 ]; then
    echo "spin_model: the property is violated; counterexample:" >&2
    spin -t -p "$@" sleep.pml | tail -60 >&2
    exit 1
  fi
  echo "spin_model: no interleaving leaves work queued while every worker is asleep ($*)"
else
  if [ "$errors" = 0 ]; then
    echo "spin_model: expected a counterexample for this variant ($*), spin found none" >&2
    exit 1
  fi
  echo "spin_model: counterexample found, as expected for this variant ($*):"
  spin -t -p "$@" sleep.pml | grep -E "^ *[0-9]+:" | tail -25
fi
