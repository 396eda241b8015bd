"""How each dense GEMM of a SAGE step moves with its row count: cuBLAS picks its kernel by shape, and the time
need not follow the rows (on the H200 the first layer's forward at B=256 took 65 us at its capacity of 19,924
rows and 42 us at 16,658).

    python scripts/gemm_rows_sweep.py --record R [--record R2 ...] [--json out.json]

For each layer of each ``zerognn`` record (shapes as ``scripts/gemm_probe.py`` reads them), each GEMM the layer
runs (``torch`` ways of the probe: forward with bias and ReLU, weight gradient with the bias gradient, input
gradient) is timed at row counts from 70 % of the layer's mean live rows to 115 % of its capacity, and the
first kernel cuBLAS launches is named (torch.profiler). The summary says, per GEMM, the time at the capacity,
the fastest row count at or above it within 15 % (what rounding the envelope up would buy), and the time at the
live rows. GPU time per call as the probe takes it (calls queued behind a sleep, CUDA events, median).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from gemm_probe import gpu_us, layer_shapes, torch_ways


def first_kernel(fn) -> str:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    kernels = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return kernels[0][:70] if kernels else "?"


def sweep(shape: dict, calls: int, repeats: int) -> list[dict]:
    low, high = int(0.7 * shape["live"]), int(1.15 * shape["capacity"])
    step = max(8, (high - low) // 48 // 8 * 8)
    rows_list = sorted(set(list(range(low, high + 1, step)) + [shape["capacity"], shape["live"]]))
    k, n = shape["K"], shape["N"]
    x_all, w = torch.randn(high, k, device="cuda"), torch.randn(n, k, device="cuda")
    b, g_all = torch.randn(n, device="cuda"), torch.randn(high, n, device="cuda")
    ones = torch.ones(high, device="cuda")
    rows_out = []
    for rows in rows_list:
        ways = torch_ways(x_all[:rows], w, b, g_all[:rows], shape["relu"], shape["input_grad"], ones[:rows])
        for name, fn in ways.items():
            rows_out.append({"layer": shape["layer"], "gemm": name, "rows": rows, "capacity": shape["capacity"],
                             "live": shape["live"], "us": round(gpu_us(fn, calls, repeats), 2),
                             "kernel": first_kernel(fn)})
    return rows_out


def summary(rows: list[dict]) -> list[str]:
    lines = []
    for key in sorted({(r["layer"], r["gemm"]) for r in rows}):
        mine = [r for r in rows if (r["layer"], r["gemm"]) == key]
        cap = next(r for r in mine if r["rows"] == r["capacity"])
        live = next(r for r in mine if r["rows"] == r["live"])
        up = min((r for r in mine if cap["rows"] <= r["rows"] <= 1.15 * cap["rows"]), key=lambda r: r["us"])
        lines.append(f"layer {key[0]} {key[1]:<17} capacity {cap['rows']:>6} rows {cap['us']:7.1f} us "
                     f"[{cap['kernel'][:40]}]  best at or above: {up['rows']:>6} rows {up['us']:7.1f} us "
                     f"[{up['kernel'][:40]}]  live {live['rows']:>6} rows {live['us']:7.1f} us")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="append", required=True, help="a zerognn run record (repeatable)")
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("gemm_rows_sweep: needs a CUDA GPU")
    result = {}
    for path in args.record:
        record = json.loads(Path(path).read_text())
        rows = [r for shape in layer_shapes(record) for r in sweep(shape, args.calls, args.repeats)]
        result[record["run_id"]] = rows
        print(f"== {record['run_id']}")
        print("\n".join(summary(rows)), flush=True)  # every row count's time and kernel: in --json
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
