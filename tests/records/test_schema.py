import copy
import json

import pytest

from zerognn.errors import ZeroGNNError
from zerognn.records import (
    SCHEMA_VERSION,
    iter_records,
    percentiles,
    read_record,
    upgrade_record,
    validate_record,
    write_record,
)
from zerognn.records.migrations import FIELDS_NEW_IN_V3, FIELDS_NEW_IN_V5

from .factory import doc_example, make_record


def test_percentiles_linear_interpolation():
    assert percentiles([2.10, 2.05, 2.20, 2.08, 2.12]) == pytest.approx((2.10, 2.062, 2.168))
    with pytest.raises(ZeroGNNError, match="measure_steps"):
        percentiles([])


def test_docs_example_is_valid_and_consistent():
    record = doc_example()
    validate_record(record)
    m = record["metrics"]
    assert (m["step_ms_median"], m["step_ms_p10"], m["step_ms_p90"]) == pytest.approx(percentiles(m["step_ms"]))
    assert m["epoch_s"] == pytest.approx(m["step_ms_median"] * m["steps_per_epoch"] / 1e3)
    c = record["config"]
    assert m["seeds_per_s"] == pytest.approx(c["batch_size"] * c["gpus"] * 1e3 / m["step_ms_median"])


def _broken(edit):
    record = make_record()
    edit(record)
    return record


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda r: r["config"].pop("batch_size"), "config.batch_size"),
        (lambda r: r["config"].update(batch_size="256"), "config.batch_size"),
        (lambda r: r["config"].update(device="gpu"), "config.device"),
        (lambda r: r["metrics"].update(step_ms=[]), "metrics.step_ms"),
        (lambda r: r["metrics"]["step_ms"].append(-1.0), "metrics.step_ms[3]"),
        (lambda r: r["metrics"].update(gpu_exec_fraction=1.5), "metrics.gpu_exec_fraction"),
        (lambda r: r["metrics"].update(peak_mem_bytes=1.5), "metrics.peak_mem_bytes"),
        (lambda r: r["metrics"].update(phase_ms={"sample": "fast"}), "metrics.phase_ms.sample"),
        (lambda r: r["metrics"].update(step_ms_p10=99.0), "metrics.step_ms_median"),
        (lambda r: r["losses"].append("nan"), "losses[7]"),
        (lambda r: r["accuracy"].update(val=True), "accuracy.val"),
        (lambda r: r["environment"].pop("git_commit"), "environment.git_commit"),
        (lambda r: r["variant_info"].update(envelope={"hops": [{"hop": 1}]}),
         "variant_info.envelope.hops[0].provisioned"),
        (lambda r: r.update(run_id="something-else"), "run_id"),
        (lambda r: r.update(schema_version=8), "schema_version"),
        (lambda r: r["metrics"].pop("gpu_busy_ms_per_step"), "metrics.gpu_busy_ms_per_step"),
        (lambda r: r["metrics"].update(cuda_graph_captures=-1), "metrics.cuda_graph_captures"),
        (lambda r: r.update(metrics=[]), "metrics"),
    ],
)
def test_validator_names_the_field(edit, field):
    with pytest.raises(ZeroGNNError) as e:
        validate_record(_broken(edit), source="runs/x.json")
    message = str(e.value)
    assert f"field '{field}'" in message
    assert message.startswith("runs/x.json: ")
    assert "docs/records.md" in message


def test_nulls_and_extra_fields_are_accepted():
    record = make_record(losses=[1.0, None])
    record["metrics"]["window_ms"] = None
    record["accuracy"].update(val=None, test=None)
    record["extra"] = {"anything": 1}
    record["variant_info"]["ideal_peak_mem_bytes"] = None
    validate_record(record)


def test_write_read_roundtrip_and_write_validates(tmp_path):
    record = make_record()
    path = tmp_path / "r.json"
    write_record(path, record)
    assert read_record(path) == record
    bad = copy.deepcopy(record)
    bad["config"]["gpus"] = 0
    with pytest.raises(ZeroGNNError, match="config.gpus"):
        write_record(tmp_path / "bad.json", bad)
    assert not (tmp_path / "bad.json").exists()


def test_iter_records_names_a_bad_file(tmp_path):
    record = make_record()
    write_record(tmp_path / "a" / f"{record['run_id']}.json", record)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "broken.json").write_text("{not json")
    with pytest.raises(ZeroGNNError, match="broken.json"):
        list(iter_records(tmp_path))


