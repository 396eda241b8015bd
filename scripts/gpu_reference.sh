#!/usr/bin/env bash
# One call on a lent GPU machine: the GPU tests, then H200 reference records
# (workflow/config/h200-reference.yaml, narrowed by any extra snakemake arguments such as
# --config 'models=[sage]'), optionally the operator benchmark; results packed into $OUT/reference.tgz.
#   device run:  ZEROGNN_GIT_COMMIT=<sha> ZEROGNN_GIT_DIRTY=0 bash scripts/gpu_reference.sh [snakemake args]
# with <sha> written out from this checkout (`git rev-parse --short HEAD` here): the device's copy of
# .git can be stale, so a sha computed there can name an older commit.
# (carry .whl). Env: GPU_TESTS=0 skips the tests, BENCH=1 adds bench-ops, SNAKEMAKE_TIMEOUT (s).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --find-links .whl -e ".[test]" > /dev/null 2>&1 || echo "wheel install failed"
if [ "${GPU_TESTS:-1}" != 0 ]; then
    python3 -m pytest -m gpu -q -p no:cacheprovider 2>&1 | tee "$OUT/pytest-gpu.log" | tail -4
fi
start=$(date +%s)
timeout "${SNAKEMAKE_TIMEOUT:-300}" python3 -m snakemake --cores all --configfile workflow/config/h200-reference.yaml \
    "$@" > "$OUT/snakemake.log" 2>&1
echo "snakemake rc=$? in $(( $(date +%s) - start )) s"
cut -d, -f1-4,9,14-16 results/summary.csv 2>/dev/null
if [ "${BENCH:-0}" = 1 ]; then
    timeout 90 zerognn bench-ops --dataset-dir data/products-like --batch-size 1024 2>&1 | tee results/bench-ops.txt
fi
tar czf "$OUT/reference.tgz" results logs figures 2>/dev/null
