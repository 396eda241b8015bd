"""Compile the CUDA operators in ``kernels/`` with NVRTC (cuda-core), with an on-disk cache.

Each ``kernels/*.cu`` file is one operator; its ``extern "C" __global__`` functions are its kernels.
Included files from ``kernels/`` (the shared header; the device-launch module includes the operators
it launches) are inlined before compiling (with a ``#line`` marker so NVRTC's messages keep the
``.cu`` file's own line numbers), so the source handed to NVRTC is everything the binary depends on and
cuda-core's program cache, keyed by source + options + NVRTC version, never serves a stale binary.
Compiling needs no GPU: ``zerognn build --arch sm_90`` works on any machine with NVRTC installed.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..errors import ZeroGNNError, missing_extra

log = logging.getLogger(__name__)

HEADER = "zerognn_common.cuh"
DEVICE_RUNTIME_MARKER = "// zerognn: device-runtime"
_INCLUDE = re.compile(r'^#include "([^"]+)"[ \t]*$', re.M)
_KERNEL = re.compile(r'extern "C" __global__ void (\w+)\s*\(([^)]*)\)', re.S)
# C types a kernel parameter may have (the typedefs of zerognn_common.cuh included).
PARAM_TYPES = ("float", "int", "unsigned", "i64", "u64")
# What launching a kernel without cuda-core says (zerognn.cuda.launch).
CUDA_EXTRA_MISSING = ("running the CUDA operators needs the 'cuda' extra (cuda-core is not installed); "
                      "pip install 'zerognn[cuda]'")


def kernels_dir() -> Path:
    """``$ZEROGNN_KERNELS_DIR``; else the sources installed with the package (``zerognn/kernels/``, from
    a wheel); else ``kernels/`` of the checkout this package lives in (an editable install)."""
    if env := os.environ.get("ZEROGNN_KERNELS_DIR"):
        path = Path(env)
    else:
        package = Path(__file__).resolve().parents[1]
        installed = package / "kernels"
        path = installed if (installed / HEADER).is_file() else package.parent / "kernels"
    if not (path / HEADER).is_file():
        raise ZeroGNNError(
            f"CUDA sources not found at {path} (no {HEADER}); reinstall zerognn (pip install .) or set "
            f"ZEROGNN_KERNELS_DIR to the repository's kernels/ directory."
        )
    return path


def cache_dir() -> Path:
    return Path(os.environ.get("ZEROGNN_CACHE_DIR", Path.home() / ".cache" / "zerognn" / "kernels"))


@dataclass(frozen=True)
class Operator:
    """One ``.cu`` file: its name, the kernels it defines and its self-contained source."""

    name: str
    path: Path
    kernels: tuple[str, ...]
    source: str
    # uses the device runtime (launches kernels, sets graph conditionals): relocatable code, linked with cudadevrt
    device_runtime: bool = False
    # each kernel's parameters as declared in the .cu file: the one source of what a launch must pass
    signatures: dict[str, tuple[Param, ...]] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Param:
    """One kernel parameter: its name, C base type (``PARAM_TYPES``) and whether it is a pointer."""

    name: str
    ctype: str
    pointer: bool


def parse_params(kernel: str, declared: str, path: Path) -> tuple[Param, ...]:
    """The parameters of ``kernel`` from its declaration's parameter list."""
    params = []
    for text in filter(None, (" ".join(p.split()) for p in declared.split(","))):
        words = [w for w in text.replace("*", " * ").split() if w not in ("const", "volatile", "__restrict__")]
        pointer = "*" in words
        words = [w for w in words if w != "*"]
        if len(words) != 2 or words[0] not in PARAM_TYPES:
            raise ZeroGNNError(f"{path.name}: kernel {kernel} declares parameter {text!r}; kernel parameters must be "
                               f"one of {', '.join(PARAM_TYPES)} (or a pointer to one) and a name")
        params.append(Param(words[1], words[0], pointer))
    return tuple(params)


def _inline_includes(path: Path, text: str, directory: Path, seen: set[str] | None = None) -> str:
    """Replace each ``#include "x"`` of a file in ``directory`` by its text, recursively, each file once."""
    seen = set() if seen is None else seen

    def substitute(match: re.Match) -> str:
        included = directory / match.group(1)
        if not included.is_file():
            raise ZeroGNNError(f"{path.name} includes {match.group(1)}, which is not in {directory}")
        resume = f'#line {text[:match.start()].count(chr(10)) + 2} "{path.name}"'
        if included.name in seen:
            return resume
        seen.add(included.name)
        body = _inline_includes(included, included.read_text(), directory, seen)
        return f'#line 1 "{included.name}"\n{body}\n{resume}'

    return _INCLUDE.sub(substitute, text)