def test_iter_records_rejects_a_repeated_run_id(tmp_path):
    record = make_record()
    name = f"{record['run_id']}.json"
    for sub in ("one", "two"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / name).write_text(json.dumps(record))
    with pytest.raises(ZeroGNNError, match=f"one/{name} and .*two/{name}"):
        list(iter_records(tmp_path))


def test_iter_records_missing_dir(tmp_path):
    with pytest.raises(ZeroGNNError, match="run the pipeline first"):
        list(iter_records(tmp_path / "nope"))


def _gpu_record(**metrics):
    record = make_record("zerognn", device="cuda", gpu_name="NVIDIA H200", gpu_exec_fraction=0.5)
    record["config"]["profile_steps"] = 5
    record["metrics"].update(metrics)
    return record


def test_execution_fraction_and_dilation_must_agree_with_what_they_are_ratios_of():
    median = _gpu_record()["metrics"]["step_ms_median"]  # 11 ms
    validate_record(_gpu_record(gpu_busy_ms_per_step=5.5, gpu_exec_fraction=0.5,
                                window_ms=5 * 13.2, profiler_dilation=1.2))
    validate_record(_gpu_record(gpu_busy_ms_per_step=2 * median, gpu_exec_fraction=1.0))  # capped at 1
    for metrics, field in [
        (dict(gpu_busy_ms_per_step=5.5, gpu_exec_fraction=0.6), "gpu_exec_fraction"),
        (dict(gpu_busy_ms_per_step=None, gpu_exec_fraction=0.5), "gpu_exec_fraction"),
        (dict(window_ms=5 * 13.2, profiler_dilation=1.0), "profiler_dilation"),
    ]:
        with pytest.raises(ZeroGNNError, match=f"field 'metrics.{field}'"):
            validate_record(_gpu_record(**metrics))


def _schema_4(record):
    """The record as schema 4 wrote it: no whole-epoch time."""
    for key in FIELDS_NEW_IN_V5:
        record["metrics"].pop(key)
    record["schema_version"] = 4
    return record


def _schema_3(record):
    """The record as schema 3 wrote it: no GPU time per kernel class."""
    record["metrics"].pop("gpu_ms_by_class")
    _schema_4(record)["schema_version"] = 3
    return record


def test_schema_4_records_are_read_with_no_whole_epoch(tmp_path):
    write_record(tmp_path / "old.json", _schema_4(_gpu_record(gpu_ms_by_class={"dense": 1.0})))
    record = read_record(tmp_path / "old.json")
    assert record["schema_version"] == SCHEMA_VERSION and record["upgraded_from_schema"] == 4
    assert record["metrics"]["epoch_s_measured"] is None and record["metrics"]["epoch_first_step"] is None
    assert record["metrics"]["gpu_ms_by_class"] == {"dense": 1.0}
    validate_record(record)


def test_a_whole_epoch_starts_at_an_epoch_boundary_and_has_a_time():
    validate_record(make_record(epoch_s_measured=0.5, epoch_first_step=20))
    with pytest.raises(ZeroGNNError, match="not an epoch boundary"):
        validate_record(make_record(epoch_s_measured=0.5, epoch_first_step=15))
    with pytest.raises(ZeroGNNError, match="both be null or both be set"):
        validate_record(make_record(epoch_s_measured=0.5))
    with pytest.raises(ZeroGNNError, match="metrics.epoch_s_measured"):
        validate_record(make_record(epoch_s_measured=0.0, epoch_first_step=20))


def _schema_2(record):
    """The record as schema 2 wrote it: no floor, no activity count."""
    for key in FIELDS_NEW_IN_V3:
        record["metrics"].pop(key)
    _schema_3(record)["schema_version"] = 2
    return record


def test_schema_3_records_are_read_with_no_gpu_time_per_class(tmp_path):
    write_record(tmp_path / "old.json", _schema_3(_gpu_record()))
    record = read_record(tmp_path / "old.json")
    assert record["schema_version"] == SCHEMA_VERSION and record["upgraded_from_schema"] == 3
    assert record["metrics"]["gpu_ms_by_class"] == {} and record["metrics"]["floor_gflop"] == 1.0
    validate_record(record)


