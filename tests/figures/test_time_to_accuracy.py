"""The figures of runs to a target accuracy: validation accuracy over training time (from the records, every seed
and trial pooled per evaluation) and the time to the target (from the summary), what each draws and why each is
skipped."""

from __future__ import annotations

import statistics

import pytest
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.colors import to_rgb
from matplotlib.patches import Rectangle

from tests.records.factory import make_record, write_records
from zerognn.figures import supported_figures
from zerognn.figures.data import FigureData
from zerognn.figures.draw import theme
from zerognn.figures.render import draw_figure, render_all
from zerognn.figures.style import variant_order
from zerognn.records.stats import median_ci
from zerognn.records.summary import summarize

from .to_target import TARGET, trained

SEEDS = range(6)
# Each variant's training seconds by epochs 1-3 (seed s's a little slower); host-mediated's are 10x zerognn's.
TIMES = {"host-mediated": [10.0, 20.0, 30.0], "zerognn": [1.0, 2.0, 3.0]}
SETUP = {"host-mediated": 0.5, "zerognn": 4.0}
NO_TRAINING = "no runs to a target (record `training` is null in every record; zerognn run --epochs)"
NO_TARGETS = "no runs to a target (targets_reached is empty: no record trained to a dataset's target; zerognn run " \
             "--epochs)"


# Each seed's accuracy at epoch 2: seeds 2 and 5 reach the target (0.6) then, the others at epoch 3. Skewed over
# the seeds, as the times are, so that a mean would not pass for the median.
SECOND_EPOCH = [0.58, 0.59, 0.61, 0.585, 0.595, 0.62]


def _accuracies(variant, seed):
    lift = 0.004 if variant == "zerognn" else 0.0
    return [0.45 + 0.002 * seed**2 + lift, SECOND_EPOCH[seed] + lift, 0.64 + 0.001 * seed**2 + lift]


def _times(variant, seed):
    return [t * (1 + 0.01 * seed**2) for t in TIMES[variant]]


def _runs(variants=tuple(TIMES), **kw):
    return [trained(make_record(v), _times(v, s), _accuracies(v, s), seed=s, setup=SETUP[v], **kw)
            for v in variants for s in SEEDS]


def _data(tmp_path, records, with_runs=True):
    runs, summary = tmp_path / "runs", tmp_path / "summary.csv"
    write_records(runs, records)
    summarize(runs, summary)
    return FigureData.load(summary, runs if with_runs else None)


def _row(data, variant):
    return data.summary.set_index("variant").loc[variant]


def test_runs_to_the_target_support_both_figures_which_render(tmp_path):
    data = _data(tmp_path, _runs())
    reasons = supported_figures(data)
    assert reasons["time_to_accuracy"] is None and reasons["time_to_target"] is None
    written = render_all(tmp_path / "summary.csv", tmp_path / "runs", tmp_path / "fig", formats=("png",),
                         only=["time_to_accuracy", "time_to_target"])
    assert [p.name for p in written] == ["time_to_accuracy.png", "time_to_target.png"]
    assert all(p.stat().st_size > 1000 for p in written)


def test_the_accuracy_curve_is_each_evaluations_median_over_seeds_with_their_spread_and_the_target(tmp_path):
    data = _data(tmp_path, _runs())
    with theme():
        fig = draw_figure("time_to_accuracy", data)
    (ax,) = [a for a in fig.axes if a.get_visible()]
    assert ax.get_xscale() == "log" and ax.get_ylabel() == "validation accuracy"
    for variant in TIMES:
        color = to_rgb(data.styles[variant].color)
        (line,) = [ln for ln in ax.get_lines() if to_rgb(ln.get_color()) == color]
        accuracies = [_accuracies(variant, s) for s in SEEDS]
        times = [_times(variant, s) for s in SEEDS]
        assert list(line.get_xdata()) == pytest.approx([statistics.median(t[k] for t in times) for k in range(3)])
        assert list(line.get_ydata()) == pytest.approx([statistics.median(a[k] for a in accuracies)
                                                        for k in range(3)])
        (band,) = [c for c in ax.collections if isinstance(c, PolyCollection)
                   and to_rgb(c.get_facecolor()[0][:3]) == color]
        ys = band.get_paths()[0].vertices[:, 1]
        assert (ys.min(), ys.max()) == pytest.approx((min(map(min, accuracies)), max(map(max, accuracies))))
    (target,) = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--" and len(set(ln.get_ydata())) == 1]
    assert target.get_ydata()[0] == TARGET
    assert [t.get_text() for t in ax.texts] == ["target 0.6"]
    assert "seeds × trials, 6 each" in " ".join(fig.get_suptitle().split())
    assert {t.get_text() for t in fig.legends[0].get_texts()} == set(TIMES)


