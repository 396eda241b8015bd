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
    assert rc == 0 and len(paths) == 8 and all(p.startswith("results/runs/") and p.endswith("__t3.json") for p in paths)
    assert len({p.split("__")[2] for p in paths}) == 8  # eight variants


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
