#!/usr/bin/env bash
# The one command the team runs on the GPU machine, from the repository root:
#
#     bash scripts/device_check.sh            # with the lark wheel carried in .whl/
#     bash scripts/device_check.sh --tests    # (a) and (c) only, no benchmark
#     bash scripts/device_check.sh --bench    # (b) only, no tests
#     NPROC=4 bash scripts/device_check.sh    # the tests in 4 pytest-xdist workers
#
# It installs lark (from .whl/, no network) and MiniTriton itself into
# /tmp/site, then
#   (a) runs every GPU-marked test (tests/gpu, tests/e2e and the other test
#       files that use the `gpu` marker) with `pytest -m gpu -rA`,
#   (b) runs benchmarks/gpu_bench.py (table on stdout, JSON into $OUT),
#   (c) prints the pass/fail counts.
# Logs and the JUnit XML go to $OUT (default /tmp/device_check). The exit
# status is non-zero if a test failed or a benchmark floor was missed.
# About 4 minutes on one H200; every step has a time limit.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO="$(pwd)"
OUT="${OUT:-/tmp/device_check}"
SITE=/tmp/site
mkdir -p "$OUT" "$SITE"
export PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
export MINITRITON_CACHE_DIR=/tmp/minitriton-cache
SECONDS=0

banner() { printf '\n==================== %s (t=%ss) ====================\n' "$*" "$SECONDS"; }

banner "install"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 || true
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$SITE" .whl/*.whl || { echo "error: cannot install the wheels in .whl/"; exit 2; }
# MiniTriton: emulator/ and grammar/ are installed as minitriton.emulator and
# minitriton.grammar (pyproject's package-dir), so PYTHONPATH=. is not enough.
# --upgrade: on a machine that ran an older copy, replace it (pip keeps it otherwise).
if ! python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --upgrade \
        --target "$SITE" . >"$OUT/pip_install.log" 2>&1; then
    echo "pip could not build MiniTriton (see pip_install.log); copying the packages instead"
    rm -rf "$SITE/minitriton"
    cp -r minitriton "$SITE/minitriton"
    cp -r emulator "$SITE/minitriton/emulator"
    cp -r grammar "$SITE/minitriton/grammar"
fi
# The installed copy comes first. The repository comes after it for
# `tests.kernels` (tests/e2e/conftest.py only adds the root when it is absent
# from sys.path, so it cannot shadow the installed minitriton). Every Python
# below runs from /tmp, so the current directory shadows nothing either.
export PYTHONPATH="$SITE:$REPO"
export MINITRITON_COURSE="$REPO/exercises"  # the course is not part of the package
cd /tmp
python3 - <<'PY' || { echo "error: the installed MiniTriton does not import"; exit 2; }
import minitriton, minitriton.emulator, minitriton.backend, lark
print(f"minitriton from {minitriton.__file__}; emulator {minitriton.emulator.__file__}")
print(f"lark {lark.__version__}; gpu_available() = {minitriton.backend.gpu_available()}")
assert minitriton.__file__.startswith("/tmp/site/"), "the repository's copy shadows the install"
PY

MODE="${1:-}"
TEST_RC=0
if [[ "$MODE" != "--bench" ]]; then
    banner "(a) pytest -m gpu"
    # The GPU tests: every test under tests/ that carries the `gpu` marker.
    mapfile -t TARGETS < <(echo "$REPO/tests")
    echo "targets: ${TARGETS[*]#"$REPO/"}"
    # The docs-coverage tests hold no GPU test but import the docs extension, which needs
    # docutils (the `test` extra brings it): without it, leave them out, not a collection error.
    IGNORE=()
    if ! python3 -c "import docutils" 2>/dev/null; then
        echo "no docutils here: tests/test_docs_coverage.py (no GPU tests) is left out"
        IGNORE=(--ignore="$REPO/tests/test_docs_coverage.py")
    fi
    XDIST=()
    if [[ -n "${NPROC:-}" ]] && python3 -c "import xdist" 2>/dev/null; then
        XDIST=(-n "$NPROC")
    fi
    timeout 500 python3 -m pytest -c "$REPO/pyproject.toml" --rootdir="$REPO" -p no:cacheprovider \
        -m gpu -q --continue-on-collection-errors --durations=15 --junitxml="$OUT/gpu_tests.xml" \
        "${XDIST[@]}" "${IGNORE[@]}" "${TARGETS[@]}" \
        2>&1 | tee "$OUT/gpu_tests.log"
    TEST_RC=${PIPESTATUS[0]}
fi

BENCH_RC=0
if [[ "$MODE" != "--tests" ]]; then
    banner "(b) benchmarks/gpu_bench.py"
    timeout 420 python3 "$REPO/benchmarks/gpu_bench.py" --json "$OUT/gpu_bench.json" \
        2>&1 | tee "$OUT/gpu_bench.log"
    BENCH_RC=${PIPESTATUS[0]}
fi

banner "(c) summary"
[[ "$MODE" == "--bench" ]] || python3 - "$OUT/gpu_tests.xml" <<'PY'
import sys
import xml.etree.ElementTree as ET

try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError) as e:
    sys.exit(f"no JUnit XML: {e}")
counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
bad = []
for case in root.iter("testcase"):
    outcome = next((c.tag for c in case if c.tag in ("failure", "error", "skipped")), "passed")
    outcome = {"failure": "failed"}.get(outcome, outcome)
    counts[outcome] += 1
    if outcome in ("failed", "error"):
        msg = next(iter(c.get("message", "") for c in case if c.tag in ("failure", "error")), "")
        bad.append(f"  {outcome}: {case.get('classname')}::{case.get('name')}: {msg[:200]}")
print("GPU tests: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
print("\n".join(bad))
PY
echo "pytest exit status ${TEST_RC}; gpu_bench exit status ${BENCH_RC}; total ${SECONDS}s"
[[ $TEST_RC -eq 0 && $BENCH_RC -eq 0 ]]
