"""The numbers in the rendered regions of README.md and docs/*.md are what their templates make of the committed
records now (scripts/render_docs.py): a record or summary changed without re-rendering fails here."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.records.factory import make_record, write_records
from zerognn.errors import ZeroGNNError
from zerognn.records.summary import summarize

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "render_docs.py"
spec = importlib.util.spec_from_file_location("render_docs", SCRIPT)
render_docs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(render_docs)


def test_every_rendered_region_is_what_the_records_give_now():
    out = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_number_edited_by_hand_is_rendered_back():
    text = (REPO / "docs" / "results.md").read_text()
    region = next((m for m in render_docs.REGION.finditer(text) if m.group(3) == "docs/templates/papers.md"), None)
    assert region, "docs/results.md has no papers100M-like region"
    body = region.group(4)
    number = re.search(r"\d+\.\d\d", body).group(0)
    edited = text.replace(body, body.replace(number, f"{float(number) + 1:.2f}", 1), 1)
    assert edited != text
    assert render_docs.render(edited, render_docs.environment()) == text


def test_a_template_names_a_study_and_studies_yaml_names_its_directory(tmp_path):
    studies = yaml.safe_load(render_docs.STUDIES.read_text())
    for name, directory in studies.items():
        assert (render_docs.REFERENCE / directory).exists(), f"studies.yaml: {name}: no results/reference/{directory}"
    study = render_docs.environment().globals["study"]
    assert study("papers").name == studies["papers"]
    assert study("h100/interference").name == "h100/interference"  # a directory, named directly
    # every study a template reads by a name is one studies.yaml names
    named = {m for p in (REPO / "docs" / "templates").glob("*.md")
             for m in re.findall(r'study\("([^"/]+)"', p.read_text())}
    assert named and named <= set(studies), sorted(named - set(studies))


@pytest.fixture
def two_commits(tmp_path, monkeypatch):
    """A reference directory ``mixed`` holding two comparison groups recorded at two commits, its records without
    run timing (as records before it were), in place of results/reference/."""
    records = [make_record(v, dataset=dataset, trial=trial, step_ms=(1.0 + trial, 2.0 + trial, 3.0))
               for dataset in ("tiny", "small") for v in ("host-mediated", "zerognn") for trial in (1, 2)]
    for r in records:
        r["environment"]["git_commit"] = "abc1234" if r["config"]["dataset"] == "tiny" else "def5678"
    write_records(tmp_path / "mixed" / "runs", records)
    summarize(tmp_path / "mixed" / "runs", tmp_path / "mixed" / "summary.csv")
    monkeypatch.setattr(render_docs, "REFERENCE", tmp_path)
    return "mixed"


def test_a_region_inside_a_list_item_keeps_its_indent(tmp_path):
    (tmp_path / "t.md").write_text("one\n\ntwo\n")
    page = ("* an item\n\n  <!-- rendered from t.md by scripts/render_docs.py: edit the template -->\n  stale\n"
            "  <!-- end of rendered region -->\n* the next\n")
    rendered = render_docs.render(page, render_docs.environment(tmp_path))
    assert rendered == ("* an item\n\n  <!-- rendered from t.md by scripts/render_docs.py: edit the template -->\n"
                        "  one\n\n  two\n  <!-- end of rendered region -->\n* the next\n")
    assert render_docs.render(rendered, render_docs.environment(tmp_path)) == rendered


def test_a_region_in_a_yaml_comment_is_written_as_comment_lines_and_knows_its_file(tmp_path):
    (tmp_path / "t.md").write_text("{{ document }}\n\nsecond\n")
    page = ("# about\n# <!-- rendered from t.md by scripts/render_docs.py: edit the template -->\n# stale\n"
            "# <!-- end of rendered region -->\nkey: 1\n")
    rendered = render_docs.render(page, render_docs.environment(tmp_path), "workflow/config/h200-x.yaml")
    assert rendered == ("# about\n# <!-- rendered from t.md by scripts/render_docs.py: edit the template -->\n"
                        "# workflow/config/h200-x.yaml\n#\n# second\n# <!-- end of rendered region -->\nkey: 1\n")
    assert yaml.safe_load(rendered) == {"key": 1}


def test_a_template_that_picks_no_row_or_two_commits_says_so(tmp_path):
    study = render_docs.Study("h100/papers")
    with pytest.raises(ZeroGNNError, match=r"picks 0 summary rows, not one"):
        study.row(variant="pyg")
    with pytest.raises(ZeroGNNError, match=r"has no column batch"):
        study.row(batch=256)
    (tmp_path / "t.md").write_text('{{ study("papers").row(variant="zerognn").nothing }}')
    page = ("<!-- rendered from t.md by scripts/render_docs.py: edit the template -->\n"
            "<!-- end of rendered region -->\n")
    with pytest.raises(ZeroGNNError, match=r"^template t\.md: UndefinedError: .*nothing"):
        render_docs.render(page, render_docs.environment(tmp_path))


def test_the_table_keeps_the_summary_tables_cells():
    table = render_docs.Study("h100/papers").table(["variant", "× host-mediated [95 % CI]"])
    assert table.splitlines()[0] == "| variant | × host-mediated [95 % CI] |"
    assert any(line.startswith("| zerognn | ") and "[" in line for line in table.splitlines())
    with pytest.raises(ZeroGNNError, match="has no column"):
        render_docs.Study("h100/papers").table(["speed"])


def test_record_fields_come_per_trial_and_per_run():
    study = render_docs.Study("h100/papers")
    totals = study.field("metrics.phase_s.total", variant="zerognn")
    assert len(totals) == study.row(variant="zerognn")["trials"] and all(t > 0 for t in totals)
    both = study.values("metrics.phase_s.total", variant=["zerognn", "host-mediated"])
    assert len(both) == 2 * len(totals) and set(totals) <= set(both)
    assert [r["variant"] for r in study.rows(variant=["zerognn", "host-mediated"])] == ["host-mediated", "zerognn"]
    assert study.machines() == 1 and study.calls() >= study.row(variant="zerognn")["trials"]
    assert 0 < study.minutes() < 60
    with pytest.raises(ZeroGNNError, match=r"has no field metrics\.nothing"):
        study.field("metrics.nothing", variant="zerognn")
    with pytest.raises(ZeroGNNError, match=r"picks 7 configurations, not one"):
        study.field("metrics.phase_s.total")


def test_a_directory_of_several_commits_renders_one_part_at_a_time(two_commits):
    with pytest.raises(ZeroGNNError, match=r"records name 2 commits \(abc1234, def5678\).*one study at one commit"):
        render_docs.Study(two_commits)
    part = render_docs.Study(two_commits, dataset="small")
    assert set(part.summary["dataset"]) == {"small"} and part.commit == "def5678"
    assert len(part.values("metrics.step_ms_median")) == 4  # the records of the part, no more
    with pytest.raises(ZeroGNNError, match=r"picks no configuration"):
        render_docs.Study(two_commits, dataset="ogbn-nothing")
    assert part.run_minutes() is None  # records without run timing


def test_run_minutes_of_one_machine_span_its_first_start_to_its_last_end():
    papers = render_docs.Study("h100/papers")
    starts = papers.values("environment.started_at")
    assert papers.machines() == 1 and len(starts) == papers.summary.trials.sum()
    # one machine: its first start to its last end, which is past the last start by at least one run's total
    assert papers.minutes() < papers.run_minutes() < papers.minutes() + max(papers.values("metrics.phase_s.total")) / 60


@pytest.fixture
def two_machines(tmp_path, monkeypatch):
    """A study ``spread`` of four configurations (variant, host load) on two machine boots: load 0 on the first,
    from 10:00 (host-mediated, then zerognn), load 16 on the second an hour later; each run 30 s."""
    records = []
    for boot, (load, hour) in enumerate([(0, 10), (16, 11)]):
        for minute, variant in enumerate(("host-mediated", "zerognn")):
            r = make_record(variant, host_load=load, phase_s={"total": 30.0})
            r["environment"] |= {"boot_id": f"boot-{boot}", "started_at": f"2026-12-01T{hour}:0{minute}:00+00:00"}
            records.append(r)
    write_records(tmp_path / "spread" / "runs", records)
    summarize(tmp_path / "spread" / "runs", tmp_path / "spread" / "summary.csv")
    monkeypatch.setattr(render_docs, "REFERENCE", tmp_path)
    return render_docs.Study("spread")


def test_minutes_across_machines_count_each_machines_span_and_not_the_gap_between(two_machines):
    assert two_machines.machines() == 2 and two_machines.machines(host_load=16) == 1
    assert two_machines.minutes() == pytest.approx(61)  # first start to last start, the gap included
    assert two_machines.run_minutes() == pytest.approx(2 * 1.5)  # each machine: 10:00 to 10:01:30
    assert two_machines.run_minutes(host_load=0) == pytest.approx(1.5)


def test_process_minutes_count_a_studys_own_processes_and_not_the_runs_between_them():
    papers = render_docs.Study("h100/papers")  # a stage of its own: its processes fill most of its span
    assert papers.run_minutes() / 2 < papers.process_minutes() < papers.run_minutes()
    assert papers.process_minutes() == pytest.approx(sum(papers.values("metrics.phase_s.total")) / 60)
    small = render_docs.Study("h100/small-batch")  # two of the reference group's ten variants, its rounds between
    assert small.shares_records_with(render_docs.Study("h100/reference"), batch_size=256)
    assert small.process_minutes() < small.run_minutes() / 2


def test_per_machine_gives_each_machines_values_in_the_order_the_machines_ran(two_machines):
    assert two_machines.per_machine("config.host_load") == [[0], [16]]
    assert two_machines.per_machine("config.variant") == [["host-mediated", "zerognn"]] * 2
    assert two_machines.per_machine("config.host_load", variant="zerognn", host_load=16) == [[16]]


def test_a_group_committed_from_another_studys_archive_shares_its_records():
    precision, trials = render_docs.Study("h100/precision"), render_docs.Study("h100/trials")
    assert precision.shares_records_with(trials, dtype="float32")  # committed from the trials archive
    assert not precision.shares_records_with(trials, dtype="tf32")  # recorded in a stage of its own
    assert not precision.shares_records_with(render_docs.Study("h100/papers"), dtype="float32")
    assert not precision.shares_records_with(trials, dtype="float16")  # picks no run: nothing shared


def test_groups_are_a_configs_comparison_groups_with_what_a_study_holds_of_each():
    precision = render_docs.Study("h100/precision").groups("workflow/config/h200-precision.yaml")
    assert [g["dtype"] for g in precision] == ["float32", "tf32", "bfloat16"] and precision[0]["complete"]  # trials'
    planned = {p for r in render_docs.planned_rounds("workflow/config/h200-reference.yaml") for p in r}
    reference = render_docs.Study("h100/reference")
    groups = reference.groups("workflow/config/h200-reference.yaml")
    assert {tuple(sorted(g)) for g in groups} == {("batch_size", "complete", "dataset", "missing", "model", "runs")}
    assert len(groups) == 10 and sum(g["runs"] for g in groups) == len(planned)
    held = {Path(p).stem for p in planned} & set(reference.values("run_id"))
    assert sum(g["runs"] - g["missing"] for g in groups) == len(held)
    assert all(g["complete"] == (g["missing"] == 0) for g in groups)


def test_a_bench_ops_output_is_read_back_as_the_formatters_wrote_it(tmp_path):
    from zerognn.bench.ops import OpTiming, format_table
    from zerognn.bench.padding import PaddingTiming, format_padding

    ops = [OpTiming("sample hop 1 (n=1,024, f=15)", 41.25, 110_000), OpTiming("sage backward", 446.8, 472_140_000),
           OpTiming("sample + dedupe + relabel hop 3 (+119,637 new)", 148.0, 16_230_000)]  # wider than the column
    layers = [PaddingTiming(0, 100, 55_133, 65_132, 651.5, 779.8), PaddingTiming(1, 256, 7_492, 8_906, 514.2, 283.6)]
    text = ("# zerognn bench-ops, commit 9a534affdcc8608e1b50565d2636aa94b40ad1f7 (environment, dirty False), source "
            "2ea4320dce55; NVIDIA H100 80GB HBM3, driver 580.159.04\n"
            "products-like, batch 1024, fanouts 15,10,5; device copy ceiling 4217 GB/s\n" + format_table(ops, 4217.0)
            + "\n\ndense layers over the calibrated envelope [1024, 8906, 65132, 204635] vs exact sizes (SAGE)\n"
            + format_padding(layers) + "\n")
    (tmp_path / "card").mkdir()
    (tmp_path / "card" / "bench-ops.txt").write_text(text)
    b = render_docs.beside.bench_ops(tmp_path, "card/bench-ops.txt")
    assert (b["commit"], b["ceiling"], b["envelope"]) == ("9a534af", 4217.0, [1024, 8906, 65132, 204635])
    assert [o["name"] for o in b["ops"]] == [o.name for o in ops]
    assert b["ops"][1]["us"] == 446.8 and b["ops"][1]["gbps"] == round(ops[1].gbps)
    assert [(g["layer"], g["live"], g["padded"], g["cost_us"]) for g in b["padding"]] == [
        (0, 55_133, 65_132, 128.3), (1, 7_492, 8_906, -230.6)]
    (tmp_path / "card" / "bench-ops.txt").write_text(text.split("\n", 1)[1])  # no header naming the commit
    with pytest.raises(ZeroGNNError, match=r"not a zerognn bench-ops output"):
        render_docs.beside.bench_ops(tmp_path, "card/bench-ops.txt")


def test_after_effect_records_are_read_back_as_ratios_of_one_commit(tmp_path):
    import json

    def write(name, commit, profiled, before, after):
        record = {"environment": {"git_commit": commit, "gpu_name": "G", "call_id": "c", "boot_id": "b"},
                  "variant": name.split("-")[0], "profiled_steps": profiled, "before_ms": before, "after_ms": after}
        (tmp_path / "a" / f"{name}.json").write_text(json.dumps(record))

    (tmp_path / "a").mkdir()
    with pytest.raises(ZeroGNNError, match=r"no after-effect records"):
        render_docs.beside.aftereffect(tmp_path, "a")
    write("zerognn-1", "abcdef1", 5, [1.0, 1.0, 1.0], [1.1, 1.2, 1.3])
    write("zerognn-control-1", "abcdef1", 0, [2.0, 2.0, 2.0], [2.0, 2.0, 1.0])
    a = render_docs.beside.aftereffect(tmp_path, "a")
    assert (a["commit"], a["rounds"], a["profiled"], a["control"], a["before"]) == ("abcdef1", 1, 5, True, 3)
    assert a["ratios"]["zerognn"] == {"with": [pytest.approx(1.2)], "without": [1.0]}
    write("zerognn-2", "1234567", 5, [1.0], [1.0])
    with pytest.raises(ZeroGNNError, match=r"records of 2 commits \(1234567, abcdef1\)"):
        render_docs.beside.aftereffect(tmp_path, "a")


def test_a_ratio_between_two_variants_is_the_summarys_where_one_is_host_mediated():
    peers = render_docs.Study("h100/peers")
    for batch_size in (256, 4096):
        z = peers.row(variant="zerognn", batch_size=batch_size)
        point, low, high = peers.ratio(dict(variant="host-mediated", batch_size=batch_size),
                                       dict(variant="zerognn", batch_size=batch_size))
        assert (point, low, high) == pytest.approx((z["speedup_vs_host_mediated"],
                                                    z["speedup_vs_host_mediated_ci_low"],
                                                    z["speedup_vs_host_mediated_ci_high"]))
    point, low, high = peers.ratio(dict(variant="pyg", batch_size=1024), dict(variant="zerognn", batch_size=1024))
    assert low < point < high and point > 1
    one_seed = render_docs.Study("h100/tta")  # a seed is one trial: too few for an interval
    assert one_seed.ratio(dict(variant="host-mediated", seed=0), dict(variant="zerognn", seed=0))[1:] == (None, None)


def test_missing_says_a_summary_cell_is_empty():
    env = render_docs.environment()
    check = env.from_string("{{ value is missing }}")
    assert [check.render(value=v) for v in (None, float("nan"), 0.0, 1.5, "a flag")] == [
        "True", "True", "False", "False", "False"]
    row = render_docs.Study("h100/papers").row(variant="zerognn")
    assert env.from_string("{{ r.time_to_target_s is missing }} {{ r.step_ms_median is missing }}").render(r=row) \
        == "True False"


def test_a_study_names_the_one_gpu_model_its_records_ran_on(monkeypatch):
    papers = render_docs.Study("h100/papers")
    assert papers.gpu() == "NVIDIA H100 80GB HBM3"
    monkeypatch.setattr(papers, "values", lambda path: ["NVIDIA H200", "NVIDIA H100 80GB HBM3"])
    with pytest.raises(ZeroGNNError, match=r"name 2 GPU models \(NVIDIA H100 80GB HBM3, NVIDIA H200\)"):
        papers.gpu()


def test_rounds_are_what_a_config_plans_the_measure_of_a_study_recorded_in_part():
    path_before = list(sys.path)
    rounds = render_docs.environment().globals["rounds"]("workflow/config/h200-tta.yaml")
    assert len(rounds) == 6  # a round a seed
    assert [len(r) for r in rounds] == [8, 8, 6, 6, 6, 6]  # torch-eager and torch-compile train seeds 0 and 1
    assert all(p.startswith("results/runs/products-like__sage__") for r in rounds for p in r)
    assert sys.path == path_before  # scripts/ is on it only while the config is read


def test_the_precision_rows_warn_against_reading_host_bound_steps_across_machines():
    precision = render_docs.environment().globals["study"]("precision")
    recorded = [d for d in ("float32", "tf32", "bfloat16") if d in set(precision.summary.dtype)]
    warned = "the precisions ran on different machines" in (REPO / "README.md").read_text()
    assert warned == (precision.machines(dtype=recorded) > 1)