def test_a_cpu_record_has_no_gpu_time_per_class():
    record = make_record(gpu_ms_by_class={"dense": 1.0})
    with pytest.raises(ZeroGNNError, match="gpu_ms_by_class"):
        validate_record(record)


def _schema_1(record):
    """The record as schema 1 wrote it: the fraction over the profiled window, no newer fields."""
    for key in ("gpu_busy_ms_per_step", "gpu_untraced_ms_per_step", "profiler_dilation",
                "gpu_gap_in_graph_ms_per_step", "gpu_wait_host_ms_per_step", "cuda_graph_captures"):
        record["metrics"].pop(key)
    _schema_2(record)["schema_version"] = 1
    return record


def test_schema_2_records_are_read_with_null_floor_fields(tmp_path):
    old = _schema_2(_gpu_record())
    write_record(tmp_path / "old.json", old)
    record = read_record(tmp_path / "old.json")
    assert record["schema_version"] == SCHEMA_VERSION and record["upgraded_from_schema"] == 2
    assert all(record["metrics"][key] is None for key in FIELDS_NEW_IN_V3)
    assert record["metrics"]["gpu_ms_by_class"] == {}
    validate_record(record)


def test_step_over_floor_must_agree_with_the_step_and_the_floor():
    record = make_record(device="cuda", floor_ms=2.0)
    validate_record(record)
    record["metrics"]["step_over_floor"] *= 1.5
    with pytest.raises(ZeroGNNError, match="step_over_floor"):
        validate_record(record)
    record["metrics"]["step_over_floor"] = None
    with pytest.raises(ZeroGNNError, match="both be null or both be set"):
        validate_record(record)


def test_schema_1_records_are_read_with_the_fraction_against_the_unprofiled_step(tmp_path):
    # 5 profiled steps in a 66 ms window (13.2 ms a step against a median of 11): busy 3.3 ms a step
    old = _schema_1(_gpu_record(window_ms=66.0, gpu_exec_fraction=0.25))
    validate_record(old)
    write_record(tmp_path / "old.json", old)
    record = read_record(tmp_path / "old.json")
    m = record["metrics"]
    assert record["schema_version"] == SCHEMA_VERSION and record["upgraded_from_schema"] == 1
    assert m["gpu_busy_ms_per_step"] == pytest.approx(3.3)
    assert m["gpu_exec_fraction"] == pytest.approx(0.3) and m["profiler_dilation"] == pytest.approx(1.2)
    assert m["gpu_gap_in_graph_ms_per_step"] is None and m["cuda_graph_captures"] is None
    validate_record(record)
    cpu = _schema_1(make_record())
    assert upgrade_record(cpu)["metrics"]["gpu_exec_fraction"] is None
    assert upgrade_record(record) is record  # current records are returned as they are


def _metrics(**values):
    return lambda r: r["metrics"].update(values)


@pytest.mark.parametrize(
    "edit, field, said",
    [
        # make_record's step times are (10, 11, 12): median 11, p10 10.2, p90 11.8, 10 steps an epoch
        (_metrics(step_ms_median=15.0, step_ms_p90=20.0), "metrics.step_ms_median",
         "is 15.0 but numpy.percentile(step_ms, 50) (linear) is 11.0"),
        (_metrics(step_ms_p10=10.0), "metrics.step_ms_p10", "numpy.percentile(step_ms, 10) (linear) is 10.2"),
        (_metrics(step_ms_p90=11.8 * (1 + 1e-5)), "metrics.step_ms_p90", "numpy.percentile(step_ms, 90)"),
        (lambda r: r["config"].update(measure_steps=4), "metrics.step_ms",
         "holds 3 step time(s) but config.measure_steps is 4"),
        (_metrics(epoch_s=1.1), "metrics.epoch_s", "is 1.1 but step_ms_median * steps_per_epoch / 1000 is 0.11"),
        (_metrics(steps_per_epoch=20), "metrics.epoch_s",
         "is 0.11 but step_ms_median * steps_per_epoch / 1000 is 0.22"),
        (_metrics(seeds_per_s=256 * 1e3 / 12.0), "metrics.seeds_per_s", "batch_size * gpus * 1000 / step_ms_median"),
        # the throughput of batch 256 in a record of batch 512
        (lambda r: r["config"].update(batch_size=512) or r.update(run_id=r["run_id"].replace("b256", "b512")),
         "metrics.seeds_per_s", "is 23272.7"),
        (lambda r: r["dataset"].update(name="other"), "dataset.name", "is 'other' but config.dataset is 'tiny'"),
        (_metrics(step_ms=[0.0, 0.0, 1.0], step_ms_median=0.0, step_ms_p10=0.0, step_ms_p90=0.8),
         "metrics.step_ms_median", "must be > 0"),
    ],
)
def test_a_record_that_contradicts_itself_is_invalid(edit, field, said):
    with pytest.raises(ZeroGNNError) as e:
        validate_record(_broken(edit), source="runs/x.json")
    message = str(e.value)
    assert f"field '{field}' " in message and said in message, message
    assert "\n" not in message
    assert message.startswith("runs/x.json: invalid run record: ")
    assert message.endswith("Fix the code that wrote it to follow docs/records.md (or delete the file and re-run "
                            "that run).")


