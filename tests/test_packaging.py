"""The built wheel is complete: a fresh venv installs it and compiles every CUDA operator from it."""

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
def test_the_wheel_installs_in_a_fresh_venv_and_builds_every_kernel(tmp_path):
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
    # Run outside the checkout: the sources must come from the installed package.
    built = subprocess.run([bin_dir / "zerognn", "build", "--arch", "sm_90"], cwd=tmp_path, env=env,
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    assert "sage_concat" in built.stdout and "device_launch" in built.stdout
