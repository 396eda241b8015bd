"""The dense GEMMs of one SAGE step, timed each way cuBLAS can run them: what algorithm choice, fused epilogues
and live row counts would buy the step, before any of it is built.

    python scripts/gemm_probe.py [--record R] [--json out.json]

Shapes: products-like SAGE (100 features, hidden 256, 47 classes, three layers) at the envelope of a
``zerognn`` record (default: the trials study's trial-1 record, B=1024): each layer's rows are its
destination frontier's provisioned capacity ("capacity") or its mean live count ("live"). Per layer, the
GEMMs of ``zerognn.models.dense``: forward (bias and, in hidden layers, ReLU), input gradient (not the
first layer's: features take none) and weight gradient with the bias gradient. Each is timed three ways:

* ``torch``: what the layer runs today: ``_addmm_activation``/``addmm``; ``g @ W``; ``g.t() @ x`` plus
  ``mv(g.t(), ones)`` for the bias gradient;
* ``lt``: cuBLASLt through nvmath-python, the heuristic's first algorithm, epilogues fused (RELU_BIAS or
  BIAS forward; BGRADA on the weight gradient: the bias gradient inside the GEMM);
* ``lt-tuned``: the same after nvmath's ``autotune`` over the heuristic's first ``--algorithms``;
* ``fixed`` (float32 only): the suite's own FFMA kernels (``kernels/dense_gemm.cu``, what deterministic runs
  use): how far a kernel of ours that could skip rows past a live count starts from cuBLAS.

at ``float32`` and ``tf32`` as ``zerognn.precision`` sets them for a run (COMPUTE_32F_FAST_TF32 for cuBLASLt
at tf32). Times are GPU time per
call: ``--calls`` calls queued behind a ``torch.cuda._sleep`` so the host's launch cost never shows, CUDA
events around them, the median of ``--repeats`` such batches. A way that cannot run a shape says why.

The ``lt`` ways need nvmath-python (``pip install nvmath-python``; a GPU host without network takes its wheel
in a ``.whl-*/`` directory beside the tree, which ``scripts/install_wheels.sh`` installs without its
dependencies: cuda-core and cuda-bindings are the project's own).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from zerognn import precision
from zerognn.measure.timing import queued_gpu_time_us

DEFAULT_RECORD = ("results/reference/h100/trials/runs/"
                  "products-like__sage__zerognn__b1024__f15-10-5__g1.json")


def layer_shapes(record: dict) -> list[dict]:
    """(rows at capacity, rows live, in width K, out width N, relu, input gradient) per SAGE layer."""
    hidden = record["config"]["hidden"]
    hops = record["variant_info"]["envelope"]["hops"]  # hop 1..L: frontier after each hop
    batch = record["config"]["batch_size"]
    capacity = [batch] + [h["provisioned"] for h in hops]
    live = [batch] + [h["live_mean"] for h in hops]
    features, classes, layers = record["dataset"]["num_features"], record["dataset"]["num_classes"], len(hops)
    shapes = []
    for i in range(layers):  # layer i + 1 maps frontier L - i (sources) to frontier L - i - 1 (destinations)
        dst = layers - i - 1
        width_in = features if i == 0 else hidden
        shapes.append({"layer": i + 1, "capacity": capacity[dst], "live": round(live[dst]), "K": 2 * width_in,
                       "N": classes if i == layers - 1 else hidden, "relu": i < layers - 1, "input_grad": i > 0})
    return shapes


def gpu_us(fn, calls: int, repeats: int) -> float:
    return queued_gpu_time_us(fn, calls, repeats, sleep_cycles=50_000_000)


def torch_ways(x, w, b, g, relu, input_grad, ones):
    ways = {"forward": (lambda: torch._addmm_activation(b, x, w.t())) if relu else (lambda: torch.addmm(b, x, w.t())),
            "weight+bias grad": lambda: (g.t() @ x, torch.mv(g.t(), ones))}
    if input_grad:
        ways["input grad"] = lambda: g @ w
    return ways


def lt_ways(x, w, b, g, relu, input_grad, tf32: bool, algorithms: int, tune: bool):
    import nvmath
    from nvmath.linalg.advanced import Matmul, MatmulEpilog

    options = {"compute_type": nvmath.linalg.ComputeType.COMPUTE_32F_FAST_TF32} if tf32 else None
    stream = torch.cuda.current_stream()
    # cuBLASLt's bias epilogue adds a vector along the result's first dimension: the forward is planned as its
    # transpose, (x @ w.T).T = w @ x.T, whose first dimension is the output width the bias runs along
    plans = {"forward": (Matmul(w, x.t(), options=options, stream=stream),
                         MatmulEpilog.RELU_BIAS if relu else MatmulEpilog.BIAS, {"bias": b}),
             "weight+bias grad": (Matmul(g.t(), x, options=options, stream=stream), MatmulEpilog.BGRADA, None)}
    if input_grad:
        plans["input grad"] = (Matmul(g, w, options=options, stream=stream), None, None)
    ways = {}
    for name, (mm, epilog, inputs) in plans.items():
        try:
            mm.plan(epilog=epilog, epilog_inputs=inputs, preferences={"limit": algorithms}, stream=stream)
            if tune:
                mm.autotune(iterations=10, stream=stream)
            ways[name] = (lambda mm=mm: mm.execute(stream=stream))
        except Exception as exc:  # noqa: BLE001 - a probe reports what cannot run and goes on
            ways[name] = f"n/a ({type(exc).__name__}: {str(exc).splitlines()[0][:80]})"
    return ways


def fixed_ways(x, w, b, g, relu, input_grad):
    from zerognn.cuda import dense_gemm

    ways = {"forward": lambda: dense_gemm.linear(x, w, b, relu),
            "weight+bias grad": lambda: dense_gemm.weight_and_bias_grad(g, x, True)}
    if input_grad:
        ways["input grad"] = lambda: dense_gemm.input_grad(g, w)
    return ways


PRECISIONS = ("float32", "tf32")  # of zerognn.precision.PRECISIONS: the fp32-storage ones


def time_ways(shape: dict, rows_kind: str, name: str, x, w, b, g, ones, args) -> list[dict]:
    """One row per GEMM of the layer: its time each way, at the precision now in effect."""
    ways = {"torch": torch_ways(x, w, b, g, shape["relu"], shape["input_grad"], ones)}
    tf32 = precision.PRECISIONS[name].tensor_core_gemms
    for tag, tune in (("lt", False), ("lt-tuned", True)):
        try:
            ways[tag] = lt_ways(x, w, b, g, shape["relu"], shape["input_grad"], tf32, args.algorithms, tune)
        except Exception as exc:  # noqa: BLE001 - e.g. nvmath-python missing
            ways[tag] = {gemm: f"n/a ({type(exc).__name__}: {exc})" for gemm in ways["torch"]}
    if not tf32:
        ways["fixed"] = fixed_ways(x, w, b, g, shape["relu"], shape["input_grad"])
    rows = []
    for gemm in ways["torch"]:
        row = {"layer": shape["layer"], "gemm": gemm, "rows": rows_kind, "M": shape[rows_kind], "K": shape["K"],
               "N": shape["N"], "precision": name}
        for tag, by_gemm in ways.items():
            fn = by_gemm[gemm]
            row[tag] = fn if isinstance(fn, str) else round(gpu_us(fn, args.calls, args.repeats), 2)
        rows.append(row)
        print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", default=DEFAULT_RECORD)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--algorithms", type=int, default=16)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("gemm_probe: needs a CUDA GPU")
    record = json.loads(Path(args.record).read_text())
    dev, rows_out = torch.device("cuda"), []
    gen = torch.Generator(device=dev).manual_seed(0)
    for shape in layer_shapes(record):
        for rows_kind in ("capacity", "live"):
            m, k, n = shape[rows_kind], shape["K"], shape["N"]
            x = torch.randn(m, k, device=dev, generator=gen)
            w = torch.randn(n, k, device=dev, generator=gen) / k ** 0.5
            b, g = torch.randn(n, device=dev, generator=gen), torch.randn(m, n, device=dev, generator=gen)
            ones = torch.ones(m, device=dev)
            for name in PRECISIONS:
                with precision.using(name):
                    rows_out += time_ways(shape, rows_kind, name, x, w, b, g, ones, args)
    for name in PRECISIONS:
        for rows_kind in ("capacity", "live"):
            picked = [r for r in rows_out if r["precision"] == name and r["rows"] == rows_kind]
            sums = {tag: sum(r[tag] for r in picked) if all(not isinstance(r.get(tag, ""), str) for r in picked)
                    else None for tag in ("torch", "lt", "lt-tuned", "fixed")}
            print(f"step total {name} {rows_kind}: " + "  ".join(
                f"{tag} {'n/a' if v is None else f'{v:.1f} us'}" for tag, v in sums.items()))
    if args.json:
        args.json.write_text(json.dumps(rows_out, indent=1))


if __name__ == "__main__":
    main()
