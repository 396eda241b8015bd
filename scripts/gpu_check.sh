#!/usr/bin/env bash
# One development call on a lent GPU machine: install the carried wheels, run the GPU tests (all, or
# the paths given), then time host-mediated, zerognn and zerognn-worstcase once on products-like
# (SAGE 15-10-5, B=1024) and run the operator + GEMM-padding benchmark. Results land in $OUT.
#   device run:  ZEROGNN_GIT_COMMIT=<sha> ZEROGNN_GIT_DIRTY=0 bash scripts/gpu_check.sh [pytest paths]
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --find-links .whl -e ".[test]" > /dev/null 2>&1 || echo "wheel install failed"
echo "== pytest -m gpu $*"
timeout "${PYTEST_TIMEOUT:-240}" python3 -m pytest -m gpu -q -p no:cacheprovider "$@" 2>&1 \
    | tee "$OUT/pytest-gpu.log" | tail -25
echo "== products-like, SAGE 15-10-5, B=1024"
zerognn dataset make products-like --out data/products-like > "$OUT/dataset.log" 2>&1 || tail -5 "$OUT/dataset.log"
for variant in ${CHECK_VARIANTS:-host-mediated zerognn zerognn-worstcase}; do
    timeout 120 zerognn run --dataset products-like --dataset-dir data/products-like --variant "$variant" \
        --batch-size 1024 --fanouts 15,10,5 --out "results/check/$variant.json" \
        --trace "results/check/$variant.trace.json.gz" 2>&1 | tail -2
done
for variant in zerognn host-mediated; do
    echo "== kernels per step: $variant"
    python3 scripts/kernel_summary.py "results/check/$variant.trace.json.gz" --steps 5 --top 45
done
python3 - <<'PY'
import glob, json
for path in sorted(glob.glob("results/check/*.json")):
    r = json.load(open(path)); m = r["metrics"]
    print(f"{r['config']['variant']:<20} {m['step_ms_median']:8.3f} ms  exec {m['gpu_exec_fraction']:.3f}  "
          f"syncs {m['host_syncs_per_step']}  launches {m['host_launches_per_step']}  peak {m['peak_mem_bytes']/2**20:8.1f} MiB  "
          f"loss[-1] {r['losses'][-1]:.5f}  info {json.dumps(r['variant_info'])[:400]}")
PY
[ "${BENCH:-1}" = 0 ] || timeout 120 zerognn bench-ops --dataset-dir data/products-like --batch-size 1024 2>&1 | tee "$OUT/bench-ops.txt" | tail -8
tar czf "$OUT/check.tgz" results/check 2>/dev/null
