#!/usr/bin/env bash
# The H200 reference's studies in stages that each fit one call of at most 10 minutes on a GPU host
# (docs/results.md, "Recording the reference"); datasets and records stay on the machine between calls
# made back to back, and each stage packs what it made into $OUT (default /tmp/out).
#   STAGE=build  builds data/papers100M-like from nothing (timed; progress in $OUT/build.log), then the
#                GPU tests of the >2^31 paths, the CUDA sampler against the reference on the full graph
#   STAGE=<study>  records workflow/config/h200-<study>.yaml in whole rounds (whole_rounds below: each round
#                every variant of each comparison group once, a group's trials in rotating order), as many as
#                end within ROUND_BUDGET, up to round ROUNDS (default: all); the same command again, in calls back
#                to back on the same machine, records the rest (rounds already recorded are kept as they are).
#                Each study records into a workspace of its own, stages/<study>/ (results/, logs/, figures/;
#                <study> is its config's name without h200-), so two studies on one machine never share a
#                record of the same id.
#                A machine released between calls takes the records with it: a study starts again on the next
#                (records carried to it would be re-made, which scripts/whole_rounds.py refuses), or goes on
#                there with CARRIED=1 from the earlier rounds' records carried as stages/<study>/results/runs/.
#                Where each call brings that directory with the tree anew, refresh it from the last call's archive
#                before the next (tar xzf <study>.tgz stages/<study>/results/runs): an older copy would replace
#                the machine's newer records, and the rounds since would be recorded again.
#                The studies:
#                reference, trials (or CONFIG's), precision, small-batch, peers, epoch, interference,
#                determinism, tta (a round is a seed), papers (alias runs; after STAGE=build on the machine).
#                ONLY=dataset=products-like,batch_size=1024 (say) records only the runs whose key has those
#                values, with the same run ids and order (PRECISION=tf32 is ONLY=dtype=tf32): a study whose
#                rounds do not fit a few calls records each comparison group, or a few, on a machine of their own
#   STAGE=aftereffect  a profiler session's after-effect on timed steps: scripts/profiler_aftereffect.py
#                 in ROUNDS (default 5) rounds of fresh processes of host-mediated and zerognn, interleaved;
#                 CONTROL=1 adds, after each, a process with no profiler session between its windows
#   STAGE=bench-ops  `zerognn bench-ops` on products-like at B=1024 (the operators one by one, the dense layers'
#                 padding cost) into $OUT/bench-ops.txt, its header naming the commit; the docs render it
#   STAGE=cost   a run's cost by phase: fresh processes of VARIANTS (default zerognn torch-compile), TRIALS
#                (default 3) each, on products-like SAGE B=1024 as workflow/config/h200-trials.yaml runs them,
#                at precision DTYPE (default float32); CPROFILE=1 runs each under cProfile and prints the
#                functions that took longest (cumulative) in the last trial of each variant
#   STAGE=tests  `pytest -m gpu` (the whole GPU suite; PYTEST_ARGS narrows it)
# Run:  STAGE=trials bash scripts/gpu_stages.sh, from the repository root with the project installed
# (pip install -e ".[cuda,figures,pipeline,peers]" pytest-timeout). A host without network brings those as a
# wheelhouse in .whl/ (WholeGraph's wheels in .whl-*/: scripts/install_wheels.sh), which the script installs
# from; a copy of the tree without git metadata, or with stale metadata, states its commit:
# ZEROGNN_GIT_COMMIT=<sha> ZEROGNN_GIT_DIRTY=0 (a study stage refuses to record otherwise), and a copy git calls
# clean at a later commit runs `git checkout <sha> -- zerognn kernels workflow Snakefile pyproject.toml` and
# `git reset --soft <sha>` first (whole_rounds.py refuses where the source files are not <sha>'s). A stage's archive
# is committed with scripts/commit_study.py.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
source scripts/install_wheels.sh  # .whl/ and any .whl-*/ carried beside the tree
DATASET=data/papers100M-like
# ONLY=field=value[,...] records only those runs of a study (scripts/round_targets.py --only); PRECISION=p is ONLY=dtype=p
ONLY=${ONLY:-}
[ -z "${PRECISION:-}" ] || ONLY="dtype=$PRECISION${ONLY:+,$ONLY}"

# A stop of this script (timeout's SIGTERM, a GPU call's limit, Ctrl-C) reaches the long step under way, which
# stops its own children (whole_rounds.py stops Snakemake's process group): bash runs a trap only between
# commands, so such a step runs in the background and is waited for.
step=
trap 'trap "" TERM INT; [ -z "$step" ] || kill -TERM "$step" 2>/dev/null; wait; exit 143' TERM INT
stoppable() { "$@" & step=$!; wait "$step"; local rc=$?; step=; return "$rc"; }

