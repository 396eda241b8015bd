import json
import os

import pytest
from matplotlib.text import Text

from tests.records.factory import make_record, write_records
from zerognn.catalog import BUILTIN_NAMES
from zerognn.errors import ZeroGNNError
from zerognn.figures import FIGURES, supported_figures
from zerognn.figures.data import FigureData, Skip
from zerognn.figures.draw import theme
from zerognn.figures.files import figure_files
from zerognn.figures.render import draw_figure, render_all
from zerognn.figures.style import variant_styles
from zerognn.records.summary import summarize

from .to_target import trained

PHASES = {"sample": 3.0, "gather": 1.0, "forward": 2.0, "backward": 2.5, "optimizer": 0.5}
CLASSES = {"dense": 0.9, "sampling": 0.4, "aggregation": 0.3, "other": 0.1}
ALL = set(FIGURES)


def _cpu_records():
    return [
        make_record("torch-eager", batch_size=b, step_ms=(10.0 * k, 11.0 * k), phase_ms=PHASES)
        for b, k in ((256, 1), (1024, 2))
    ]


def _gpu(variant, batch_size=256, gpus=1, ms=10.0, **kw):
    return make_record(
        variant, dataset="arxiv-like", batch_size=batch_size, gpus=gpus, step_ms=(ms, ms * 1.1),
        device="cuda", gpu_name="NVIDIA H200", gpu_exec_fraction=min(1.0, 2.0 / ms),
        host_syncs_per_step=3.0, host_launches_per_step=300.0 / ms, peak_mem_bytes=int(2**30 * ms / 5),
        floor_ms=0.5 * batch_size / 256, gpu_activities_per_step=40.0, **kw,
    )


def _envelope(scale):
    return {"envelope": {"hops": [
        {"hop": h, "provisioned": int(live * scale), "live_max": live, "live_mean": live * 0.95}
        for h, live in ((1, 5000), (2, 31000), (3, 89000))
    ]}, "overflow_count": 0, "ideal_peak_mem_bytes": 2**30}


def _rich_records():
    records = []
    for b in (256, 1024):
        records += [
            _gpu("host-mediated", b, ms=10.0, phase_ms=PHASES, gpu_ms_by_class=CLASSES),
            _gpu("zerognn", b, ms=2.0, variant_info=_envelope(1.1), gpu_ms_by_class=CLASSES),
            _gpu("zerognn-worstcase", b, ms=30.0, variant_info=_envelope(12.0)),
            _gpu("my-baseline", b, ms=6.0, phase_ms={"sample": 1.0, "forward": 2.0, "comm": 0.5}),
            _gpu("torch-eager", b, ms=15.0, phase_ms=PHASES),
        ]
    records += [_gpu("zerognn", 1024, gpus=2, ms=2.2), _gpu("my-baseline", 1024, gpus=2, ms=7.0),
                _gpu("host-mediated", 1024, gpus=2, ms=11.0)]
    records += [_gpu("zerognn", 1024, ms=2.04, host_load=16, gpu_ms_by_class=CLASSES),
                _gpu("host-mediated", 1024, ms=16.0, host_load=16, gpu_ms_by_class=CLASSES)]
    records += [_gpu("zerognn", 1024, ms=1.5, dtype="tf32", gpu_ms_by_class=CLASSES),
                _gpu("host-mediated", 1024, ms=9.8, dtype="tf32", gpu_ms_by_class=CLASSES)]
    return [_to_target(r) for r in records + _repeats("host-mediated", 10.0) + _repeats("zerognn", 2.0)]


# The runs of the B=1024 group trained to the target (host-mediated's 10x slower; my-baseline never reached it):
# variant -> (training seconds, validation accuracy) by epochs 1 and 2.
TO_TARGET = {"host-mediated": ([20.0, 40.0], [0.55, 0.65]), "zerognn": ([2.0, 4.0], [0.56, 0.66]),
             "my-baseline": ([8.0, 16.0], [0.5, 0.55])}


def _to_target(record):
    c = record["config"]
    if c["variant"] in TO_TARGET and (c["batch_size"], c["gpus"], c["host_load"], c["dtype"]) == (1024, 1, 0,
                                                                                                    "float32"):
        times, accuracies = TO_TARGET[c["variant"]]
        trained(record, [t * (1 + 0.01 * c["trial"]) for t in times], accuracies)
    return record


