"""The memory section of docs/results.md is the trials study's records (docs/templates/studies.yaml): in every trial
every variant holds at least the ideal and reserves at least what it allocates, and the section's table is the
medians over the trials, with the reserved bytes' range over them."""

import re
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

from tests.records.rendered import study_dir
from zerognn.records.schema import iter_records

REPO = Path(__file__).resolve().parents[2]
RECORDS = list(iter_records(study_dir("trials") / "runs"))
MIB = 2**20
FIELDS = ("peak_mem_bytes", "peak_reserved_bytes", "ideal_mem_bytes")


def test_every_variant_holds_at_least_the_ideal_and_reserves_what_it_allocates():
    assert len(RECORDS) >= 60
    for r in RECORDS:
        m = r["metrics"]
        assert 0 < m["ideal_mem_bytes"] <= m["peak_mem_bytes"] <= m["peak_reserved_bytes"], r["run_id"]


def test_one_commit_with_the_source_files_hashed():
    env = [r["environment"] for r in RECORDS]
    for field in ("git_commit", "source_sha256"):
        assert len({e[field] for e in env}) == 1 and env[0][field], field


def test_the_docs_table_is_the_records():
    text = (REPO / "docs" / "results.md").read_text().split("## Memory both ways", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| ([a-z-]+) \| (\d+) \| (\d+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| (\d+)(?:–(\d+))? \|$",
                      text, flags=re.M)
    by_variant = defaultdict(list)
    for r in RECORDS:
        by_variant[r["config"]["variant"]].append(r["metrics"])
    assert sorted(v for v, *_ in rows) == sorted(by_variant)
    for variant, alloc, reserved, ideal, alloc_ratio, reserved_ratio, low, high in rows:
        medians = {k: statistics.median(m[k] for m in by_variant[variant]) for k in FIELDS}
        assert (int(alloc), int(reserved), int(ideal)) == tuple(round(medians[k] / MIB) for k in FIELDS), variant
        assert float(alloc_ratio) == pytest.approx(medians["peak_mem_bytes"] / medians["ideal_mem_bytes"], abs=0.005)
        assert float(reserved_ratio) == pytest.approx(medians["peak_reserved_bytes"] / medians["ideal_mem_bytes"],
                                                      abs=0.005)
        spread = [round(m["peak_reserved_bytes"] / MIB) for m in by_variant[variant]]
        assert (int(low), int(high or low)) == (min(spread), max(spread)), variant