@cache
def operators() -> dict[str, Operator]:
    """Every operator in ``kernels/``, by file stem."""
    directory = kernels_dir()
    found = {}
    for path in sorted(directory.glob("*.cu")):
        text = path.read_text()
        declared = _KERNEL.findall(text)
        if not declared:
            raise ZeroGNNError(f'{path} defines no extern "C" __global__ kernel')
        signatures = {name: parse_params(name, params, path) for name, params in declared}
        found[path.stem] = Operator(path.stem, path, tuple(signatures), _inline_includes(path, text, directory),
                                    DEVICE_RUNTIME_MARKER in text, signatures)
    return found


def kernel_operator(kernel: str) -> Operator:
    for op in operators().values():
        if kernel in op.kernels:
            return op
    raise ZeroGNNError(f"no operator in {kernels_dir()} defines kernel {kernel!r}")


def _program_cache():
    """cuda-core's on-disk program cache (cuda-core >= 1.2 with ``cuda.core.utils``), or None."""
    try:
        from cuda.core.utils import FileStreamProgramCache
    except ImportError:
        log.info("this cuda-core has no FileStreamProgramCache: kernels are compiled in every process")
        return None
    path = cache_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ZeroGNNError(f"kernel cache directory {path} cannot be made ({exc.strerror}); set ZEROGNN_CACHE_DIR "
                           f"to a writable directory") from exc
    if not os.access(path, os.W_OK | os.X_OK):
        raise ZeroGNNError(f"kernel cache directory {path} is not writable; set ZEROGNN_CACHE_DIR "
                           f"to a writable directory")
    return FileStreamProgramCache(path)


def compile_operator(op: Operator, arch: str):
    """NVRTC-compile one operator to a cubin for ``arch`` (e.g. "sm_90"); returns cuda-core's ObjectCode."""
    if not re.fullmatch(r"sm_\d+a?", arch):
        raise ZeroGNNError(f"arch must look like sm_90 (or sm_90a), got {arch!r}")
    try:
        from cuda.core import Program, ProgramOptions
    except ImportError as exc:
        raise missing_extra("cuda", "compiling the CUDA operators", exc) from exc
    options = ProgramOptions(name=op.path.name, arch=arch, std="c++17", relocatable_device_code=op.device_runtime)
    cache = _program_cache()
    try:
        program = Program(op.source, "c++", options)
        code = program.compile("cubin", cache=cache) if cache is not None else program.compile("cubin")
    except Exception as exc:
        text = str(exc)
        if "compilation log" in text:  # NVRTC's log names the file and line
            raise ZeroGNNError(f"compiling {op.path} for {arch} failed:\n{text.rstrip(chr(0))}") from exc
        raise ZeroGNNError(
            f"compiling {op.path} for {arch} failed ({type(exc).__name__}: {text}); is NVRTC installed? "
            f"`pip install nvidia-cuda-nvrtc` (or put a CUDA toolkit's libnvrtc on the library path)"
        ) from exc
    finally:
        if cache is not None:
            cache.close()
    return _link_device_runtime(code, op, arch) if op.device_runtime else code


def _link_device_runtime(code, op: Operator, arch: str):
    """Link relocatable device code with cudadevrt (the device runtime) into a loadable cubin."""
    try:
        from cuda.core import Linker, LinkerOptions, ObjectCode
        from cuda.pathfinder import find_static_lib

        devrt = ObjectCode.from_library(find_static_lib("cudadevrt"))
        return Linker(code, devrt, options=LinkerOptions(arch=arch)).link("cubin")
    except Exception as exc:
        raise ZeroGNNError(
            f"linking {op.path} with cudadevrt for {arch} failed ({type(exc).__name__}: {exc}); device-side launch "
            f"needs libcudadevrt.a and nvJitLink: `pip install nvidia-cuda-runtime nvidia-nvjitlink` or a CUDA toolkit"
        ) from exc


def build_all(arch: str) -> dict[str, int]:
    """Compile every operator for ``arch``; returns cubin sizes by operator."""
    sizes = {}
    for name, op in operators().items():
        sizes[name] = len(compile_operator(op, arch).code)
        log.info("built %s for %s (%d bytes)", op.path.name, arch, sizes[name])
    return sizes