def _repeats(variant, ms, trials=6):
    """Trials 2.. of ``variant`` at B=1024 (unprofiled, each a little off the first): 6 in all give intervals."""
    return [_gpu(variant, 1024, ms=ms * (1 + 0.01 * (3 * t % 7)), trial=t) for t in range(2, trials + 1)]


def _setup(tmp_path, records):
    runs, summary = tmp_path / "runs", tmp_path / "summary.csv"
    write_records(runs, records)
    summarize(runs, summary)
    return runs, summary


def test_cpu_only_runs_draw_what_they_can_and_say_why_not(tmp_path, capsys):
    runs, summary = _setup(tmp_path, _cpu_records())
    out = tmp_path / "fig"
    out.mkdir()
    (out / "speedup.png").write_text("stale")

    written = render_all(summary, runs, out)

    drawn = {"batch_sweep", "breakdown", "loss"}
    assert sorted(p.name for p in written) == sorted(f"{n}.{f}" for n in drawn for f in ("png", "pdf"))
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in written)
    assert all(p.stat().st_size > 1000 for p in written)
    skipped = {
        line.split(":")[0].removeprefix("skipped "): line.split(": ", 1)[1]
        for line in capsys.readouterr().out.splitlines() if line.startswith("skipped ")
    }
    assert set(skipped) == ALL - drawn
    assert "no host-mediated runs" in skipped["speedup"]
    assert "gpu_exec_fraction is empty" in skipped["gpu_exec_fraction"]
    assert "step_over_floor is empty" in skipped["step_over_floor"]
    assert "peak_mem_bytes is empty" in skipped["memory"]
    assert "2 or more GPU counts" in skipped["scaling"]
    assert "variant_info.envelope" in skipped["envelope"]
    assert "needs 2 or more trials of a configuration" in skipped["trials"]


def test_pdfs_embed_truetype_fonts_not_type3(tmp_path):
    runs, summary = _setup(tmp_path, _rich_records())
    written = render_all(summary, runs, tmp_path / "fig", formats=("pdf",), only=["speedup", "loss"])
    for pdf in written:
        data = pdf.read_bytes()
        assert b"/Subtype /Type3" not in data, pdf
        assert b"/Subtype /TrueType" in data or b"/CIDFontType2" in data, pdf


def test_the_same_records_draw_the_same_bytes(tmp_path):
    """No creation date in a PDF: re-rendering committed figures leaves git clean."""
    runs, summary = _setup(tmp_path, _rich_records())
    first = render_all(summary, runs, tmp_path / "a", formats=("pdf", "png"), only=["speedup"])
    second = render_all(summary, runs, tmp_path / "b", formats=("pdf", "png"), only=["speedup"])
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    assert all(b"CreationDate" not in p.read_bytes() for p in first if p.suffix == ".pdf")


def test_rich_runs_draw_every_figure_with_the_unknown_variant(tmp_path, capsys):
    runs, summary = _setup(tmp_path, _rich_records())
    written = render_all(summary, runs, tmp_path / "fig", formats=("png",))
    assert sorted(p.stem for p in written) == sorted(ALL)
    assert "skipped" not in capsys.readouterr().out

    data = FigureData.load(summary, runs)
    for name in FIGURES:
        fig = draw_figure(name, data)
        labels = {t.get_text() for legend in fig.legends for t in legend.get_texts()}
        ticks = {t.get_text() for ax in fig.axes for t in ax.get_xticklabels() + ax.get_yticklabels()}
        if name == "breakdown":  # by kernel class, for the runs that have it
            assert {"zerognn", "host-mediated"} <= ticks and "my-baseline" not in ticks
            assert labels >= {"sampling", "aggregation", "dense", "other", "GPU idle"} and "sample" not in labels
            assert "9 run(s) without per-class GPU time left out" in " ".join(fig.get_suptitle().split())
        elif name == "envelope":
            assert {"zerognn", "zerognn-worstcase"} == labels
        elif name == "loss":  # drawn against host-mediated, which is the zero line, not a curve
            assert {"my-baseline", "zerognn"} <= labels and "host-mediated" not in labels
            curves = [line.get_ydata() for ax in fig.axes for line in ax.get_lines() if len(line.get_ydata()) > 2]
            assert curves and all(abs(v) < 1e-12 for curve in curves for v in curve)  # the same losses
        else:
            assert {"my-baseline", "zerognn", "host-mediated"} <= labels, name
        assert fig.get_suptitle()
        for ax in fig.axes:
            if ax.get_visible():
                assert ax.get_xlabel() and ax.get_ylabel(), name
    assert "ideal (exact sizes)" in {t.get_text() for t in draw_figure("memory", data).legends[0].get_texts()}


