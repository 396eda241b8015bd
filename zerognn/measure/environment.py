"""The environment a run happened in: code version and provenance (``zerognn.measure.provenance``), package
versions, GPU, driver, host and time.

Every probe is best-effort: a missing tool, package or GPU gives ``null``, never an exception, so a
record can always be written.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import shutil
import socket
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import torch

from . import provenance
from .host_load import run_affinity

PACKAGE_DIR = Path(__file__).resolve().parents[1]

# Distribution names as pip knows them; each version goes under the name with "-" made "_". (torch's
# comes from torch.__version__, which keeps the local build tag such as "+cu130".)
VERSIONED_PACKAGES = ("numpy", "cuda-core", "cuda-bindings", "snakemake", "ogb")


def collect_environment(device: torch.device | str) -> dict[str, Any]:
    """Describe this machine and checkout for a run on ``device`` (a JSON-ready dict)."""
    device = torch.device(device)
    cuda = device.type == "cuda" and torch.cuda.is_available()
    commit, dirty, source = provenance.git_state()
    return {
        "git_commit": commit,
        "git_dirty": dirty,
        "git_source": source,
        "source_sha256": provenance.source_sha256(),
        "boot_id": provenance.boot_id(),
        "call_id": provenance.call_id(),
        "python": platform.python_version(),
        "torch": str(torch.__version__),
        "cuda": torch.version.cuda,
        **{name.replace("-", "_"): _version(name) for name in VERSIONED_PACKAGES},
        "device": str(device),
        "gpu_name": torch.cuda.get_device_name(device) if cuda else None,
        "gpu_count": torch.cuda.device_count() if torch.cuda.is_available() else 0,
        "driver_version": _driver_version(),
        "hostname": socket.gethostname(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(run_affinity()),  # the cores the run (and any host load beside it) may use
        "utc_time": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _run(cmd: list[str]) -> str | None:
    """Stripped stdout of ``cmd`` run in the package directory, or None if it fails."""
    if shutil.which(cmd[0]) is None:
        return None
    try:
        done = subprocess.run(cmd, cwd=PACKAGE_DIR, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _driver_version() -> str | None:
    """The NVIDIA driver version (e.g. "580.65.06"): NVML through cuda-bindings, else nvidia-smi."""
    if version := _nvml_driver_version():
        return version
    out = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    return out.splitlines()[0].strip() if out else None


def _nvml_driver_version() -> str | None:
    try:
        from cuda.bindings import nvml

        nvml.init_v2()
        try:
            version = nvml.system_get_driver_version()
        finally:
            nvml.shutdown()
    except Exception:  # no cuda-bindings, no driver or no NVML: the caller falls back to nvidia-smi
        return None
    return version.decode() if isinstance(version, bytes) else str(version)


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None
