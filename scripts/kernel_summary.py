"""Per-kernel GPU time and count per step from a run's profiler trace (``zerognn run --trace``).

    python scripts/kernel_summary.py results/check/zerognn.trace.json.gz [--top 40]

Only the GPU activities inside the profiled window count, divided by the window's steps (the trace also
holds the lead-in step, run before the window). Also prints the idle time between consecutive GPU
activities, so launch gaps can be told from work.
"""

import argparse
import collections

from zerognn.measure.trace import window_gpu_activities


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    events, n_steps = window_gpu_activities(args.trace)
    if not events or not n_steps:
        raise SystemExit(f"{args.trace}: no GPU activity inside the profiled window; was it recorded on a GPU?")
    total, count = collections.Counter(), collections.Counter()
    for e in events:
        total[e["name"][:90]] += e.get("dur", 0)
        count[e["name"][:90]] += 1
    gaps = [b["ts"] - (a["ts"] + a.get("dur", 0)) for a, b in zip(events, events[1:])]
    busy = sum(e.get("dur", 0) for e in events)
    print(f"{len(events) / n_steps:.0f} GPU activities/step over {n_steps} steps, busy {busy / n_steps:.0f} us/step, "
          f"gaps {sum(g for g in gaps if g > 0) / n_steps:.0f} us/step "
          f"(median gap {sorted(gaps)[len(gaps) // 2] if gaps else 0:.1f} us)")
    for name, us in total.most_common(args.top):
        print(f"{us / n_steps:9.1f} us  {count[name] / n_steps:5.1f}x  {name}")


if __name__ == "__main__":
    main()
