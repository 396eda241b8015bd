"""Every committed reference summary is what `zerognn summarize` makes of the records beside it, byte for byte
(its CSV and its markdown table): the medians, their intervals, the CVs and the bootstrap intervals of every ratio
are reproducible from the records with the documented method (docs/measurement.md). A study that spans machine
instances is summarised with --allow-mixed-provenance only where its provenance.json says so, and says so truly."""

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from zerognn.records.summary import read_summary, summarize
from zerognn.records.table import markdown_table

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "results" / "reference"
sys.path.insert(0, str(REPO / "scripts"))
from commit_study import PROVENANCE, allows_mixed_provenance, machine_instances  # noqa: E402

sys.path.remove(str(REPO / "scripts"))
STUDIES = sorted(p.parent for p in REFERENCE.rglob("summary.csv") if (p.parent / "runs").is_dir())


def test_the_reference_studies_are_found():
    found = {p.relative_to(REFERENCE).as_posix() for p in STUDIES}
    assert found >= {"cpu", "h200/tta", "h100/tta", "h100/reference"}


@pytest.mark.parametrize("study", STUDIES, ids=lambda p: p.relative_to(REFERENCE).as_posix())
def test_a_committed_summary_is_recomputed_from_its_records(study, tmp_path):
    committed = read_summary(study / "summary.csv")
    # provenance checked (one commit and one machine per group) unless the study's provenance.json allows more
    summarize(study / "runs", tmp_path / "summary.csv", allow_mixed_provenance=allows_mixed_provenance(study))
    pd.testing.assert_frame_equal(read_summary(tmp_path / "summary.csv"), committed, check_exact=True)
    assert (tmp_path / "summary.csv").read_bytes() == (study / "summary.csv").read_bytes()
    if (study / "summary.md").is_file():
        assert markdown_table(read_summary(tmp_path / "summary.csv")) == (study / "summary.md").read_text()


@pytest.mark.parametrize("study", [s for s in STUDIES if (s / PROVENANCE).is_file()],
                         ids=lambda p: p.relative_to(REFERENCE).as_posix())
def test_a_study_allowed_to_mix_machines_lists_the_instances_its_records_ran_on(study):
    stated = json.loads((study / PROVENANCE).read_text())
    assert stated["mixed_provenance"] is True
    assert stated["machine_instances"] == machine_instances(study / "runs")
    assert len(stated["machine_instances"]) > 1  # one instance would need no allowance
