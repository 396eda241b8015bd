"""Pack a wheelhouse directory into one ``<dir>.tar.xz`` for a GPU host whose carried tree is size-limited.

Wheels are zip files whose entries are already deflated, which xz cannot shrink further. Here each wheel is
rewritten with its entries stored (the same files, so its RECORD hashes still hold, and pip installs it as
before), and the tar of those is xz-compressed, which shrinks what the wheels hold: WholeGraph's wheels (about
36 MiB) travel as about 27 MiB. scripts/install_wheels.sh unpacks such an archive on the host and installs its
wheels like those of a ``.whl-*/`` directory.

    python scripts/pack_wheels.py .whl-wg1        # writes .whl-wg1.tar.xz beside it
"""

from __future__ import annotations

import argparse
import io
import sys
import tarfile
import zipfile
from pathlib import Path

from zerognn.atomic import atomic_path


def stored(wheel: Path) -> bytes:
    """``wheel``'s bytes rewritten with every entry stored, in the same order, with the same names and dates."""
    out = io.BytesIO()
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            copy = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            copy.external_attr, copy.compress_type = info.external_attr, zipfile.ZIP_STORED
            target.writestr(copy, source.read(info))
    return out.getvalue()


def pack(house: Path, archive: Path) -> int:
    """Write ``archive`` (.tar.xz) holding ``house``'s wheels, entries stored; the number of wheels."""
    wheels = sorted(house.glob("*.whl"))
    if not wheels:
        raise SystemExit(f"pack_wheels: no wheels (*.whl) in {house}")
    with atomic_path(archive) as tmp, tarfile.open(tmp, "w:xz", preset=9) as tar:
        for wheel in wheels:
            data = stored(wheel)
            info = tarfile.TarInfo(wheel.name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
            print(f"{wheel.name}: {wheel.stat().st_size / 2**20:.1f} MiB", flush=True)
    return len(wheels)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("house", type=Path, help="a directory of wheels (.whl-<name>)")
    args = parser.parse_args()
    if not args.house.is_dir():
        parser.error(f"{args.house} is not a directory of wheels")
    archive = args.house.with_name(args.house.name.rstrip("/") + ".tar.xz")
    count = pack(args.house, archive)
    print(f"{archive}: {count} wheels, {archive.stat().st_size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
