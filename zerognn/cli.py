"""The ``zerognn`` command line: the one entry point Snakemake rules (and users) call.

Subcommands: ``dataset make|info``, ``run``, ``summarize``, ``provenance``, ``figures``, ``build``,
``bench-ops``, ``variants``, ``env``. Every argument is checked, and every output path proved writable, before any
work starts. Errors caused by input are printed as one line naming the problem and the fix (exit
status 2), argument errors included.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import NoReturn

from .errors import ZeroGNNError, missing_extra
from .outputs import check_writable_dir, check_writable_file
from .records import spec

USAGE_ERROR = 2
# The other subcommands' numeric options, checked (and refused in one line) as zerognn run's are.
POSITIVE_INT = spec.argument_type(spec.POSITIVE_INT)
NON_NEGATIVE_INT = spec.argument_type(spec.NON_NEGATIVE_INT)
POSITIVE_NUMBER = spec.argument_type(spec.POSITIVE_NUMBER)


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (usage is one ``--help`` away)."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}; see `{self.prog} --help`\n")


def _cmd_dataset_make(args: argparse.Namespace) -> None:
    from .datasets import make_dataset

    check_writable_dir(args.out, "dataset directory --out")
    ds = make_dataset(args.name, Path(args.out), scale=args.scale, seed=args.seed,
                      device=None if args.device == "auto" else args.device, ogb_root=args.ogb_root,
                      force=args.force, features_on="meta")
    print(f"{args.out}: {ds.name} with {ds.num_nodes:,} nodes, {ds.graph.num_edges:,} edges, "
          f"{ds.num_features} features, {ds.num_classes} classes")


def _cmd_dataset_info(args: argparse.Namespace) -> None:
    from .datasets import load_dataset

    ds = load_dataset(Path(args.dir), check=args.check, features_on="meta")
    print(json.dumps(ds.meta, indent=2))
    if args.check:  # on stderr: stdout stays the metadata's JSON
        print(f"zerognn: {args.dir}: check passed (structure, and every feature and label value)", file=sys.stderr)


def _cmd_run(args: argparse.Namespace) -> None:
    from .measure.phases import PhaseClock

    clock = PhaseClock()  # its "start": the interpreter and the command line's imports (torch, for the choices)
    with clock.phase("imports"):
        import torch

        from .train import run

    if args.threads is not None:
        torch.set_num_threads(args.threads)

    run_spec = spec.RunSpec.from_arguments(args)
    out = check_writable_file(record_path(args.out, run_spec.key.run_id), "run record --out")
    if args.trace is not None:
        check_writable_file(args.trace, "profiler trace --trace")
    run(run_spec, args.dataset_dir, out, trace_path=args.trace, clock=clock)


def record_path(out: str, run_id: str) -> Path:
    """Where ``zerognn run --out OUT`` writes: ``OUT/<run_id>.json`` for a directory (one that exists, or
    a path ending in '/'), else OUT itself, which must then be named ``<run_id>.json``: the summary and the
    pipeline read a record by that name, and refuse one named otherwise."""
    path = Path(out)
    if out.endswith(("/", os.sep)) or path.is_dir():
        return path / f"{run_id}.json"
    if path.name != f"{run_id}.json":
        raise ZeroGNNError(f"run record --out {out}: a record's file is named after its run; give "
                           f"--out {path.parent / f'{run_id}.json'} or the directory --out {path.parent}/")
    return path


def _cmd_summarize(args: argparse.Namespace) -> None:
    from .records.summary import summarize, unstable

    check_writable_file(args.out, "summary --out")
    if args.markdown:
        check_writable_file(args.markdown, "summary --markdown")
    if args.figures:
        check_writable_file(args.figures, "supported-figures list --figures")
    df = summarize(Path(args.runs), Path(args.out), allow_mixed_provenance=args.allow_mixed_provenance)
    print(f"{args.out}: {len(df)} configurations from {int(df['trials'].sum())} run records (trials)")
    for row in unstable(df).itertuples():
        print(f"unstable: {row.run_id}: between-trial CV {100 * row.step_ms_cv:.1f} % over {row.trials} trials "
              f"(10 % or more: its interval, not its median, is the result)")
    for row in df[df["convergence_flag"].notna()].itertuples():
        print(f"converges differently: {row.run_id}: {row.convergence_flag} (not the same training)")
    if args.markdown:
        from .atomic import write_text
        from .records.table import markdown_table

        write_text(args.markdown, markdown_table(df))
        print(f"{args.markdown}: the same as a markdown table")
    if args.figures:
        from .figures.data import FigureData
        from .figures.files import write_supported
        from .figures.needs import supported_figures

        reasons = supported_figures(FigureData.load(Path(args.out), Path(args.runs)))
        write_supported(args.figures, reasons)
        supported = [name for name, reason in reasons.items() if reason is None]
        print(f"{args.figures}: the records support {len(supported)} of {len(reasons)} figures: {', '.join(supported)}")


def _cmd_provenance(args: argparse.Namespace) -> None:
    from .records.provenance import check_provenance
    from .records.schema import iter_records

    report = check_provenance(iter_records(Path(args.runs)), Path(args.repo))
    print(f"{args.runs}: {len(report.verified)} record(s) ran exactly their commit's source files")
    for run_id, why in report.unverified.items():
        print(f"unverified: {run_id}: {why}")


def _cmd_figures(args: argparse.Namespace) -> None:
    from .atomic import write_text

    check_writable_dir(args.out, "figures directory --out")
    if args.manifest:
        check_writable_file(args.manifest, "manifest --manifest")
    if args.supported:
        if not args.manifest or args.only:
            raise ZeroGNNError("--supported draws nothing: it needs --manifest FILE to write, and no --only")
        from .figures.files import manifest_files

        files = manifest_files(Path(args.supported), Path(args.out))
    else:
        try:
            from .figures.render import render_all
        except ImportError as exc:
            raise missing_extra("figures", "drawing figures", exc) from exc

        files = render_all(Path(args.summary), Path(args.runs), Path(args.out), only=args.only, size=args.size)
    listing = "".join(f"{path}\n" for path in files)
    print(listing, end="")
    if args.manifest:
        write_text(args.manifest, listing)


def _cmd_build(args: argparse.Namespace) -> None:
    from .atomic import write_json
    from .cuda.build import build_all

    if args.out:
        check_writable_file(args.out, "build summary --out")
    arch = args.arch
    if arch == "auto":
        import torch

        arch = "sm_{}{}".format(*torch.cuda.get_device_capability()) if torch.cuda.is_available() else "sm_90"
    sizes = build_all(arch)
    for name, size in sizes.items():
        print(f"{name:<22} {arch}  {size:>8} bytes")
    if args.out:
        write_json(args.out, {"arch": arch, "cubin_bytes": sizes})


def _cmd_bench_ops(args: argparse.Namespace) -> None:
    import torch

    from .bench.ops import bench_ops, copy_ceiling_gbps, format_table
    from .bench.padding import bench_gemm_padding, format_padding
    from .datasets import load_dataset
    from .fixed_launch.envelope import calibrate
    from .records.spec import parse_fanouts

    fanouts = parse_fanouts(args.fanouts)
    if not torch.cuda.is_available():
        raise ZeroGNNError("bench-ops times CUDA operators and needs a CUDA GPU")
    from .measure.environment import collect_environment

    env = collect_environment("cuda")
    # Every results file names what produced it: the commit (and where that came from) and the machine.
    print(f"# zerognn bench-ops, commit {env['git_commit']} ({env['git_source']}, dirty {env['git_dirty']}), "
          f"source {str(env['source_sha256'])[:12]}; {env['gpu_name']}, driver {env['driver_version']}, torch "
          f"{env['torch']}, CUDA {env['cuda']}, boot {env['boot_id']}, {env['utc_time']}")
    ds = load_dataset(Path(args.dataset_dir)).to("cuda")
    ceiling = copy_ceiling_gbps()
    results = bench_ops(ds, args.batch_size, fanouts, hidden=args.hidden)
    print(f"{ds.name}, batch {args.batch_size}, fanouts {args.fanouts}; device copy ceiling {ceiling:.0f} GB/s")
    print(format_table(results, ceiling))
    envelope = calibrate(ds.graph, ds.train_idx, args.batch_size, fanouts, seed=0)
    print(f"\ndense layers over the calibrated envelope {list(envelope.frontier_capacity)} vs exact sizes (SAGE)")
    print(format_padding(bench_gemm_padding(ds, envelope, args.hidden, ds.num_classes)))


def _cmd_variants(args: argparse.Namespace) -> None:
    from .variants import runnable_here, study_variants

    rows = [
        {"name": name, "requires_cuda": cls.requires_cuda, "runnable_here": runnable_here(cls),
         "experimental": cls.experimental, "models": None if cls.models is None else list(cls.models),
         "description": cls.description}
        for name, cls in sorted(study_variants(args.variant_module).items())
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        names = max((len(r["name"]) for r in rows), default=0) + 2
        for r in rows:
            where = "runnable here" if r["runnable_here"] else "needs a CUDA GPU"
            tag = "experimental: " if r["experimental"] else ""
            only = "" if r["models"] is None else f" ({', '.join(r['models'])} only)"
            print(f"{r['name']:<{names}}{where:<18}{tag}{r['description']}{only}")


def _cmd_env(args: argparse.Namespace) -> None:
    import torch

    from .measure.environment import collect_environment

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(json.dumps(collect_environment(device), indent=2))


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="zerognn", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    ds = sub.add_parser("dataset", help="make or inspect datasets").add_subparsers(
        dest="dataset_command", required=True, parser_class=_Parser)
    make = ds.add_parser("make", help="generate a synthetic stand-in or convert an OGB dataset")
    make.add_argument("name", help="tiny, arxiv-like, products-like, papers100M-like, ogbn-arxiv, ogbn-products, "
                                   "ogbn-papers100M")
    make.add_argument("--out", required=True,
                      help="dataset directory to write: new, empty, or (with --force) a dataset")
    make.add_argument("--force", action="store_true",
                      help="replace the dataset --out already holds (never other files)")
    make.add_argument("--scale", type=POSITIVE_NUMBER, default=1.0,
                      help="size multiplier for synthetic graphs (default 1.0)")
    make.add_argument("--seed", type=NON_NEGATIVE_INT, default=0)
    make.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                      help="where to generate (default: the GPU if present)")
    make.add_argument("--ogb-root", default="data/ogb", help="where ogb keeps (or downloads) its raw files")
    make.set_defaults(func=_cmd_dataset_make)
    info = ds.add_parser("info", help="print a dataset directory's metadata")
    info.add_argument("dir")
    info.add_argument("--check", action="store_true",
                      help="also scan every value (NaN/Inf features, O(N*F + E)); the structure is always checked")
    info.set_defaults(func=_cmd_dataset_info)

    r = sub.add_parser("run", help="train one configuration and write its run record")
    spec.RunSpec.add_arguments(r)  # one option per RunSpec field
    r.add_argument("--dataset-dir", required=True)
    r.add_argument("--threads", type=POSITIVE_INT, default=None,
                   help="CPU threads for PyTorch (default: PyTorch's choice)")
    r.add_argument("--trace", default=None, help="also keep the profiler trace here (.json.gz)")
    r.add_argument("--out", required=True, metavar="PATH",
                   help="where the run record goes: a directory (the file is <run id>.json in it) or that file's "
                        "path (JSON, written atomically)")
    r.set_defaults(func=_cmd_run)

    s = sub.add_parser("summarize", help="write the summary table (one row per configuration, its trials "
                                         "aggregated)")
    s.add_argument("--runs", default="results/runs")
    s.add_argument("--out", default="results/summary.csv")
    s.add_argument("--markdown", default=None, help="also write the summary as a markdown table here")
    s.add_argument("--figures", default=None, metavar="FILE",
                   help="also write which figures the records support here (JSON: figure -> null, or why not)")
    s.add_argument("--allow-mixed-provenance", action="store_true",
                   help="summarise comparison groups whose records come from several commits or machines (a "
                        "study across machines); refused otherwise")
    s.set_defaults(func=_cmd_summarize)

    pv = sub.add_parser("provenance", help="check each record's source files against the commit it names")
    pv.add_argument("--runs", default="results/runs")
    pv.add_argument("--repo", default=".", help="the git repository that holds the commits (default: here)")
    pv.set_defaults(func=_cmd_provenance)

    f = sub.add_parser("figures", help="render every figure the records support (PNG and PDF)")
    f.add_argument("--summary", default="results/summary.csv")
    f.add_argument("--runs", default="results/runs")
    f.add_argument("--out", default="figures")
    f.add_argument("--manifest", default=None, help="also list the written files in this file")
    f.add_argument("--size", choices=["overview", "page", "column"], default="overview",
                   help="overview (default), or a paper's page (7 in wide) or column (3.3 in wide)")
    f.add_argument("--only", action="append", default=None, metavar="FIGURE",
                   help="render only this figure (repeatable); an error if the records cannot support it")
    f.add_argument("--supported", default=None, metavar="FILE",
                   help="render nothing: list in --manifest the files (which must exist) of the figures this "
                        "list (`zerognn summarize --figures`) supports, and remove those of the other figures")
    f.set_defaults(func=_cmd_figures)

    b = sub.add_parser("build", help="compile every CUDA operator in kernels/ with NVRTC (no GPU needed)")
    b.add_argument("--arch", default="auto", help="e.g. sm_90; auto: this GPU's, or sm_90 without one")
    b.add_argument("--out", default=None, help="also write the build summary (JSON) here")
    b.set_defaults(func=_cmd_build)

    o = sub.add_parser("bench-ops", help="time each CUDA operator against its bytes-moved floor (GPU)")
    o.add_argument("--dataset-dir", required=True)
    o.add_argument("--batch-size", type=POSITIVE_INT, default=1024)
    o.add_argument("--fanouts", default="15,10,5")
    o.add_argument("--hidden", type=POSITIVE_INT, default=256)
    o.set_defaults(func=_cmd_bench_ops)

    v = sub.add_parser("variants", help="list the built-in execution variants and those of the modules named")
    v.add_argument("--json", action="store_true")
    v.add_argument("--variant-module", action="append", default=[],
                   help="a variant module (pkg.module or path/to/file.py) whose variants to list too; repeatable")
    v.set_defaults(func=_cmd_variants)

    e = sub.add_parser("env", help="print the environment a run record would store")
    e.set_defaults(func=_cmd_env)
    return p


def main(argv: list[str] | None = None) -> int:
    import logging

    from .lifetime import end_cleanly

    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, or a bad argument already reported on one line
        return exc.code if isinstance(exc.code, int) else USAGE_ERROR
    end_cleanly()
    # Progress of long work (dataset builds) is logged by zerognn's modules at INFO; other libraries
    # keep the default WARNING level.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s: %(message)s"))
    package_logger = logging.getLogger("zerognn")
    package_logger.setLevel(logging.INFO)
    if not package_logger.handlers:
        package_logger.addHandler(handler)
    try:
        args.func(args)
    except ZeroGNNError as exc:
        print(f"zerognn: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print("zerognn: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`zerognn dataset info DIR | head`): not an error of ours
        with contextlib.suppress(OSError, ValueError, AttributeError):  # no second error at exit's flush
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