# Rounds 1..N of a study (N: $2, 0 for all) in whole rounds within ROUND_BUDGET (default 480) seconds of the
# stage's start (scripts/whole_rounds.py; lower it when another stage runs first in the same call: the call's
# limit counts from its own start), in the workspace $4, then the summary of what is recorded. $1: the config
# file; the log goes to $3. CARRIED=1: the earlier rounds' records came from another machine with the tree (carry
# $4/results/runs), and the study goes on from them here (whole_rounds.py --carried).
whole_rounds() {
    stoppable python3 scripts/whole_rounds.py "$1" --rounds "$2" --budget "${ROUND_BUDGET:-480}" \
        --timeout "${SNAKEMAKE_TIMEOUT:-560}" --log "$3" --only "$ONLY" --workspace "$4" ${CARRIED:+--carried}
    zerognn summarize --runs "$4/results/runs" --out "$4/results/summary.csv" --markdown "$4/results/summary.md" \
        --figures "$4/results/figures.json" >> "$3" 2>&1 || echo "summary failed (see $3)"
}

case "${STAGE:?set STAGE to build, a study (reference, trials, precision, small-batch, peers, epoch, interference, determinism, tta, papers), aftereffect, bench-ops, cost or tests}" in
build)
    df -h . | tail -1
    free -g | head -2
    start=$(date +%s)
    stoppable timeout "${BUILD_TIMEOUT:-540}" zerognn dataset make papers100M-like --scale 1.0 --out "$DATASET" \
        > "$OUT/build.log" 2>&1
    echo "dataset make rc=$? in $(( $(date +%s) - start )) s"
    tail -4 "$OUT/build.log"
    du -sh "$DATASET"; df -h . | tail -1
    zerognn build --arch auto > "$OUT/kernels.log" 2>&1 || echo "kernel build failed"  # warms the cache for runs
    ZEROGNN_FULL_DATASET_DIR=$DATASET timeout "${PYTEST_TIMEOUT:-200}" python3 -m pytest -m gpu -q \
        -p no:cacheprovider tests/sampling/test_wide_offsets.py 2>&1 | tee "$OUT/pytest-wide.log" | tail -3
    ;;
trials|papers|runs|epoch|interference|determinism|tta|peers|precision|small-batch|reference)
    # a study in whole rounds (each round every variant of each group once), as many as end within this call.
    # Its records must name the commit their source files are: a copy that git calls dirty (its git metadata
    # stale, say) records only with the commit stated (checked later by `zerognn provenance`), or ALLOW_DIRTY=1.
    read -r commit dirty < <(python3 -c "from zerognn.measure.provenance import git_state; print(*git_state()[:2])")
    if [ "$dirty" != False ] && [ "${ALLOW_DIRTY:-0}" != 1 ]; then
        echo "gpu_stages: the records would name commit $commit with dirty=$dirty; state the commit the tree's source" \
             "files are with ZEROGNN_GIT_COMMIT=<sha> ZEROGNN_GIT_DIRTY=0, or record from a clean checkout" \
             "(ALLOW_DIRTY=1 records anyway, for a look that is not committed)"
        exit 2
    fi
    stated=${ZEROGNN_GIT_COMMIT:-}
    if [ -n "$stated" ] && [ "${commit#"$stated"}" = "$commit" ] && [ "${stated#"$commit"}" = "$stated" ]; then
        # git calls the copy clean at another commit, and a clean checkout's own commit wins (git_state)
        echo "gpu_stages: git says this tree is clean at $commit, so the records would name it, not" \
             "ZEROGNN_GIT_COMMIT=$stated; in a copy whose source files are $stated's, run" \
             "\`git reset --soft $stated\` first (the records then name it; \`zerognn provenance\` checks them)," \
             "or leave ZEROGNN_GIT_COMMIT unset to record at $commit"
        exit 2
    fi
    case $STAGE in
        trials) config=${CONFIG:-workflow/config/h200-trials.yaml} ;;
        runs|papers) config=workflow/config/h200-papers.yaml ;;  # after STAGE=build on the same machine
        *) config=workflow/config/h200-$STAGE.yaml ;;
    esac
    workspace=stages/$(basename "$config" .yaml)  # one per config: STAGE=runs and =papers share one
    workspace=${workspace/\/h200-//}
    whole_rounds "$config" "${ROUNDS:-${TRIALS:-0}}" "$OUT/snakemake-$STAGE.log" "$workspace"
    WORKSPACE=$workspace python3 - <<'PY'
import glob, json, os
for path in sorted(glob.glob(f"{os.environ['WORKSPACE']}/results/runs/*.json")):
    r = json.load(open(path))
    p = r["metrics"]["phase_s"]
    print(f"{r['run_id'][:60]:<60} {r['metrics']['step_ms_median']:8.3f} ms  " + " ".join(f"{k}={v:.2f}" for k, v in p.items()))
PY
    cut -d'|' -f2-4,6-9,11 "$workspace/results/summary.md" 2>/dev/null
    # what the stage made: its workspace, records, logs and figures (scripts/commit_study.py reads its records)
    tar czf "$OUT/$STAGE.tgz" "$workspace" 2>/dev/null
    ;;
aftereffect)
    # needs data/products-like (STAGE=trials or cost builds it); one fresh process per variant per round
    export ZEROGNN_CALL_ID=${ZEROGNN_CALL_ID:-aftereffect-$(date -u +%Y%m%dT%H%M%S)}
    for round in $(seq 1 "${ROUNDS:-5}"); do
        for variant in host-mediated zerognn; do
            timeout 120 python3 scripts/profiler_aftereffect.py --dataset-dir data/products-like --variant "$variant" \
                --out "results/aftereffect/$variant-$round.json" 2>/dev/null | tail -1
            [ -z "${CONTROL:-}" ] || timeout 120 python3 scripts/profiler_aftereffect.py --dataset-dir \
                data/products-like --variant "$variant" --profiled 0 \
                --out "results/aftereffect/$variant-control-$round.json" 2>/dev/null | tail -1
        done
    done
    tar czf "$OUT/aftereffect.tgz" results/aftereffect 2>/dev/null
    ;;