@pytest.mark.parametrize("size, width", [("overview", None), ("page", 7.0), ("column", 3.3)])
def test_figures_have_readable_text_and_no_overlapping_tick_labels(tmp_path, size, width):
    runs, summary = _setup(tmp_path, _rich_records())
    data = FigureData.load(summary, runs)
    for name in FIGURES:
        with theme(size):
            fig = draw_figure(name, data)
            fig.canvas.draw()
        if width is not None:
            assert fig.get_figwidth() == pytest.approx(width), name
        renderer = fig.canvas.get_renderer()
        texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
        assert texts and min(t.get_fontsize() for t in texts) >= 7, name  # points, at the figure's size
        for ax in (a for a in fig.axes if a.get_visible()):
            for labels in (ax.get_xticklabels(), ax.get_yticklabels()):
                boxes = [t.get_window_extent(renderer) for t in labels if t.get_visible() and t.get_text()]
                overlapping = [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if a.overlaps(b)]
                assert not overlapping, (name, ax.get_title(), [t.get_text() for t in labels])


def test_unknown_variants_get_looks_of_their_own():
    styles = variant_styles([*BUILTIN_NAMES, "my-baseline", "another"])
    looks = [(s.hatch, s.marker, s.dashes) for s in styles.values()]
    for i in range(3):
        assert len({look[i] for look in looks}) == len(looks)
    assert list(styles)[-2:] == ["another", "my-baseline"]


def _peer_records():
    peer = {"peer": "torch_geometric 2.8.1", "sample_identical": True}
    other = {"peer": "pylibwholegraph 26.10.0", "sample_identical": False}
    return [r for b in (256, 1024) for r in (_gpu("host-mediated", b, ms=10.0), _gpu("zerognn", b, ms=2.0),
                                              _gpu("pyg", b, ms=12.0, variant_info=peer),
                                              _gpu("wholegraph", b, ms=9.0, variant_info=other))]


def test_a_peer_is_drawn_with_a_look_of_its_own_and_a_label_naming_its_library(tmp_path):
    runs, summary = _setup(tmp_path, _peer_records())
    data = FigureData.load(summary, runs)
    labels = {t.get_text().replace("\n", " ") for legend in draw_figure("speedup", data).legends
              for t in legend.get_texts()}
    assert labels >= {"pyg (peer: torch_geometric 2.8.1)", "wholegraph (peer: pylibwholegraph 26.10.0, other samples)",
                      "zerognn", "host-mediated"}
    assert data.styles["pyg"].marker not in {data.styles[v].marker for v in ("zerognn", "host-mediated")}
    alone = FigureData.load(summary, None)  # a summary alone holds no variant_info: the plain name
    assert {t.get_text() for t in draw_figure("speedup", alone).legends[0].get_texts()} >= {"pyg"}


@pytest.mark.parametrize("size", ["overview", "page", "column"])
def test_a_legend_with_long_peer_labels_stays_inside_the_figure(tmp_path, size):
    # a peer's label (library, version, "other samples") is wider than a one-panel figure: it wraps, and the
    # columns are as many as the widest entry leaves room for
    runs, summary = _setup(tmp_path, _peer_records())
    data = FigureData.load(summary, runs)
    for name in ("speedup", "batch_sweep"):
        with theme(size):
            fig = draw_figure(name, data)
            fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        page = fig.bbox
        for legend in fig.legends:
            box = legend.get_window_extent(renderer)
            assert page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1, (name, size, box, page)
            assert page.y0 - 1 <= box.y0, (name, size, box, page)
            texts = [t.get_window_extent(renderer) for t in legend.get_texts()]
            assert all(page.x0 - 1 <= t.x0 and t.x1 <= page.x1 + 1 for t in texts), (name, size)
        axes = [ax.get_window_extent(renderer) for ax in fig.axes if ax.get_visible()]
        assert all(not ax.overlaps(legend.get_window_extent(renderer)) for ax in axes for legend in fig.legends)


