"""The GPU time a live-row SWITCH node (zerognn.cuda.live_rows) costs by itself, by bucket count.

    python scripts/live_rows_probe.py [--json out.json]

A graph holds ``--nodes`` switches in a row, each with one tiny kernel (a one-element fill) per body and the
live count in the first bucket, against a graph of the same fills without switches. The difference per node is
what a switch adds to a step's critical path: the select kernel, the condition and the body's launch. CUDA
events around ``--replays`` replays queued behind a ``torch.cuda._sleep``; the median of 5 batches.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import torch

from zerognn.cuda import live_rows
from zerognn.cuda.capture import capturing
from zerognn.cuda.live_rows import LiveRows, RowBuckets


def _time(step, replays: int) -> float:
    """µs per replay of ``step`` captured in one graph."""
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        step()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with capturing(graph, stream):
        step()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(20_000_000)
        start.record()
        for _ in range(replays):
            graph.replay()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1000 / replays)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--replays", type=int, default=50)
    parser.add_argument("--json")
    args = parser.parse_args()
    out = torch.zeros(1024, device="cuda")
    count = torch.tensor([1], dtype=torch.int32, device="cuda")

    def plain():
        for _ in range(args.nodes):
            out[:1].fill_(1.0)

    base = _time(plain, args.replays)
    rows = {"nodes": args.nodes, "plain_us": base}
    print(f"{args.nodes} fills: {base:.1f} us per replay", flush=True)
    for k in (2, 4, 8):
        buckets = RowBuckets.between(128, 1024, count=k)

        def switched(buckets=buckets):
            for _ in range(args.nodes):
                live_rows.run_over_live_rows(LiveRows(count, buckets), lambda n: out[:1].fill_(1.0))

        t = _time(switched, args.replays)
        rows[f"switch{k}_us"] = t
        print(f"{args.nodes} switches of {k} bodies: {t:.1f} us per replay, {(t - base) / args.nodes:.2f} us per "
              f"switch over a plain fill", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
