"""The figures' files: the supported list (``figures.json``), the manifest, and stale figures' removal.

The supported list maps every figure, in ``FIGURES`` order, to null where the records support it, else
to the reason they do not (``zerognn summarize --figures``). The workflow plans the figure jobs from it
and the manifest is written from it, so nothing is drawn just to learn which figures exist.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..atomic import write_json
from ..errors import ZeroGNNError, one_line
from .needs import FIGURES, FORMATS


def write_supported(path: str | os.PathLike, reasons: Mapping[str, str | None]) -> None:
    write_json(path, {name: reasons[name] for name in FIGURES})


def read_supported(path: str | os.PathLike) -> dict[str, str | None]:
    """The supported list at ``path``; ZeroGNNError (saying how to rebuild it) unless it names every
    figure with null or a reason."""
    rebuild = f"write it with `zerognn summarize --runs RUNS_DIR --out SUMMARY --figures {path}`"
    try:
        reasons = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ZeroGNNError(f"supported-figures list {path} does not exist; {rebuild}.") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ZeroGNNError(f"cannot read supported-figures list {path}: {one_line(e)}; {rebuild}.") from e
    if (not isinstance(reasons, dict) or sorted(reasons) != sorted(FIGURES)
            or not all(r is None or isinstance(r, str) for r in reasons.values())):
        raise ZeroGNNError(f"supported-figures list {path} does not map each of {', '.join(FIGURES)} to null or a "
                           f"reason; it was written by another version or damaged: {rebuild}.")
    return {name: reasons[name] for name in FIGURES}


def figure_files(reasons: Mapping[str, str | None], out_dir: str | os.PathLike,
                 formats: Sequence[str] = FORMATS) -> list[Path]:
    """The files the supported figures are written to (what a full render writes)."""
    return [Path(out_dir) / f"{name}.{fmt}" for name in FIGURES if reasons[name] is None for fmt in formats]


def remove_figure(out_dir: str | os.PathLike, name: str, formats: Sequence[str] = FORMATS) -> None:
    for fmt in formats:
        (Path(out_dir) / f"{name}.{fmt}").unlink(missing_ok=True)


def manifest_files(supported: str | os.PathLike, out_dir: str | os.PathLike) -> list[Path]:
    """The supported figures' files in ``out_dir``, which must all exist; the files of the other figures
    are removed, so that an earlier render the records no longer support cannot pass for a current one."""
    reasons = read_supported(supported)
    files = figure_files(reasons, out_dir)
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise ZeroGNNError(f"figures {', '.join(missing)} are not rendered yet; run `zerognn figures` first")
    for name, reason in reasons.items():
        if reason is not None:
            remove_figure(out_dir, name)
    return files
