#!/usr/bin/env bash
# One call on a lent GPU machine: the H200 reference records (workflow/config/h200-reference.yaml)
# and the operator micro-benchmark, packed into $OUT/reference.tgz.
#   device run:  ZEROGNN_GIT_COMMIT=<sha> ZEROGNN_GIT_DIRTY=0 bash scripts/gpu_reference.sh   (carry .whl)
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --find-links .whl -e ".[test]" > /dev/null 2>&1 || echo "wheel install failed"
start=$(date +%s)
timeout "${SNAKEMAKE_TIMEOUT:-300}" python3 -m snakemake --cores all --configfile workflow/config/h200-reference.yaml \
    > "$OUT/snakemake.log" 2>&1
echo "snakemake rc=$? in $(( $(date +%s) - start )) s"
cut -d, -f1-16 results/summary.csv 2>/dev/null
timeout 90 zerognn bench-ops --dataset-dir data/products-like --batch-size 1024 2>&1 | tee results/bench-ops.txt
tar czf "$OUT/reference.tgz" results logs figures 2>/dev/null
