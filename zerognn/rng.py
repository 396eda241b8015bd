"""The stateless counter-based random generator that makes every variant draw the same subgraph.

Randomness is a pure function of a key, never of a buffer position or of a generator's state: the
sampler's draw for (seed, epoch, step, hop, node, draw index) is

    key   = combine(combine(combine(combine(combine(SEED0, seed), epoch), step), hop), node)
    r_i   = mix64(key + (i + 1) * GOLDEN)            # the i-th output of splitmix64 seeded with key
    pick  = ((r_i >>> 32) * n) >>> 32                # uniform in [0, n), n < 2^31 (multiply-shift)

with ``mix64`` the splitmix64 finaliser and ``combine(h, x) = mix64(h ^ mix64(x + GOLDEN))``. The
same arithmetic is written here twice — in Python integers (the specification, for tests and for
host-side keys) and in PyTorch int64 ops (CPU or GPU) — and the CUDA kernels repeat it bit for bit.

PyTorch has no unsigned 64-bit arithmetic for every op we need, so values live in int64 with
two's-complement wrap-around; a logical right shift is an arithmetic shift followed by a mask.
"""

from __future__ import annotations

import torch

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
MUL1 = 0xBF58476D1CE4E5B9
MUL2 = 0x94D049BB133111EB
SEED0 = 0x5A45524F474E4E21  # "ZEROGNN!": the root key, so that seed 0 is not a fixed point


def _signed(x: int) -> int:
    """The int64 bit pattern of an unsigned 64-bit value."""
    x &= MASK64
    return x - (1 << 64) if x >= 1 << 63 else x


# ---------------------------------------------------------------- Python-integer specification

def mix64_int(z: int) -> int:
    z &= MASK64
    z = ((z ^ (z >> 30)) * MUL1) & MASK64
    z = ((z ^ (z >> 27)) * MUL2) & MASK64
    return z ^ (z >> 31)


def combine_int(h: int, x: int) -> int:
    return mix64_int(h ^ mix64_int(x + GOLDEN))


def key_int(*parts: int) -> int:
    """Fold a sequence of non-negative integers into one 64-bit key, starting from SEED0."""
    h = SEED0
    for p in parts:
        if p < 0:
            raise ValueError(f"key parts must be non-negative, got {p}")
        h = combine_int(h, p)
    return h


def draw_int(key: int, i: int) -> int:
    return mix64_int(key + (i + 1) * GOLDEN)


def uniform_below_int(r: int, n: int) -> int:
    return ((r >> 32) * n) >> 32


# ---------------------------------------------------------------- PyTorch int64 implementation

def _srl(x: torch.Tensor, k: int) -> torch.Tensor:
    """Logical right shift of int64 bit patterns."""
    return (x >> k) & ((1 << (64 - k)) - 1)


def mix64(z: torch.Tensor) -> torch.Tensor:
    """splitmix64's finaliser on int64 tensors (bit-identical to ``mix64_int``)."""
    z = (z ^ _srl(z, 30)) * _signed(MUL1)
    z = (z ^ _srl(z, 27)) * _signed(MUL2)
    return z ^ _srl(z, 31)


def combine(h: torch.Tensor | int, x: torch.Tensor) -> torch.Tensor:
    """``combine_int`` elementwise; ``h`` may be a Python key (from ``key_int``) or a tensor."""
    if isinstance(h, int):
        h = _signed(h)
    return mix64(mix64(x.to(torch.int64) + _signed(GOLDEN)) ^ h)


def draw(key: torch.Tensor, i: torch.Tensor | int) -> torch.Tensor:
    """The i-th 64-bit draw of each key (``draw_int`` elementwise)."""
    if isinstance(i, int):
        return mix64(key + _signed((i + 1) * GOLDEN))
    return mix64(key + (i.to(torch.int64) + 1) * _signed(GOLDEN))


def uniform_below(r: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    """Map 64-bit draws to integers uniform in [0, n) for 0 < n < 2^31 (multiply-shift)."""
    return (_srl(r, 32) * n.to(torch.int64)) >> 32


def uniform_unit(r: torch.Tensor) -> torch.Tensor:
    """Map 64-bit draws to float64 uniform in [0, 1) using the top 53 bits."""
    return _srl(r, 11).to(torch.float64) * (2.0**-53)


def as_signed(key: int) -> int:
    """A Python key as the int64 value a tensor would hold."""
    return _signed(key)
