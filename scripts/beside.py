"""What the reference holds beside its studies, each made by a stage of its own (scripts/gpu_stages.sh): the
operator benchmark's output (``zerognn bench-ops``), whose header names its commit, and the profiler after-effect's
records (``scripts/profiler_aftereffect.py``), with and without the session between the windows. Read back here for
the docs (scripts/render_docs.py) and the reference's status (scripts/reference_status.py)."""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from pathlib import Path

from zerognn.errors import ZeroGNNError

# Each by the name it has under a card's directory, with the stage that makes it.
BESIDE = {"bench-ops.txt": "STAGE=bench-ops", "aftereffect": "STAGE=aftereffect CONTROL=1"}
COMMIT = re.compile(r"\bcommit ([0-9a-f]{7,40})\b")


def bench_ops(reference: Path, path: str) -> dict:
    """A committed ``zerognn bench-ops`` output (``path`` under ``reference``), read back: ``path``,
    ``commit`` (the one its header names), ``ceiling`` (the device copy ceiling, GB/s), ``ops`` (each operator's
    ``name``, ``us``, ``mb``, ``gbps``, ``of_copy``), ``envelope`` (the frontier capacities) and ``padding`` (each
    SAGE dense layer's ``layer``, ``in``, ``live``, ``padded``, ``exact_us``, ``padded_us``, ``cost_us``)."""
    text = (reference / path).read_text()
    commit = COMMIT.search(text.splitlines()[0])
    ceiling = re.search(r"device copy ceiling (\d+) GB/s", text)
    envelope = re.search(r"calibrated envelope \[([\d, ]+)\]", text)
    if not (commit and ceiling and envelope):
        raise ZeroGNNError(f"{path}: not a zerognn bench-ops output (its header names no commit, or it has no copy "
                           f"ceiling or envelope); run `zerognn bench-ops` again and commit its whole output")
    number = r"(-?[\d,]+(?:\.\d+)?)"
    ops = [{"name": m[1].strip(), "us": float(m[2]), "mb": float(m[3]), "gbps": float(m[4]),
            "of_copy": float(m[5]) / 100}
           for m in re.finditer(rf"^(\S.*?) +{number} +{number} +{number} +{number}%$", text, re.M)]
    padding = [dict(zip(("layer", "in", "live", "padded", "exact_us", "padded_us", "cost_us"),
                        (float(v.replace(",", "")) for v in m.groups())))
               for m in re.finditer(rf"^ +{number} +{number} +{number} +{number} +{number} +{number} +{number}$",
                                    text, re.M)]
    return {"path": path, "commit": commit[1][:7], "ceiling": float(ceiling[1]), "ops": ops, "padding": padding,
            "envelope": [int(v) for v in envelope[1].split(",")]}


def aftereffect(reference: Path, path: str) -> dict:
    """The committed profiler after-effect records (``scripts/profiler_aftereffect.py``'s, a directory ``path``
    under ``reference``), read back: ``path``, ``commit``, ``gpu``, ``processes``, ``calls``,
    ``machines``, ``rounds`` (processes per variant and kind), the windows' lengths ``before``/``after`` and the
    session's ``profiled`` steps, ``control`` (whether processes with no session between the windows are among
    them) and ``ratios``: for each variant, ``with`` and ``without`` the session, each process's median step of its
    second window over its first's."""
    records = [json.loads(p.read_text()) for p in sorted((reference / path).glob("*.json"))]
    if not records:
        raise ZeroGNNError(f"results/reference/{path}: no after-effect records; record them with STAGE=aftereffect")
    env = [r["environment"] for r in records]
    commits = {e["git_commit"][:7] for e in env}
    if len(commits) != 1:
        raise ZeroGNNError(f"results/reference/{path}: records of {len(commits)} commits "
                           f"({', '.join(sorted(commits))}); an after-effect study is one commit's")
    ratios: dict[str, dict[str, list[float]]] = {}
    for r in records:
        kind = "with" if r["profiled_steps"] else "without"
        ratios.setdefault(r["variant"], {"with": [], "without": []})[kind].append(
            statistics.median(r["after_ms"]) / statistics.median(r["before_ms"]))
    profiled = {r["profiled_steps"] for r in records if r["profiled_steps"]}
    return {"path": path, "commit": commits.pop(), "gpu": env[0]["gpu_name"], "processes": len(records),
            "calls": len({e["call_id"] for e in env}), "machines": len({e["boot_id"] for e in env}),
            "rounds": max(len(kinds["with"]) for kinds in ratios.values()),
            "before": len(records[0]["before_ms"]), "after": len(records[0]["after_ms"]),
            "profiled": profiled.pop() if len(profiled) == 1 else None,
            "control": any(kinds["without"] for kinds in ratios.values()), "ratios": ratios}


def commits(path: Path) -> Counter:
    """The commits of what lies at ``path``: a bench-ops output's (its header's), or each record's of a directory of
    after-effect records; none where nothing is there."""
    if path.is_file():
        named = COMMIT.search(path.read_text().split("\n", 1)[0])
        return Counter([named[1][:7] if named else "none"])
    return Counter((json.loads(p.read_text())["environment"].get("git_commit") or "none")[:7]
                   for p in sorted(path.glob("*.json")))