def test_the_time_to_the_target_bars_their_intervals_and_the_time_with_setup(tmp_path):
    data = _data(tmp_path, _runs())
    with theme():
        fig = draw_figure("time_to_target", data)
    ax = fig.axes[0]
    variants = variant_order(TIMES)
    assert [len(c) for c in ax.containers] == [1, 1]
    added = {round(p.get_x() + p.get_width() / 2, 9): p for p in ax.patches
             if isinstance(p, Rectangle) and not p.get_fill()}
    whiskers = {round(x0, 9): (min(y0, y1), max(y0, y1)) for c in ax.collections if isinstance(c, LineCollection)
                for (x0, y0), (_, y1) in c.get_segments()}
    for container, variant in zip(ax.containers, variants):
        (bar,) = container
        center = round(bar.get_x() + bar.get_width() / 2, 9)
        # Each seed's time is its first evaluation at or above the target, taken from the runs, not the summary.
        times = [next(t for t, a in zip(_times(variant, s), _accuracies(variant, s)) if a >= TARGET) for s in SEEDS]
        assert bar.get_height() == pytest.approx(statistics.median(times)) == _row(data, variant)["time_to_target_s"]
        assert whiskers[center] == pytest.approx(median_ci(times))
        top = added[center].get_y() + added[center].get_height()
        assert added[center].get_y() == bar.get_height()
        assert top == pytest.approx(statistics.median(t + SETUP[variant] for t in times))
    assert ax.get_yscale() == "log" and not ax.texts
    assert {t.get_text() for t in fig.legends[0].get_texts()} == {*TIMES, "with setup"}


def test_a_configuration_not_every_seed_reached_is_labelled_in_its_bars_place(tmp_path):
    records = _runs()
    seed_three = next(r for r in records if r["config"]["variant"] == "zerognn" and r["config"]["seed"] == 3)
    trained(seed_three, _times("zerognn", 3), [0.4, 0.5, 0.55], seed=3, setup=SETUP["zerognn"])
    data = _data(tmp_path, records)
    assert _row(data, "zerognn")["targets_reached"] == 5
    with theme():
        fig = draw_figure("time_to_target", data)
    ax = fig.axes[0]
    host, ours = (list(c) for c in ax.containers)
    assert len(host) == 1 and ours == []  # host-mediated's slot first, zerognn's empty
    (note,) = ax.texts
    assert note.get_text() == "not reached by every seed (5 of 6 did)"
    assert note.get_position()[0] == pytest.approx(-(host[0].get_x() + host[0].get_width() / 2))  # the other slot
    assert [p for p in ax.patches if isinstance(p, Rectangle) and not p.get_fill()][0].get_y() == host[0].get_height()


def test_runs_without_training_skip_both_figures_and_a_summary_alone_the_curve(tmp_path):
    plain = [make_record("zerognn"), make_record("host-mediated")]
    reasons = supported_figures(_data(tmp_path / "plain", plain))
    assert reasons["time_to_accuracy"] == NO_TRAINING and reasons["time_to_target"] == NO_TARGETS
    alone = supported_figures(_data(tmp_path / "alone", _runs(), with_runs=False))
    assert alone["time_to_accuracy"] == "no run records (runs_dir not given or empty)"
    assert alone["time_to_target"] is None


def test_a_dataset_without_a_target_draws_its_curve_alone(tmp_path):
    data = _data(tmp_path, _runs(target=None))
    reasons = supported_figures(data)
    assert reasons["time_to_accuracy"] is None and reasons["time_to_target"] == NO_TARGETS
    with theme():
        fig = draw_figure("time_to_accuracy", data)
    ax = fig.axes[0]
    assert not ax.texts and not [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"
                                 and len(ln.get_xdata()) == 2 and len(set(ln.get_ydata())) == 1]
    assert len([ln for ln in ax.get_lines() if len(ln.get_xdata()) == 3]) == 2
