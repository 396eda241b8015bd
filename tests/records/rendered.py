"""Where the committed study the docs render lives (docs/templates/studies.yaml, which scripts/render_docs.py
reads too), for the tests that check what the docs say against that study's records."""

from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
STUDIES = REPO / "docs" / "templates" / "studies.yaml"


def study_dir(name: str) -> Path:
    """``results/reference/<card>/<study>/``, the directory the docs render study ``name`` from."""
    return REPO / "results" / "reference" / yaml.safe_load(STUDIES.read_text())[name]
