"""The package's declared layers: a module imports only from its own layer or below, and no import cycles.

Every import counts, the ones inside functions too (a lazy import is still a dependency). A new module
or subpackage must be placed in a layer here, so that where it sits is a decision, not an accident.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "zerognn"
# Lowest first. Each name is a module or subpackage directly under zerognn.
LAYERS: list[set[str]] = [
    # foundation
    {"errors", "lifetime", "atomic", "outputs", "graph", "rng", "distributed", "catalog", "determinism", "optimizer",
     "precision", "column_sums"},
    {"sampling", "datasets"},  # graphs on disk, the reference sampler
    {"models", "cuda"},  # the math: GNN layers and the CUDA operators
    {"measure"},  # timing, traces, memory, floor: the same instrument for every variant
    {"fixed_launch"},  # the envelope, step control and step graph ZeroGNN replays
    {"records"},  # a run's spec and key, its record, the summary
    {"variants", "peers"},  # the execution strategies; peers: the same on other libraries
    {"train", "bench"},  # the measured run, the operator benchmarks
    {"figures", "workflow"},  # what reads the records, what plans the study
    {"cli", "__main__"},  # the command line
]
LAYER = {name: i for i, names in enumerate(LAYERS) for name in names}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports(path: Path) -> set[str]:
    """The zerognn modules (or packages) ``path`` imports, wherever in the file."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "zerognn"}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            if target.split(".")[0] != "zerognn":
                continue
            submodules = {f"{target}.{a.name}" for a in node.names if is_module(f"{target}.{a.name}")}
            found |= submodules or {target}
    return found - {name}


GRAPH = {module_name(p): imports(p) for p in PACKAGE.rglob("*.py")}


def part(module: str) -> str:
    """The module's part: the name directly under zerognn (``__init__`` for the package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_part_of_the_package_has_a_layer():
    parts = {part(m) for m in GRAPH} - {"__init__", "kernels"}
    assert parts <= set(LAYER), f"place these in a layer of tests/test_layers.py: {sorted(parts - set(LAYER))}"


def test_no_import_goes_up_a_layer():
    upward = [f"{m} imports {t}" for m, targets in GRAPH.items() for t in targets
              if part(m) in LAYER and part(t) in LAYER and LAYER[part(t)] > LAYER[part(m)]]
    assert not upward, upward


def test_no_import_cycles():
    cycle = find_cycle(GRAPH)
    assert cycle is None, " -> ".join(cycle)


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


@pytest.mark.parametrize("graph, cycle", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
])
def test_the_cycle_finder_finds_cycles(graph, cycle):
    assert find_cycle(graph) == cycle


def test_the_import_reader_sees_relative_lazy_and_submodule_imports():
    source = PACKAGE / "variants" / "zerognn.py"
    found = imports(source)
    assert {"zerognn.fixed_launch.step_graph", "zerognn.variants"} <= found
    assert "zerognn.models" in imports(PACKAGE / "records" / "spec.py")  # imported inside a function