def test_summary_alone_draws_the_summary_figures(tmp_path, capsys):
    runs, summary = _setup(tmp_path, _rich_records())
    written = render_all(summary, None, tmp_path / "fig", formats=("png",))
    record_figures = {"trials", "breakdown", "envelope", "loss", "time_to_accuracy"}
    assert {p.stem for p in written} == ALL - record_figures
    out = capsys.readouterr().out
    assert all(f"skipped {name}: no run records" in out for name in record_figures)
    with pytest.raises(ZeroGNNError, match="does not exist"):
        render_all(summary, tmp_path / "missing", tmp_path / "fig")


def test_memory_ideal_from_the_runs_own_estimate(tmp_path):
    no_ideal = [_gpu("zerognn"), _gpu("my-baseline")]
    with pytest.raises(Skip, match="no ideal"):
        draw_figure("memory", FigureData.load(_setup(tmp_path / "a", no_ideal)[1], None))
    estimated = [_gpu("zerognn", variant_info={"ideal_peak_mem_bytes": 2**29}), _gpu("my-baseline")]
    runs, summary = _setup(tmp_path / "b", estimated)
    fig = draw_figure("memory", FigureData.load(summary, runs))
    ideal_lines = [c for c in fig.axes[0].collections if c.get_segments()]
    assert [seg[0][1] for c in ideal_lines for seg in c.get_segments()] == [0.5]


def test_one_figure_at_a_time_and_the_manifest_of_what_the_records_support(tmp_path):
    from zerognn.cli import main

    runs, summary = _setup(tmp_path, _cpu_records())
    out = tmp_path / "fig"
    out.mkdir()
    supported = supported_figures(FigureData.load(summary, runs))
    assert {name for name, reason in supported.items() if reason is None} == {"batch_sweep", "breakdown", "loss"}
    assert "no host-mediated runs" in supported["speedup"]
    files = figure_files(supported, out)
    assert sorted(f.name for f in files) == sorted(f"{n}.{f}" for n in ("batch_sweep", "breakdown", "loss")
                                                   for f in ("png", "pdf"))
    assert render_all(summary, runs, out, only=["loss"]) == [out / "loss.png", out / "loss.pdf"]
    with pytest.raises(ZeroGNNError, match="figure speedup cannot be drawn.*no host-mediated runs"):
        render_all(summary, runs, out, only=["speedup"])
    with pytest.raises(ZeroGNNError, match="unknown figure"):
        render_all(summary, runs, out, only=["nope"])

    listed = tmp_path / "figures.json"
    assert main(["summarize", "--runs", str(runs), "--out", str(summary), "--figures", str(listed)]) == 0
    assert list(json.loads(listed.read_text()).items()) == list(supported.items())  # every figure, in order
    args = ["figures", "--supported", str(listed), "--out", str(out), "--manifest", str(out / "manifest.txt")]
    assert main(args) == 2  # batch_sweep and breakdown are not drawn yet
    assert not (out / "manifest.txt").exists()
    render_all(summary, runs, out, only=["batch_sweep", "breakdown"])
    (out / "speedup.png").write_text("stale")  # an earlier render the records no longer support
    (out / "speedup.svg").write_text("not a format the figures are written in")
    (out / "notes.txt").write_text("not a figure")
    stamps = {f: f.stat().st_mtime_ns for f in files}
    assert main(args) == 0
    assert (out / "manifest.txt").read_text().split() == [str(f) for f in files]
    assert {f: f.stat().st_mtime_ns for f in files} == stamps  # nothing drawn again
    assert not (out / "speedup.png").exists()
    assert (out / "speedup.svg").exists() and (out / "notes.txt").exists()
    assert main(args[:-2]) == 2  # a list of supported figures without a manifest to write is a mistake


