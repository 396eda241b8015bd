"""scripts/pack_wheels.py: a wheelhouse packed into one .tar.xz whose wheels hold the same files, stored rather
than deflated, so that pip still installs them (their RECORD hashes hold) and xz can shrink what they hold."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def wheel(house: Path) -> Path:
    """A small, valid, deflated wheel of a package ``packed_demo`` with a compressible module."""
    files = {"packed_demo/__init__.py": ("VALUE = 42\n" + "# padding\n" * 2000).encode(),
             "packed_demo-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: packed-demo\nVersion: 1.0\n",
             "packed_demo-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                                b"Tag: py3-none-any\n"}
    record = "".join(f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
                     f"{len(data)}\n" for name, data in files.items()) + "packed_demo-1.0.dist-info/RECORD,,\n"
    files["packed_demo-1.0.dist-info/RECORD"] = record.encode()
    path = house / "packed_demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


def test_a_packed_wheelhouse_holds_the_same_files_stored_and_pip_installs_them(tmp_path):
    house = tmp_path / ".whl-demo"
    house.mkdir()
    original = wheel(house)
    done = subprocess.run([sys.executable, str(REPO / "scripts/pack_wheels.py"), str(house)], text=True,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    archive = tmp_path / ".whl-demo.tar.xz"
    assert ".whl-demo.tar.xz: 1 wheels" in done.stdout
    out = tmp_path / "unpacked"
    with tarfile.open(archive) as tar:
        assert tar.getnames() == [original.name]
        tar.extractall(out, filter="data")
    with zipfile.ZipFile(original) as before, zipfile.ZipFile(out / original.name) as after:
        assert [i.filename for i in after.infolist()] == [i.filename for i in before.infolist()]
        assert all(after.read(n) == before.read(n) for n in before.namelist())
        assert {i.compress_type for i in after.infolist()} == {zipfile.ZIP_STORED}
    site = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target",
                                str(site), str(out / original.name)], text=True, capture_output=True, timeout=120)
    assert installed.returncode == 0, installed.stderr
    assert (site / "packed_demo/__init__.py").read_bytes().startswith(b"VALUE = 42\n")


def test_a_directory_without_wheels_is_refused_in_one_line(tmp_path):
    (tmp_path / ".whl-empty").mkdir()
    done = subprocess.run([sys.executable, str(REPO / "scripts/pack_wheels.py"), str(tmp_path / ".whl-empty")],
                          text=True, capture_output=True, timeout=60)
    assert done.returncode != 0 and done.stderr.strip().splitlines() == [
        f"pack_wheels: no wheels (*.whl) in {tmp_path / '.whl-empty'}"]
    assert not (tmp_path / ".whl-empty.tar.xz").exists()
