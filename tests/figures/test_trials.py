"""Figures over configurations repeated as trials: the trials figure, intervals on the speedup and step-time
figures, and the record figures drawing each configuration once."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from matplotlib.collections import LineCollection, PathCollection, PolyCollection

from tests.records.factory import make_record, write_records
from zerognn.figures import supported_figures
from zerognn.figures.data import FigureData, Skip
from zerognn.figures.draw import bar_whiskers, bars, new_figure, theme
from zerognn.figures.needs import NEEDS
from zerognn.figures.render import draw_figure
from zerognn.figures.style import variant_styles
from zerognn.records.ids import RunKey
from zerognn.records.summary import summarize

PHASES = {"sample": 3.0, "gather": 1.0, "forward": 2.0, "backward": 2.5, "optimizer": 0.5}
ONE_TRIAL = "needs 2 or more trials of a configuration (config key `trials`); every configuration here has one"


def _trials(variant, n, ms, batch_size=256, host_load=0, first=None, later=None, dtype="float32"):
    """``n`` trials of one GPU configuration, trial t's steps at ``ms`` times a factor a little off 1;
    ``first`` and ``later`` are make_record arguments for trial 1 and for the others."""
    return [
        make_record(variant, batch_size=batch_size, host_load=host_load, trial=t, device="cuda", dtype=dtype,
                    gpu_name="NVIDIA H200", step_ms=(_ms(ms, t), _ms(ms, t) * 1.2),
                    **((first or {}) if t == 1 else (later or {})))
        for t in range(1, n + 1)
    ]


def _ms(ms, trial):
    return ms * (1 + 0.02 * (5 * trial % 7))


def _data(tmp_path, records, with_runs=True):
    runs, summary = tmp_path / "runs", tmp_path / "summary.csv"
    write_records(runs, records)
    summarize(runs, summary)
    return FigureData.load(summary, runs if with_runs else None)


def _row(data, variant, batch_size=256, host_load=0):
    s = data.summary
    return s[(s["variant"] == variant) & (s["batch_size"] == batch_size) & (s["host_load"] == host_load)].iloc[0]


def _segments(ax, vertical):
    """The (x, low, high) of the vertical (else (y, left, right) of the horizontal) segments of ax's lines
    collections, sorted."""
    found = []
    for c in ax.collections:
        if isinstance(c, LineCollection):
            for (x0, y0), (x1, y1) in c.get_segments():
                if vertical and x0 == x1:
                    found.append((x0, min(y0, y1), max(y0, y1)))
                elif not vertical and y0 == y1:
                    found.append((y0, min(x0, x1), max(x0, x1)))
    return sorted(found)


def _spans(ax):
    """The low and high ends of ax's vertical segments, in x order, flat."""
    return _flat((lo, hi) for _, lo, hi in _segments(ax, vertical=True))


def _flat(pairs):
    return [v for pair in pairs for v in pair]


def _subtitle(fig):
    """The title's text after the title, without its last line (the commits of the records)."""
    return " ".join(fig.get_suptitle().rsplit("\n", 1)[0].split())


def test_the_trials_figure_draws_every_trial_beside_its_configurations_median_and_interval(tmp_path):
    data = _data(tmp_path, _trials("host-mediated", 6, 10.0) + _trials("zerognn", 3, 2.0)
                 + _trials("my-baseline", 1, 6.0))
    frame = NEEDS["trials"](data)
    assert len(frame) == 10 and frame.groupby("variant").size().to_dict() == {
        "host-mediated": 6, "zerognn": 3, "my-baseline": 1}
    base = _row(data, "host-mediated")
    assert base["trials"] == 6 and not math.isnan(base["step_ms_median_ci_low"])
    assert (frame.loc[frame["variant"] == "host-mediated", "configuration_ms"] == base["step_ms_median"]).all()

    with theme():
        fig = draw_figure("trials", data)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["host-mediated", "zerognn", "my-baseline"]
    assert ax.get_yscale() == "log"
    points = sorted(y for c in ax.collections if isinstance(c, PathCollection) for _, y in c.get_offsets())
    assert points == pytest.approx(sorted(frame["step_ms_median"]))
    medians = [y for y, _, _ in _segments(ax, vertical=False)]
    assert medians == pytest.approx(sorted(data.summary["step_ms_median"]))
    # Only host-mediated has 6 trials: the one interval, from its lowest to its highest trial.
    host_steps = frame.loc[frame["variant"] == "host-mediated", "step_ms_median"]
    assert _spans(ax) == pytest.approx([host_steps.min(), host_steps.max()])
    assert [lo for _, lo, _ in _segments(ax, vertical=True)] == pytest.approx([base["step_ms_median_ci_low"]])
    assert fig.get_suptitle().startswith("Every trial's median step")
    assert "one point per trial (a fresh process)" in _subtitle(fig)
    assert "95 % CI (order statistics; none where n < 6)" in _subtitle(fig)
    labels = {t.get_text() for t in fig.legends[0].get_texts()}
    assert {"host-mediated", "zerognn", "my-baseline", "median over trials"} <= labels