@pytest.mark.parametrize("content, said", [
    (None, "does not exist"),
    ("{", "cannot read"),
    ('{"speedup": null}', "does not map each of speedup, trials, time_to_target, gpu_exec_fraction"),
    ('["speedup"]', "does not map each"),
])
def test_a_missing_or_damaged_supported_list_is_one_line_saying_how_to_rebuild_it(tmp_path, content, said):
    from zerognn.figures.files import read_supported

    listed = tmp_path / "figures.json"
    if content is not None:
        listed.write_text(content)
    with pytest.raises(ZeroGNNError, match=said) as e:
        read_supported(listed)
    assert f"zerognn summarize --runs RUNS_DIR --out SUMMARY --figures {listed}" in str(e.value)
    assert "\n" not in str(e.value)


def _flat_envelope():
    return {"envelope": {"hops": [{"hop": 1, "provisioned": 64, "live_max": 0, "live_mean": 0.0}]}}


# Record sets that between them draw and skip every figure: (records, whether the records are at hand).
CASES = {
    "cpu": (_cpu_records, True),
    "rich": (_rich_records, True),
    "rich summary alone": (_rich_records, False),
    "gpu, one batch size, no baseline": (lambda: [_gpu("zerognn", variant_info=_envelope(1.1)), _gpu("my-baseline")],
                                         True),
    "no phases, losses or live nodes": (lambda: [make_record("zerognn", variant_info=_flat_envelope(), losses=[]),
                                                 make_record("zerognn", batch_size=512, losses=[])], True),
}


def _skipped(out: str) -> dict[str, str]:
    lines = [line.removeprefix("skipped ") for line in out.splitlines() if line.startswith("skipped ")]
    return dict(line.split(": ", 1) for line in lines)


def test_each_figures_check_agrees_with_its_drawing(tmp_path, capsys):
    """A figure its check accepts draws; one it rejects is skipped with the check's reason, word for word."""
    from zerognn.figures.render import DRAW

    assert tuple(DRAW) == FIGURES
    drawn, skipped = set(), set()
    for i, (case, (records, with_runs)) in enumerate(CASES.items()):
        runs, summary = _setup(tmp_path / str(i), records())
        runs = runs if with_runs else None
        reasons = supported_figures(FigureData.load(summary, runs))
        assert list(reasons) == list(FIGURES), case
        capsys.readouterr()
        written = render_all(summary, runs, tmp_path / str(i) / "fig", formats=("png",))
        assert [p.stem for p in written] == [n for n, r in reasons.items() if r is None], case
        assert _skipped(capsys.readouterr().out) == {n: r for n, r in reasons.items() if r is not None}, case
        data = FigureData.load(summary, runs)
        for name, reason in reasons.items():
            if reason is not None:
                with pytest.raises(Skip) as e:
                    draw_figure(name, data)
                assert str(e.value) == reason, (case, name)
        drawn |= {n for n, r in reasons.items() if r is None}
        skipped |= {n for n, r in reasons.items() if r is not None}
    assert drawn == skipped == ALL  # every figure both drawn and skipped by one of the cases


def test_checking_and_listing_the_figures_loads_no_plotting_library(tmp_path):
    """`zerognn summarize --figures` and `zerognn figures --supported` work where matplotlib and seaborn
    cannot be imported (the core install, or the workflow planning its figure jobs)."""
    import subprocess
    import sys

    runs, summary = _setup(tmp_path, _cpu_records())
    stubs = tmp_path / "stubs"
    for name in ("matplotlib", "seaborn"):
        (stubs / name).mkdir(parents=True)
        (stubs / name / "__init__.py").write_text(f"raise ImportError('no {name} here')\n")
    out, listed = tmp_path / "fig", tmp_path / "figures.json"
    script = f"""
import sys
from zerognn.cli import main
from zerognn.figures.files import figure_files, read_supported
assert main(["summarize", "--runs", {str(runs)!r}, "--out", {str(summary)!r}, "--figures", {str(listed)!r}]) == 0
for f in figure_files(read_supported({str(listed)!r}), {str(out)!r}):
    f.parent.mkdir(exist_ok=True)
    f.write_text("drawn before")
assert main(["figures", "--supported", {str(listed)!r}, "--out", {str(out)!r},
             "--manifest", {str(out / "manifest.txt")!r}]) == 0
assert not {{"matplotlib", "seaborn"}} & set(sys.modules), sorted(sys.modules)
assert main(["figures", "--summary", {str(summary)!r}, "--runs", {str(runs)!r}, "--out", {str(out)!r}]) == 2
"""
    env = {**os.environ, "PYTHONPATH": str(stubs)}
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(listed.read_text())["loss"] is None
    assert len((out / "manifest.txt").read_text().split()) == 6
    assert "pip install 'zerognn[figures]'" in result.stderr  # drawing itself does need them