bench-ops)
    # the operators one by one on products-like at B=1024, into $OUT/bench-ops.txt, whose header names the commit
    # (state it as for a study); commit it as results/reference/<card>/bench-ops.txt and name it in
    # docs/templates/studies.yaml (the docs render it)
    [ -d data/products-like ] || zerognn dataset make products-like --out data/products-like --scale 1.0 --seed 0 \
        > "$OUT/dataset.log" 2>&1
    zerognn build --arch auto > "$OUT/kernels.log" 2>&1 || echo "kernel build failed"
    stoppable timeout 180 zerognn bench-ops --dataset-dir data/products-like --batch-size 1024 > "$OUT/bench-ops.txt"
    echo "bench-ops rc=$?"; head -1 "$OUT/bench-ops.txt"
    ;;
cost)
    [ -d data/products-like ] || zerognn dataset make products-like --out data/products-like --scale 1.0 --seed 0 \
        > "$OUT/dataset.log" 2>&1
    zerognn build --arch auto > "$OUT/kernels.log" 2>&1 || echo "kernel build failed"
    mkdir -p results/cost
    for variant in ${VARIANTS:-zerognn torch-compile}; do
        for trial in $(seq 1 "${TRIALS:-3}"); do
            once="--profile-steps 5 --eval-nodes 2048"  # trial 1 alone, as the pipeline plans it
            [ "$trial" = 1 ] || once="--profile-steps 0 --eval-nodes 0"
            runner=(zerognn)
            [ "${CPROFILE:-0}" = 1 ] && runner=(python3 -m cProfile -o "results/cost/$variant-$trial.prof" -m zerognn)
            timeout 300 "${runner[@]}" run --dataset products-like --model sage --variant "$variant" --batch-size 1024 \
                --fanouts 15-10-5 --hidden 256 --lr 0.003 --seed 0 --warmup-steps 5 --measure-steps 20 \
                $once --gpus 1 --device cuda --dtype "${DTYPE:-float32}" --threads "$(nproc)" --trial "$trial" \
                --dataset-dir data/products-like --out results/cost/ > "results/cost/$variant-$trial.log" 2>&1 \
                || { echo "$variant trial $trial failed:"; tail -2 "results/cost/$variant-$trial.log"; continue; }
            python3 -c "import json, sys; r = json.load(open(sys.argv[1])); m = r['metrics']
print(sys.argv[1], round(m['step_ms_median'], 3), 'ms', ' '.join(f'{k}={v:.2f}' for k, v in m['phase_s'].items()))" \
                "$(ls -t results/cost/*.json | head -1)" 2>/dev/null
        done
        [ "${CPROFILE:-0}" = 1 ] && python3 -c "import pstats, sys
pstats.Stats(sys.argv[1]).sort_stats('cumulative').print_stats(int(sys.argv[2]))" \
            "results/cost/$variant-${TRIALS:-3}.prof" "${CPROFILE_TOP:-45}" 2>&1 | grep -v '^$' | cut -c1-160 | tail -n +4
    done
    tar czf "$OUT/cost.tgz" results/cost 2>/dev/null
    ;;
tests)
    timeout "${PYTEST_TIMEOUT:-540}" python3 -m pytest -m gpu -q -p no:cacheprovider ${PYTEST_ARGS:-} 2>&1 \
        | tee "$OUT/pytest-gpu.log" | tail -4
    ;;
esac