def test_the_trials_figure_is_skipped_with_one_trial_of_each_configuration(tmp_path):
    data = _data(tmp_path / "one", _trials("host-mediated", 1, 10.0) + _trials("zerognn", 1, 2.0))
    with pytest.raises(Skip) as e:
        NEEDS["trials"](data)
    assert str(e.value) == ONE_TRIAL
    assert supported_figures(data)["trials"] == ONE_TRIAL
    alone = _data(tmp_path / "alone", _trials("zerognn", 2, 2.0), with_runs=False)
    assert supported_figures(alone)["trials"] == "no run records (runs_dir not given or empty)"


def _speedup_whiskers(data):
    with theme():
        fig = draw_figure("speedup", data)
    return fig, _segments(fig.axes[0], vertical=True)


def test_speedup_whiskers_are_the_bootstrap_interval_and_absent_below_six_trials(tmp_path):
    one = _data(tmp_path / "one", _trials("host-mediated", 1, 10.0) + _trials("zerognn", 1, 2.0))
    fig, whiskers = _speedup_whiskers(one)
    assert whiskers == []
    assert "whiskers: 95 % CI over trials, bootstrap; none where n < 6" in _subtitle(fig)
    assert fig.axes[0].get_ylabel() == "speedup (×, log)"

    six = _data(tmp_path / "six", _trials("host-mediated", 6, 10.0) + _trials("zerognn", 6, 2.0)
                + _trials("my-baseline", 3, 6.0))
    _, whiskers = _speedup_whiskers(six)
    zerognn = _row(six, "zerognn")
    low, high = zerognn["speedup_vs_host_mediated_ci_low"], zerognn["speedup_vs_host_mediated_ci_high"]
    assert low < zerognn["speedup_vs_host_mediated"] < high
    # One whisker: zerognn's; none on host-mediated (itself) nor on my-baseline (3 trials).
    assert _flat((lo, hi) for _, lo, hi in whiskers) == pytest.approx([low, high])


def test_bar_whiskers_skip_bars_whose_interval_is_nan():
    df = pd.DataFrame({"variant": ["a", "a", "b"], "batch_size": [1, 2, 1], "y": [1.0, 2.0, 3.0],
                       "lo": [0.5, math.nan, 2.5], "hi": [1.5, 2.5, math.nan]})
    with theme():
        _, ((ax,),) = new_figure("t", 1)
        order = bars(ax, df, "batch_size", "y", variant_styles(df["variant"]))
        bar_whiskers(ax, df, "batch_size", "lo", "hi", order)
    assert _spans(ax) == [0.5, 1.5]


def _bands(ax):
    """The (low, high) y range of each shaded band, sorted."""
    ranges = []
    for c in ax.collections:
        if isinstance(c, PolyCollection):
            ys = [y for path in c.get_paths() for _, y in path.vertices]
            ranges.append((min(ys), max(ys)))
    return sorted(ranges)


def test_batch_sweep_shades_the_interval_and_keeps_whiskers_without_one(tmp_path):
    records = [r for b in (256, 1024) for r in _trials("zerognn", 6, 2.0 * b / 256, batch_size=b)
               + _trials("host-mediated", 2, 10.0 * b / 256, batch_size=b)]
    data = _data(tmp_path, records)
    with theme():
        fig = draw_figure("batch_sweep", data)
    ax_time = fig.axes[0]
    zerognn = [_row(data, "zerognn", b) for b in (256, 1024)]
    band_low = min(r["step_ms_median_ci_low"] for r in zerognn)
    band_high = max(r["step_ms_median_ci_high"] for r in zerognn)
    assert _flat(_bands(ax_time)) == pytest.approx([band_low, band_high])
    # host-mediated (2 trials, no interval) keeps its p10–p90 whiskers; zerognn has none.
    host = [_row(data, "host-mediated", b) for b in (256, 1024)]
    assert _spans(ax_time) == pytest.approx(_flat((r["step_ms_p10"], r["step_ms_p90"]) for r in host))
    assert ax_time.get_ylabel() == "median step time (ms, log)"
    subtitle = _subtitle(fig)
    assert "band: 95 % CI of the median over trials" in subtitle
    assert "whiskers where n < 6: p10–p90 of a trial's steps (median over trials)" in subtitle


