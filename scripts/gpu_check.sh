#!/usr/bin/env bash
# One development call on a GPU machine: install the carried wheels, run the GPU tests (all, or the
# paths given), then time host-mediated, zerognn and zerognn-worstcase on products-like (SAGE 15-10-5)
# at each batch size of CHECK_BATCHES (default 1024) with a profiler trace and its per-kernel summary,
# and run the operator benchmark. With BEFORE=<dir> holding another tree of the project (e.g.
# `git archive <commit> | tar -x -C .before`; several, space-separated), the same runs are made with each
# in the same call, so before and after compare on one machine (CHECK_REPEATS=N: N processes per side,
# interleaved; CHECK_DTYPES="float32 tf32 bfloat16": each precision in turn, default float32;
# CHECK_MODULES=zerognn.peers.pyg: a baseline module every run loads, for CHECK_VARIANTS="pyg ...").
# Results land in $OUT.
#   device run:  ZEROGNN_GIT_COMMIT=<sha> ZEROGNN_GIT_DIRTY=0 bash scripts/gpu_check.sh [pytest paths]
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
ROOT=$(pwd)
source scripts/install_wheels.sh  # .whl/ and any .whl-*/ carried beside the tree
if [ "${GPU_TESTS:-1}" = 1 ]; then
    echo "== pytest -m gpu $*"
    timeout "${PYTEST_TIMEOUT:-240}" python3 -m pytest -m gpu -q -p no:cacheprovider "$@" 2>&1 \
        | tee "$OUT/pytest-gpu.log" | tail -25
fi
zerognn dataset make products-like --out data/products-like > "$OUT/dataset.log" 2>&1 || tail -5 "$OUT/dataset.log"

check_runs() {  # tree tag repeat
    for dtype in ${CHECK_DTYPES:-float32}; do
    for batch in ${CHECK_BATCHES:-1024}; do
        for variant in ${CHECK_VARIANTS:-host-mediated zerognn zerognn-worstcase}; do
            out="$ROOT/results/check/$2/$variant-b$batch-$dtype-r$3"  # the record is named after its run, in there
            (cd "$1" && PYTHONPATH="$1" timeout 150 python3 -m zerognn run --dataset products-like \
                --dataset-dir "$ROOT/data/products-like" --variant "$variant" --batch-size "$batch" --fanouts 15,10,5 \
                --dtype "$dtype" ${CHECK_MODULES:+--variant-module "$CHECK_MODULES"} --out "$out/" \
                --trace "$out.trace.json.gz" 2>&1 | tail -1)
            echo "-- kernels per step: $2 $variant B=$batch $dtype repeat $3"
            python3 scripts/kernel_summary.py "$out.trace.json.gz" --top "${CHECK_TOP:-12}"
        done
    done
    done
}
# CHECK_REPEATS processes per side, before and after interleaved, so a drift of the machine hits both alike
for repeat in $(seq "${CHECK_REPEATS:-1}"); do
    for tree in ${BEFORE:-}; do  # each tagged by its directory's name without the dot: .before -> before
        check_runs "$ROOT/$tree" "${tree#.}" "$repeat"
    done
    check_runs "$ROOT" after "$repeat"
done
python3 - <<'PY'
import glob, json, statistics
sides = {}
for path in sorted(glob.glob("results/check/*/*/*.json")):
    r = json.load(open(path)); m = r["metrics"]
    f3 = lambda v: "-" if v is None else f"{v:.3f}"  # a device-driven loop's GPU side may be unknown
    print(f"{path.split('/')[-3]:<6} {r['config']['variant']:<18} B={r['config']['batch_size']:<5} {r['config'].get('dtype', 'float32'):<8}"
          f" {m['step_ms_median']:7.3f} ms"
          f"  exec {f3(m['gpu_exec_fraction'])}  busy {f3(m['gpu_busy_ms_per_step'])}  act {m.get('gpu_activities_per_step')}"
          f"  floor {m.get('floor_ms')}  peak {m['peak_mem_bytes'] / 2**20:7.1f} MiB  loss[-1] {r['losses'][-1]:.5f}"
          f"  warm-up {f3(m.get('phase_s', {}).get('warm-up'))} s  total {f3(m.get('phase_s', {}).get('total'))} s"
          f"  setup {f3(m.get('phase_s', {}).get('setup'))} s"
          + "".join(f"  {k} {f3(v)} s" for k, v in r["variant_info"].get("envelope", {}).items() if k.endswith("_s")))
    key = (r['config']['variant'], r['config']['batch_size'], r['config'].get('dtype', 'float32'), path.split('/')[-3])
    sides.setdefault(key, []).append(m['step_ms_median'])
for (variant, batch, dtype, tag), medians in sorted(sides.items()):
    print(f"median of {len(medians)} processes: {tag:<6} {variant:<18} B={batch:<5} {dtype:<8} {statistics.median(medians):7.3f} ms")
PY
[ "${BENCH:-1}" = 0 ] || timeout 120 zerognn bench-ops --dataset-dir data/products-like --batch-size 1024 2>&1 | tee "$OUT/bench-ops.txt" | tail -12
tar czf "$OUT/check.tgz" results/check 2>/dev/null
