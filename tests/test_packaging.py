"""The built wheel is complete and its extras are real: in a fresh venv the core alone trains on the
CPU, a feature whose extra is missing says which extra to install, and with the `cuda` extra every
CUDA operator compiles from the sources the wheel carries."""

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_wheel_installs_in_a_fresh_venv_core_first_then_with_the_cuda_extra(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", dist,
                    REPO], check=True)
    wheel = next(dist.glob("zerognn-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "zerognn/kernels/zerognn_common.cuh" in names and "zerognn/kernels/sage_concat.cu" in names
    assert any(n.endswith("/licenses/LICENSE") for n in names)

    venv.create(tmp_path / "venv", with_pip=True)
    bin_dir = tmp_path / "venv" / "bin"
    # The PyTorch this suite runs on (a CPU build here), so that the wheel's torch requirement does not
    # pull another build.
    torch_requirement = f"torch=={torch.__version__.split('+')[0]}"
    subprocess.run([bin_dir / "python", "-m", "pip", "install", "-q", torch_requirement, wheel], check=True)
    env = os.environ | {"ZEROGNN_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("ZEROGNN_KERNELS_DIR", None)

    def zerognn(*args):  # outside the checkout: the package and its sources come from the venv
        return subprocess.run([bin_dir / "zerognn", *args], cwd=tmp_path, env=env, capture_output=True, text=True)

    # the core: no CUDA wheels, no matplotlib, no Snakemake, no ogb
    listed = subprocess.run([bin_dir / "python", "-m", "pip", "list", "--format=freeze"], capture_output=True,
                            text=True, check=True).stdout.lower()
    assert not any(f"{p}==" in listed for p in ("cuda-core", "matplotlib", "snakemake", "ogb"))
    made = zerognn("dataset", "make", "tiny", "--out", "data/tiny", "--device", "cpu")
    assert made.returncode == 0, made.stderr[-2000:]
    ran = zerognn("run", "--dataset", "tiny", "--dataset-dir", "data/tiny", "--variant", "torch-eager",
                  "--batch-size", "64", "--fanouts", "5,3", "--warmup-steps", "1", "--measure-steps", "2",
                  "--profile-steps", "0", "--eval-nodes", "0", "--device", "cpu", "--out", "runs/")
    record = tmp_path / "runs" / "tiny__sage__torch-eager__b64__f5-3__g1.json"
    assert ran.returncode == 0 and record.is_file(), ran.stderr[-2000:]
    for args, extra in ((("build", "--arch", "sm_90"), "cuda"),
                        (("figures", "--summary", "s.csv", "--runs", "runs", "--out", "fig"), "figures")):
        failed = zerognn(*args)
        message = failed.stderr.strip().splitlines()
        assert failed.returncode != 0 and len(message) == 1, failed.stderr[-2000:]
        assert f"pip install 'zerognn[{extra}]'" in message[0], message

    subprocess.run([bin_dir / "python", "-m", "pip", "install", "-q", f"{wheel}[cuda]"], check=True)
    built = zerognn("build", "--arch", "sm_90")
    assert built.returncode == 0, built.stderr[-2000:]
    assert "sage_concat" in built.stdout and "device_launch" in built.stdout


def test_the_citation_file_names_the_paper_the_readme_cites():
    from pathlib import Path

    import yaml

    repo = Path(__file__).resolve().parents[1]
    citation = yaml.safe_load((repo / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["title"] and citation["authors"]
    (paper,) = citation["references"]
    readme = (repo / "README.md").read_text()
    assert paper["title"] in " ".join(readme.split()) and paper["identifiers"][0]["value"] in readme
    assert citation["version"] == __import__("zerognn").__version__