def test_interference_draws_its_step_times_as_the_batch_sweep_does(tmp_path):
    records = [r for load in (0, 16) for r in _trials("zerognn", 6, 2.0 + load / 8, host_load=load)]
    data = _data(tmp_path, records)
    with theme():
        fig = draw_figure("interference", data)
    quiet, loaded = _row(data, "zerognn"), _row(data, "zerognn", host_load=16)
    assert _flat(_bands(fig.axes[0])) == pytest.approx([quiet["step_ms_median_ci_low"],
                                                       loaded["step_ms_median_ci_high"]])
    assert _segments(fig.axes[0], vertical=True) == []
    assert _subtitle(fig).endswith("; step time band: 95 % CI of the median over trials")


def test_the_precision_figure_draws_step_times_and_speedups_at_each_precision(tmp_path):
    records = [r for dtype, scale in (("float32", 1.0), ("tf32", 0.7), ("bfloat16", 0.6))
               for variant, ms in (("host-mediated", 4.0), ("zerognn", 1.0))
               for r in _trials(variant, 6, ms * scale if variant == "zerognn" else ms, dtype=dtype)]
    data = _data(tmp_path, records)
    assert supported_figures(data)["precision"] is None
    with theme():
        fig = draw_figure("precision", data)
    time_ax, speed_ax = fig.axes[0], fig.axes[1]
    assert [t.get_text() for t in time_ax.get_xticklabels()] == ["float32", "tf32", "bfloat16"]
    s = data.summary
    zero = s[s["variant"] == "zerognn"].set_index("dtype")
    whiskers = [(x, lo, hi) for x, lo, hi in _segments(speed_ax, vertical=True) if lo > 1.2]  # zerognn's
    assert len(_bands(time_ax)) > 0 and [x for x, _, _ in whiskers] == [0, 1, 2]
    bf16 = zero.loc["bfloat16"]
    assert whiskers[2][1:] == pytest.approx((bf16["speedup_vs_host_mediated_ci_low"],
                                             bf16["speedup_vs_host_mediated_ci_high"]))
    one = _data(tmp_path / "one", _trials("zerognn", 2, 1.0))
    assert supported_figures(one)["precision"] == "needs runs of one configuration at 2 or more precisions (found " \
                                                  "float32)"


def test_memory_ideal_with_many_trials_of_each_configuration(tmp_path):
    ideal = {"ideal_peak_mem_bytes": 2**29}
    records = (_trials("zerognn", 3, 2.0, first={"variant_info": ideal, "peak_mem_bytes": 2**30},
                       later={"variant_info": ideal, "peak_mem_bytes": 2**30})
               + _trials("my-baseline", 3, 6.0, first={"peak_mem_bytes": 2**31}, later={"peak_mem_bytes": 2**31}))
    data = _data(tmp_path / "estimate", records)
    need = NEEDS["memory"](data)
    assert len(need.runs) == 2 and list(need.ideal) == [2**29]
    with theme():
        fig = draw_figure("memory", data)
    assert [y for y, _, _ in _segments(fig.axes[0], vertical=False)] == [0.5]

    peaks = (2**30, 3 * 2**30, 2 * 2**30)  # host-mediated's ideal: the median over its trials, 2 GiB
    records = _trials("host-mediated", 3, 10.0)
    for record, peak in zip(records, peaks):
        record["metrics"]["peak_mem_bytes"] = peak
    data = _data(tmp_path / "measured", records + _trials("zerognn", 3, 2.0, first={"peak_mem_bytes": 2**29},
                                                          later={"peak_mem_bytes": 2**29}))
    assert list(NEEDS["memory"](data).ideal) == [2 * 2**30]


