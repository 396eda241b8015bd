"""Every committed reference summary is what `zerognn summarize` makes of the records beside it, byte for byte
(its CSV and its markdown table): the medians, their intervals, the CVs and the bootstrap intervals of every ratio
are reproducible from the records with the documented method (docs/measurement.md)."""

from pathlib import Path

import pandas as pd
import pytest

from zerognn.records.summary import read_summary, summarize
from zerognn.records.table import markdown_table

REFERENCE = Path(__file__).resolve().parents[2] / "results" / "reference"
STUDIES = sorted(p.parent for p in REFERENCE.rglob("summary.csv") if (p.parent / "runs").is_dir())


def test_the_reference_studies_are_found():
    found = {p.relative_to(REFERENCE).as_posix() for p in STUDIES}
    assert found >= {"cpu", "h200", "h200/instrument", "h200/tta", "h100/tta"}


@pytest.mark.parametrize("study", STUDIES, ids=lambda p: p.relative_to(REFERENCE).as_posix())
def test_a_committed_summary_is_recomputed_from_its_records(study, tmp_path):
    committed = read_summary(study / "summary.csv")
    summarize(study / "runs", tmp_path / "summary.csv")  # provenance checked: one commit and machine per group
    pd.testing.assert_frame_equal(read_summary(tmp_path / "summary.csv"), committed, check_exact=True)
    assert (tmp_path / "summary.csv").read_bytes() == (study / "summary.csv").read_bytes()
    if (study / "summary.md").is_file():
        assert markdown_table(read_summary(tmp_path / "summary.csv")) == (study / "summary.md").read_text()