def test_computed_fields_are_checked_to_rounding_only():
    record = make_record()
    m = record["metrics"]
    m.update(step_ms_median=m["step_ms_median"] * (1 + 1e-8), epoch_s=m["epoch_s"] * (1 - 1e-7),
             seeds_per_s=m["seeds_per_s"] * (1 + 1e-7), step_ms_p10=m["step_ms_p10"] + 1e-10)
    validate_record(record)
    # accuracy is not tied to eval_nodes: a record may carry either without the other
    record["accuracy"].update(eval_nodes=0)
    validate_record(record)


@pytest.mark.parametrize("field, value", [
    ("gpu_busy_ms_per_step", 5.5), ("gpu_untraced_ms_per_step", 0.1), ("gpu_exec_fraction", 0.5),
    ("gpu_gap_in_graph_ms_per_step", 0.1), ("gpu_wait_host_ms_per_step", 0.1), ("host_syncs_per_step", 0.0),
    ("host_launches_per_step", 3.0), ("peak_mem_bytes", 0), ("cuda_graph_captures", 0),
])
def test_a_cpu_run_has_no_gpu_metrics(field, value):
    with pytest.raises(ZeroGNNError, match=rf"field 'metrics.{field}' is {value} but must be null for a CPU run"):
        validate_record(_broken(_metrics(**{field: value})))
    gpu = make_record(device="cuda")
    gpu["metrics"][field] = value
    if field == "gpu_busy_ms_per_step":
        gpu["metrics"]["gpu_exec_fraction"] = 0.5
    elif field == "gpu_exec_fraction":
        gpu["metrics"]["gpu_busy_ms_per_step"] = 5.5
    validate_record(gpu)
    profiled = make_record()
    profiled["metrics"].update(window_ms=60.0, profiler_dilation=60.0 / 5 / 11.0)  # any profiled run has one
    profiled["config"]["profile_steps"] = 5
    validate_record(profiled)


def test_schema_1_records_are_checked_for_consistency_too():
    for edit, field in [
        (_metrics(epoch_s=9.0), "metrics.epoch_s"),
        (_metrics(step_ms_median=11.5), "metrics.step_ms_median"),
        (lambda r: r["config"].update(measure_steps=5), "metrics.step_ms"),
        (lambda r: r["dataset"].update(name="x"), "dataset.name"),
        (_metrics(peak_mem_bytes=2**20), "metrics.peak_mem_bytes"),
        (_metrics(host_syncs_per_step=1.0), "metrics.host_syncs_per_step"),
    ]:
        record = _schema_1(make_record())
        validate_record(record)
        edit(record)
        with pytest.raises(ZeroGNNError, match=f"field '{field}'"):
            validate_record(record)


def test_a_record_file_must_be_named_after_its_run(tmp_path):
    record = make_record()
    write_record(tmp_path / "sub" / "renamed.json", record)
    with pytest.raises(ZeroGNNError) as e:
        list(iter_records(tmp_path))
    message = str(e.value)
    assert "renamed.json" in message and "'renamed'" in message and f"'{record['run_id']}'" in message
    assert f"rename it to {record['run_id']}.json" in message and "\n" not in message
    (tmp_path / "sub" / "renamed.json").rename(tmp_path / "sub" / f"{record['run_id']}.json")
    assert [r["run_id"] for r in iter_records(tmp_path)] == [record["run_id"]]