def test_record_figures_draw_each_configuration_once_from_its_first_trial(tmp_path):
    def envelope(scale):
        return {"envelope": {"hops": [{"hop": 1, "provisioned": int(100 * scale), "live_max": 100, "live_mean": 90}]}}

    first = {"phase_ms": PHASES, "losses": [2.0, 1.5, 1.0]}
    records = (_trials("host-mediated", 3, 10.0, first=first, later={"losses": [9.0, 9.0, 9.0]})
               + _trials("zerognn", 3, 2.0, first={**first, "variant_info": envelope(1.1)},
                         later={"losses": [7.0, 7.0, 7.0], "variant_info": envelope(5.0)}))
    data = _data(tmp_path, records)
    assert len(data.records) == 6
    configurations = {RunKey.of(r["config"]).configuration().run_id for r in records}

    breakdown = NEEDS["breakdown"](data).frame
    assert sorted(breakdown["run_id"]) == sorted(configurations)  # the first trials' ids are the configurations'
    firsts = [r["metrics"]["step_ms_median"] for r in records if r["config"]["trial"] == 1]
    assert sorted(breakdown["step_ms_median"]) == pytest.approx(sorted(firsts))
    loss = NEEDS["loss"](data)
    assert loss.groupby("run_id").size().to_dict() == {c: 3 for c in configurations}
    assert set(loss["loss"]) == {2.0, 1.5, 1.0}  # trial 1's losses only
    env = NEEDS["envelope"](data)
    assert list(env["provisioned"]) == [110]

    with theme():
        fig = draw_figure("breakdown", data)
        assert sorted(t.get_text() for t in fig.axes[0].get_yticklabels()) == ["host-mediated", "zerognn"]
        fig = draw_figure("loss", data)
    curves = [line.get_ydata() for ax in fig.axes for line in ax.get_lines() if len(line.get_ydata()) > 2]
    assert len(curves) == 1 and all(abs(v) < 1e-12 for v in curves[0])  # zerognn's one curve, against trial 1


def test_memory_draws_allocated_bars_reserved_ticks_and_the_computed_ideal(tmp_path):
    mem = {"peak_mem_bytes": 2**30, "peak_reserved_bytes": 3 * 2**29, "ideal_mem_bytes": 2**29}
    records = (_trials("host-mediated", 2, 10.0, first=mem, later=mem)
               + _trials("zerognn", 2, 2.0, first={**mem, "peak_mem_bytes": 2**31, "peak_reserved_bytes": 2**32},
                         later={**mem, "peak_mem_bytes": 2**31, "peak_reserved_bytes": 2**32}))
    data = _data(tmp_path, records)
    need = NEEDS["memory"](data)
    assert need.computed and list(need.ideal) == [2**29]  # the step's own tensors, not host-mediated's peak
    with theme():
        fig = draw_figure("memory", data)
    ax = fig.axes[0]
    assert [y for y, _, _ in _segments(ax, vertical=False)] == [0.5]
    ticks = sorted(float(line.get_ydata()[0]) for line in ax.lines if line.get_marker() == "_")
    assert ticks == [1.5, 4.0]  # GiB: host-mediated's and zerognn's reserved peaks
    assert any("ticks: reserved" in t.get_text() for t in fig.texts)


def test_a_figure_names_the_commits_of_its_records(tmp_path):
    records = _trials("host-mediated", 1, 10.0) + _trials("zerognn", 1, 2.0, batch_size=1024)
    records[1]["environment"]["git_commit"] = "0123456789abcdef"
    data = _data(tmp_path, records)
    with theme():
        title = draw_figure("loss", data).get_suptitle()
    assert title.startswith("Training loss per step") and title.endswith("records of commits 0123456, abc123")


def test_rendered_files_carry_the_commits_line_too(tmp_path, monkeypatch):
    from zerognn.figures import render

    saved = []
    monkeypatch.setattr(render, "save_figure", lambda fig, out, stem, formats: saved.append(fig) or [])
    _data(tmp_path, _trials("host-mediated", 1, 10.0) + _trials("zerognn", 1, 2.0))
    render.render_all(tmp_path / "summary.csv", tmp_path / "runs", tmp_path / "figures", only=["speedup"])
    assert len(saved) == 1 and saved[0].get_suptitle().endswith("records of commit abc123")


def test_the_cpu_figures_say_what_they_show(tmp_path):
    phases = {"sample": 6.0, "forward": 6.0, "backward": 6.0}  # 18 ms of parts against a 10 ms median step
    records = [make_record("torch-eager", step_ms=(9.0, 10.0, 11.0), phase_ms=phases),
               make_record("my-baseline", step_ms=(9.0, 10.0, 11.0), phase_ms=phases)]
    data = _data(tmp_path, records)
    with theme():
        loss, breakdown = (" ".join(draw_figure(name, data).get_suptitle().split()) for name in ("loss", "breakdown"))
    assert "no host-mediated run to compare against" in loss and "did not run" not in loss
    assert "the profiled steps' parts reach 1.8x the timed median step" in breakdown
