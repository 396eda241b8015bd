"""Per-kernel GPU time and count per step from a run's profiler trace (``zerognn run --trace``).

    python scripts/kernel_summary.py results/check/zerognn.trace.json.gz --steps 5 [--top 40]

Also prints the idle time between consecutive GPU activities, so launch gaps can be told from work.
"""

import argparse
import collections

from zerognn.measure.trace import GPU_ACTIVITY_CATEGORIES, load_chrome_trace


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    events = [e for e in load_chrome_trace(args.trace)["traceEvents"]
              if e.get("ph") == "X" and e.get("cat") in GPU_ACTIVITY_CATEGORIES]
    events.sort(key=lambda e: e["ts"])
    total, count = collections.Counter(), collections.Counter()
    for e in events:
        total[e["name"][:90]] += e.get("dur", 0)
        count[e["name"][:90]] += 1
    gaps = [b["ts"] - (a["ts"] + a.get("dur", 0)) for a, b in zip(events, events[1:])]
    busy = sum(e.get("dur", 0) for e in events)
    print(f"{len(events) / args.steps:.0f} GPU activities/step, busy {busy / args.steps:.0f} us/step, "
          f"gaps {sum(g for g in gaps if g > 0) / args.steps:.0f} us/step "
          f"(median gap {sorted(gaps)[len(gaps) // 2] if gaps else 0:.1f} us)")
    for name, us in total.most_common(args.top):
        print(f"{us / args.steps:9.1f} us  {count[name] / args.steps:5.1f}x  {name}")


if __name__ == "__main__":
    main()
