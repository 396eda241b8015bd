import json

import pytest
from matplotlib.text import Text

from tests.records.factory import make_record, write_records
from zerognn.catalog import BUILTIN_NAMES
from zerognn.errors import ZeroGNNError
from zerognn.figures import FIGURES, render_all
from zerognn.figures.data import FigureData, Skip
from zerognn.figures.draw import theme
from zerognn.figures.style import variant_styles
from zerognn.records import summarize

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
    return records


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


def test_pdfs_embed_truetype_fonts_not_type3(tmp_path):
    runs, summary = _setup(tmp_path, _rich_records())
    written = render_all(summary, runs, tmp_path / "fig", formats=("pdf",), only=["speedup", "loss"])
    for pdf in written:
        data = pdf.read_bytes()
        assert b"/Subtype /Type3" not in data, pdf
        assert b"/Subtype /TrueType" in data or b"/CIDFontType2" in data, pdf


def test_rich_runs_draw_every_figure_with_the_unknown_variant(tmp_path, capsys):
    runs, summary = _setup(tmp_path, _rich_records())
    written = render_all(summary, runs, tmp_path / "fig", formats=("png",))
    assert sorted(p.stem for p in written) == sorted(ALL)
    assert "skipped" not in capsys.readouterr().out

    data = FigureData.load(summary, runs)
    for name, draw in FIGURES.items():
        fig = draw(data)
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
    assert "ideal (exact sizes)" in {t.get_text() for t in FIGURES["memory"](data).legends[0].get_texts()}


@pytest.mark.parametrize("size, width", [("overview", None), ("page", 7.0), ("column", 3.3)])
def test_figures_have_readable_text_and_no_overlapping_tick_labels(tmp_path, size, width):
    runs, summary = _setup(tmp_path, _rich_records())
    data = FigureData.load(summary, runs)
    for name, draw in FIGURES.items():
        with theme(size):
            fig = draw(data)
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


def test_summary_alone_draws_the_summary_figures(tmp_path, capsys):
    runs, summary = _setup(tmp_path, _rich_records())
    written = render_all(summary, None, tmp_path / "fig", formats=("png",))
    record_figures = {"breakdown", "envelope", "loss"}
    assert {p.stem for p in written} == ALL - record_figures
    out = capsys.readouterr().out
    assert all(f"skipped {name}: no run records" in out for name in record_figures)
    with pytest.raises(ZeroGNNError, match="does not exist"):
        render_all(summary, tmp_path / "missing", tmp_path / "fig")


def test_memory_ideal_from_the_runs_own_estimate(tmp_path):
    no_ideal = [_gpu("zerognn"), _gpu("my-baseline")]
    with pytest.raises(Skip, match="no ideal"):
        FIGURES["memory"](FigureData.load(_setup(tmp_path / "a", no_ideal)[1], None))
    estimated = [_gpu("zerognn", variant_info={"ideal_peak_mem_bytes": 2**29}), _gpu("my-baseline")]
    runs, summary = _setup(tmp_path / "b", estimated)
    fig = FIGURES["memory"](FigureData.load(summary, runs))
    ideal_lines = [c for c in fig.axes[0].collections if c.get_segments()]
    assert [seg[0][1] for c in ideal_lines for seg in c.get_segments()] == [0.5]


def test_one_figure_at_a_time_and_the_manifest_of_what_the_records_support(tmp_path):
    from zerognn.cli import main
    from zerognn.figures import figure_files, supported_figures

    runs, summary = _setup(tmp_path, _cpu_records())
    out = tmp_path / "fig"
    out.mkdir()
    supported = supported_figures(FigureData.load(summary, runs))
    assert {name for name, reason in supported.items() if reason is None} == {"batch_sweep", "breakdown", "loss"}
    assert "no host-mediated runs" in supported["speedup"]
    files = figure_files(summary, runs, out)
    assert sorted(f.name for f in files) == sorted(f"{n}.{f}" for n in ("batch_sweep", "breakdown", "loss")
                                                   for f in ("png", "pdf"))
    assert render_all(summary, runs, out, only=["loss"]) == [out / "loss.png", out / "loss.pdf"]
    with pytest.raises(ZeroGNNError, match="figure speedup cannot be drawn.*no host-mediated runs"):
        render_all(summary, runs, out, only=["speedup"])
    with pytest.raises(ZeroGNNError, match="unknown figure"):
        render_all(summary, runs, out, only=["nope"])

    args = ["figures", "--summary", str(summary), "--runs", str(runs), "--out", str(out), "--manifest-only",
            "--manifest", str(out / "manifest.txt")]
    assert main(args) == 2  # batch_sweep and breakdown are not drawn yet
    assert not (out / "manifest.txt").exists()
    render_all(summary, runs, out, only=["batch_sweep", "breakdown"])
    (out / "speedup.png").write_text("stale")  # an earlier render the records no longer support
    assert main(args) == 0
    assert (out / "manifest.txt").read_text().split() == [str(f) for f in files]
    assert not (out / "speedup.png").exists()


def _stale(tmp_path, change):
    """A summary and records that agreed, then ``change(runs, summary)``; the error of every entry point."""
    from zerognn.cli import main
    from zerognn.figures import figure_files

    runs, summary = _setup(tmp_path, _cpu_records())
    out = tmp_path / "fig"
    out.mkdir()
    change(runs, summary)
    messages = []
    for load in (lambda: render_all(summary, runs, out), lambda: figure_files(summary, runs, out),
                 lambda: FigureData.load(summary, runs)):
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
    assert f"run {RUN_256} has step_ms_median 10.5 there but 12.5 in its record" in message


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