def _stale(tmp_path, change):
    """A summary and records that agreed, then ``change(runs, summary)``; the error of every entry point."""
    from zerognn.cli import main

    runs, summary = _setup(tmp_path, _cpu_records())
    out = tmp_path / "fig"
    out.mkdir()
    change(runs, summary)
    messages = []
    for load in (lambda: render_all(summary, runs, out), lambda: FigureData.load(summary, runs)):
        with pytest.raises(ZeroGNNError) as e:
            load()
        messages.append(str(e.value))
    assert len(set(messages)) == 1 and "\n" not in messages[0]
    assert list(out.iterdir()) == []  # nothing drawn
    assert main(["figures", "--summary", str(summary), "--runs", str(runs), "--out", str(out)]) == 2
    return messages[0]


RUN_256 = "tiny__sage__torch-eager__b256__f15-10-5__g1"


def test_figures_refuse_a_summary_naming_a_deleted_record(tmp_path):
    message = _stale(tmp_path, lambda runs, summary: (runs / f"{RUN_256}.json").unlink())
    assert f"summary {tmp_path / 'summary.csv'} is out of date: it names run {RUN_256} whose record is missing " \
           f"from {tmp_path / 'runs'}" in message
    assert f"zerognn summarize --runs {tmp_path / 'runs'} --out {tmp_path / 'summary.csv'}" in message


def test_figures_refuse_a_record_added_after_the_summary(tmp_path):
    added = make_record("zerognn", step_ms=(5.0, 6.0), phase_ms=PHASES)
    message = _stale(tmp_path, lambda runs, summary: write_records(runs, [added]))
    assert f"record {added['run_id']} in {tmp_path / 'runs'} is not in summary {tmp_path / 'summary.csv'}; " \
           f"rebuild it with `zerognn summarize" in message


def test_figures_refuse_a_record_run_again_after_the_summary(tmp_path):
    again = make_record("torch-eager", step_ms=(12.0, 13.0), phase_ms=PHASES)
    message = _stale(tmp_path, lambda runs, summary: write_records(runs, [again]))
    assert f"run {RUN_256} has step_ms_median 10.5 there but its records in" in message and "give 12.5" in message


def test_figures_refuse_a_wrongly_named_record(tmp_path):
    message = _stale(tmp_path, lambda runs, summary: (runs / f"{RUN_256}.json").rename(runs / "old.json"))
    assert f"rename it to {RUN_256}.json" in message


def test_figures_refuse_a_record_that_contradicts_itself(tmp_path):
    def edit(runs, summary):
        path = runs / f"{RUN_256}.json"
        record = json.loads(path.read_text())
        record["metrics"]["seeds_per_s"] *= 2
        path.write_text(json.dumps(record))

    message = _stale(tmp_path, edit)
    assert "invalid run record: field 'metrics.seeds_per_s'" in message


@pytest.mark.parametrize("damage, said", [
    (lambda text: text[:-10], "is truncated"),
    (lambda text: text.split("\n", 1)[0] + "\n", "has a header but no rows"),
    (lambda text: "", "is empty"),
    (lambda text: text + text.rstrip("\n").rsplit("\n", 1)[1] + "\n", "twice"),
])
def test_figures_refuse_a_damaged_summary(tmp_path, damage, said):
    message = _stale(tmp_path, lambda runs, summary: summary.write_text(damage(summary.read_text())))
    assert said in message and "zerognn summarize" in message
    with pytest.raises(ZeroGNNError, match=said):  # with the summary alone as well
        render_all(tmp_path / "summary.csv", None, tmp_path / "fig")
