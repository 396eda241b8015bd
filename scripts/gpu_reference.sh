#!/usr/bin/env bash
# One call on a GPU machine: H200 reference records (workflow/config/h200-reference.yaml, optionally
# narrowed to some datasets and models so that a call fits its time limit: every comparison group — one
# dataset, model and batch size, all variants — is recorded in one call), then optionally the GPU
# tests; results packed into $OUT/reference.tgz.
#   device run:  ZEROGNN_GIT_COMMIT=<sha> ZEROGNN_GIT_DIRTY=0 REF_DATASETS=products-like REF_MODELS=sage \
#                bash scripts/gpu_reference.sh [snakemake args]
# with <sha> written out from this checkout (`git rev-parse --short HEAD` here): the device's copy of
# .git can be stale, so a sha computed there can name an older commit.
# (carry .whl). Env: GPU_TESTS=1 runs `pytest -m gpu` after the records, BENCH=1 adds bench-ops,
# SNAKEMAKE_TIMEOUT (s).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
source scripts/install_wheels.sh  # .whl/ and any .whl-*/ carried beside the tree
python3 - <<'PY'
import os
import yaml

config = yaml.safe_load(open("workflow/config/h200-reference.yaml"))
datasets, models = os.environ.get("REF_DATASETS"), os.environ.get("REF_MODELS")
if datasets:
    config["datasets"] = {k: v for k, v in config["datasets"].items() if k in datasets.split(",")}
if models:
    config["models"] = models.split(",")
yaml.safe_dump(config, open("/tmp/zerognn-reference.yaml", "w"))
print("reference subset:", list(config["datasets"]), config["models"])
PY
start=$(date +%s)
timeout "${SNAKEMAKE_TIMEOUT:-480}" python3 -m snakemake --cores all --configfile /tmp/zerognn-reference.yaml \
    "$@" > "$OUT/snakemake.log" 2>&1
echo "snakemake rc=$? in $(( $(date +%s) - start )) s"
python3 -c "import pandas as pd; print(pd.read_csv('results/summary.csv')[['dataset', 'model', 'variant', 'batch_size',
    'step_ms_median', 'gpu_exec_fraction', 'profiler_dilation', 'speedup_vs_host_mediated']].to_string())" 2>/dev/null
if [ "${BENCH:-0}" = 1 ]; then
    timeout 90 zerognn bench-ops --dataset-dir data/products-like --batch-size 1024 2>&1 | tee results/bench-ops.txt
fi
if [ "${GPU_TESTS:-0}" = 1 ]; then
    timeout "${PYTEST_TIMEOUT:-300}" python3 -m pytest -m gpu -q -p no:cacheprovider 2>&1 | tee "$OUT/pytest-gpu.log" | tail -4
fi
tar czf "$OUT/reference.tgz" --exclude=results/reference --exclude=figures/reference results logs figures 2>/dev/null
