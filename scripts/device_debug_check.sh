#!/usr/bin/env bash
# Debug mode on the GPU machine, from the repository root, with the lark wheel in .whl/
# (as for scripts/device_check.sh):
#
#     bash scripts/device_debug_check.sh [tests|e2e|e2e-async|demo|bench]...   (default: all)
#
# tests: tests/gpu/test_debug_mode.py; e2e: every GPU test of tests/e2e with
# MINITRITON_DEBUG=1 (every launch in debug mode); e2e-async: the same with
# MINITRITON_DEBUG=async (reports deferred); demo: scripts/debug_demo.py and
# `exercises check 2 --gpu` on the untouched skeleton; bench: benchmarks/gpu_debug_cost.py.
# Logs go to $OUT (default /tmp/device_debug_check).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO="$(pwd)"
OUT="${OUT:-/tmp/device_debug_check}"
SITE=/tmp/site
mkdir -p "$OUT" "$SITE"
export PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 MINITRITON_CACHE_DIR=/tmp/minitriton-cache
python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" .whl/*.whl >/dev/null 2>&1
rm -rf "$SITE/minitriton"
cp -r minitriton "$SITE/minitriton"
cp -r emulator "$SITE/minitriton/emulator"
cp -r grammar "$SITE/minitriton/grammar"
export PYTHONPATH="$SITE:$REPO"
cd /tmp
# Every GPU test of tests/e2e with MINITRITON_DEBUG=$1, logged to $OUT/$2.log.
e2e_suite() {
    MINITRITON_DEBUG="$1" timeout 290 python3 -m pytest -c "$REPO/pyproject.toml" \
        --rootdir="$REPO" -p no:cacheprovider -q -m gpu "$REPO/tests/e2e" 2>&1 | tee "$OUT/$2.log"
    return "${PIPESTATUS[0]}"  # pytest's status, not tee's
}
STEPS=("$@")
[[ ${#STEPS[@]} -eq 0 ]] && STEPS=(tests e2e e2e-async demo bench)
RC=0
for step in "${STEPS[@]}"; do
    case "$step" in
    tests) timeout 120 python3 -m pytest -c "$REPO/pyproject.toml" --rootdir="$REPO" \
        -p no:cacheprovider -q -rA "$REPO/tests/gpu/test_debug_mode.py" 2>&1 | tee "$OUT/tests.log" ;;
    e2e) e2e_suite 1 e2e ;;
    e2e-async) e2e_suite async e2e_async ;;
    demo) timeout 60 python3 "$REPO/scripts/debug_demo.py" 2>&1 | tee "$OUT/demo.log"
        MINITRITON_DEBUG=async timeout 60 python3 "$REPO/scripts/debug_demo.py" 2>&1 \
            | tee "$OUT/demo_async.log"
        W=$(mktemp -d); export MINITRITON_COURSE="$REPO/exercises"
        python3 -m minitriton exercises start 2 --workspace "$W" >/dev/null 2>&1
        timeout 120 python3 -m minitriton exercises check 2 --gpu --workspace "$W" 2>&1 \
            | tee "$OUT/exercise.log"; true ;;
    bench) timeout 150 python3 "$REPO/benchmarks/gpu_debug_cost.py" --json "$OUT/debug_cost.json" \
        2>&1 | tee "$OUT/bench.log" ;;
    esac
    RC=$((RC | PIPESTATUS[0]))
done
exit $RC
