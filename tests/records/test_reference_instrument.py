"""The committed instrument records the docs render (docs/templates/studies.yaml) show what docs/results.md says: every
variant holds at least the ideal and reserves at least what it allocates, all from one commit and one call,
with the table in the docs computed from them."""

import re
from pathlib import Path

import pytest

from tests.records.rendered import study_dir
from zerognn.records.schema import iter_records

REPO = Path(__file__).resolve().parents[2]
RECORDS = list(iter_records(study_dir("instrument") / "runs"))
MIB = 2**20


def test_every_variant_holds_at_least_the_ideal_and_reserves_what_it_allocates():
    assert len(RECORDS) == 8
    for r in RECORDS:
        m = r["metrics"]
        assert 0 < m["ideal_mem_bytes"] <= m["peak_mem_bytes"] <= m["peak_reserved_bytes"], r["run_id"]


def test_one_commit_one_machine_one_call_with_the_source_files_hashed():
    env = [r["environment"] for r in RECORDS]
    for field in ("git_commit", "boot_id", "call_id", "source_sha256"):
        assert len({e[field] for e in env}) == 1 and env[0][field], field


def test_the_docs_table_is_the_records():
    text = (REPO / "docs" / "results.md").read_text().split("## Memory both ways", 1)[1]
    rows = re.findall(r"^\| ([a-z-]+) \| (\d+) \| (\d+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \|$", text, flags=re.M)
    by_variant = {r["config"]["variant"]: r["metrics"] for r in RECORDS}
    assert sorted(v for v, *_ in rows) == sorted(by_variant)
    for variant, alloc, reserved, ideal, alloc_ratio, reserved_ratio in rows:
        m = by_variant[variant]
        assert (int(alloc), int(reserved), int(ideal)) == tuple(round(m[k] / MIB) for k in (
            "peak_mem_bytes", "peak_reserved_bytes", "ideal_mem_bytes")), variant
        assert float(alloc_ratio) == pytest.approx(m["peak_mem_bytes"] / m["ideal_mem_bytes"], abs=0.005)
        assert float(reserved_ratio) == pytest.approx(m["peak_reserved_bytes"] / m["ideal_mem_bytes"], abs=0.005)
