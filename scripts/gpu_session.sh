#!/usr/bin/env bash
# One call on a GPU machine (no network): install the carried wheels, run the GPU tests and the
# whole suite, then the default pipeline on the GPU; everything worth keeping lands in $OUT.
#   device run:  ZEROGNN_GIT_COMMIT=<sha> ZEROGNN_GIT_DIRTY=0 bash scripts/gpu_session.sh
# carrying .whl (a wheelhouse of the project's dependencies, for a machine without network). The copy
# of the tree on that machine has no usable git metadata, so the caller states the commit the records
# come from.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --find-links .whl -e ".[test]" 2>&1 | grep -v "^WARNING" | tail -3
python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name(0))"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

echo "== pytest -m gpu"
python3 -m pytest -m gpu -q -p no:cacheprovider 2>&1 | tee "$OUT/pytest-gpu.log" | tail -15
echo "== compute-sanitizer memcheck on the overflow test"
compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider \
    tests/cuda/test_kernels.py -k overflow 2>&1 | tail -4

echo "== pytest (all)"
python3 -m pytest -q -p no:cacheprovider -x 2>&1 | tee "$OUT/pytest-all.log" | tail -8

echo "== snakemake (default config, GPU)"
start=$(date +%s)
python3 -m snakemake --cores all "$@" > "$OUT/snakemake.log" 2>&1
echo "snakemake rc=$? in $(( $(date +%s) - start )) s"
tail -5 "$OUT/snakemake.log"
cat results/summary.csv 2>/dev/null | cut -d, -f1-16
tar czf "$OUT/pipeline.tgz" --exclude=results/reference --exclude=figures/reference results logs figures .snakemake/log 2>/dev/null
ls -la "$OUT"
