"""The numbers in the rendered regions of README.md and docs/*.md are what their templates make of the committed
records now (scripts/render_docs.py): a record or summary changed without re-rendering fails here."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from zerognn.errors import ZeroGNNError

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
    region = render_docs.REGION.search(text)
    assert region, "docs/results.md has no rendered region"
    body = region.group(3)
    edited = text.replace(body, body.replace("0.38 [0.38–0.39]", "0.36 [0.36–0.37]"), 1)
    assert edited != text
    assert render_docs.render(edited, render_docs.environment()) == text


def test_a_template_that_picks_no_row_or_two_commits_says_so(tmp_path):
    study = render_docs.Study("h200/small-batch")
    with pytest.raises(ZeroGNNError, match=r"picks 0 summary rows, not one"):
        study.row(variant="torch-eager")
    with pytest.raises(ZeroGNNError, match=r"has no column batch"):
        study.row(batch=256)
    (tmp_path / "t.md").write_text('{{ study("h200/small-batch").row(variant="zerognn").nothing }}')
    page = ("<!-- rendered from t.md by scripts/render_docs.py: edit the template -->\n"
            "<!-- end of rendered region -->\n")
    with pytest.raises(ZeroGNNError, match=r"^template t\.md: UndefinedError: .*nothing"):
        render_docs.render(page, render_docs.environment(tmp_path))


def test_the_table_keeps_the_summary_tables_cells():
    table = render_docs.Study("h200/small-batch").table(["variant", "× host-mediated [95 % CI]"])
    assert table.splitlines()[0] == "| variant | × host-mediated [95 % CI] |"
    assert any(line.startswith("| zerognn | ") and "[" in line for line in table.splitlines())
    with pytest.raises(ZeroGNNError, match="has no column"):
        render_docs.Study("h200/small-batch").table(["speed"])
