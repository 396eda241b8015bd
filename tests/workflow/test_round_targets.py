"""scripts/round_targets.py: the records of one round of a study, which a GPU call makes whole (whole_rounds.py)."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def targets(*args):
    out = subprocess.run([sys.executable, str(REPO / "scripts/round_targets.py"), *args], cwd=REPO,
                         capture_output=True, text=True)
    return out.returncode, out.stdout.split(), out.stderr


def test_a_round_of_trials_is_every_variant_once_at_that_trial():
    assert targets("workflow/config/h200-trials.yaml", "--count")[1] == ["10"]
    rc, paths, _ = targets("workflow/config/h200-trials.yaml", "3")
    assert rc == 0 and len(paths) == 10
    assert all(p.startswith("results/runs/") and p.endswith("__t3.json") for p in paths)
    assert len({p.split("__")[2] for p in paths}) == 10  # eight variants and the two pyg peers


def test_a_round_of_seeds_is_every_variant_that_trains_that_seed():
    assert targets("workflow/config/h200-tta.yaml", "--count")[1] == ["6"]
    first = targets("workflow/config/h200-tta.yaml", "1")[1]
    third = targets("workflow/config/h200-tta.yaml", "3")[1]
    assert len(first) == 8 and all(p.endswith("__g1.json") for p in first)  # seed 0: no suffix
    assert len(third) == 6 and all(p.endswith("__s2.json") for p in third)  # torch-eager and -compile train 0, 1
    assert not any("torch-" in p for p in third)


def test_a_round_past_the_last_is_one_line_naming_the_range():
    rc, _, err = targets("workflow/config/h200-tta.yaml", "7")
    assert rc == 2 and err.strip().endswith("give a round from 1 to 6, or --count")


def test_only_keeps_the_runs_whose_key_has_the_values_with_their_ids_and_order():
    every = targets("workflow/config/h200-precision.yaml", "2")[1]
    rc, tf32, _ = targets("workflow/config/h200-precision.yaml", "2", "--only", "dtype=tf32")
    assert rc == 0 and len(tf32) == 7 and tf32 == [p for p in every if "__ptf32" in p]
    rc, gcn, _ = targets("workflow/config/h200-reference.yaml", "1", "--only", "dataset=products-like,model=gcn")
    assert rc == 0 and len(gcn) == 8 and all(p.split("/")[-1].startswith("products-like__gcn__") for p in gcn)


def test_only_refuses_in_one_line_what_no_run_has_or_no_key_names():
    rc, _, err = targets("workflow/config/h200-reference.yaml", "1", "--only", "dataset=products-like,dtype=tf32")
    assert rc == 2 and "--only dtype=tf32: no run of" in err and "(dtype: float32)" in err
    assert len(err.strip().splitlines()) == 1
    rc, _, err = targets("workflow/config/h200-reference.yaml", "1", "--only", "colour=red")
    assert rc == 2 and "give field=value pairs" in err and "batch_size" in err


def test_rounds_of_other_seeds_run_the_same_configurations_when_their_variants_are_the_same():
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from whole_rounds import configurations
    finally:
        sys.path.remove(str(REPO / "scripts"))
    rounds = [targets("workflow/config/h200-tta.yaml", str(r))[1] for r in (1, 2, 3, 6)]
    first, second, third, sixth = map(configurations, rounds)
    assert first == second and third == sixth  # what foresees a round's length (whole_rounds.py)
    assert third < first and len(first) == 8 and len(third) == 6


def test_a_config_that_is_missing_or_breaks_the_schema_is_one_line_before_any_plan(tmp_path):
    broken = tmp_path / "study.yaml"
    broken.write_text("datasets: {tiny: {scale: 1.0}}\nvariants: [zerognn]\n")
    rc, _, err = targets(str(broken), "--count")
    assert rc == 2 and err.strip() == (f"round_targets: {broken}: the config: 'models' is a required property "
                                       f"(workflow/schemas/config.schema.yaml)")
    rc, _, err = targets(str(tmp_path / "absent.yaml"), "--count")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "absent.yaml: not a readable YAML study config" in err
