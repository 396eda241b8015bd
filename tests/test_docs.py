"""The docs' examples run as written: every shell block marked runnable on a CPU is executed in an empty
directory and must succeed."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
MARK = "<!-- runnable on a CPU -->"


def runnable_blocks():
    blocks = []
    for page in sorted(DOCS.glob("*.md")):
        for block in re.findall(re.escape(MARK) + r"\n```bash\n(.*?)```", page.read_text(), flags=re.S):
            blocks.append(pytest.param(block, id=f"{page.name}:{len(blocks)}"))
    return blocks


def test_the_docs_mark_runnable_examples():
    assert runnable_blocks(), f"no block in docs/ is marked {MARK}"


@pytest.mark.slow
@pytest.mark.parametrize("block", runnable_blocks())
def test_a_runnable_example_runs_as_written(block, tmp_path):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env, text=True,
                          capture_output=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert list((tmp_path / "results" / "runs").glob("*.json")) or "runs/" not in block
