"""The optimizer every variant trains with (``torch.optim.Adam``), built without loading PyTorch's compiler.

``torch.optim.Optimizer`` marks four methods (``add_param_group``, ``zero_grad``, ``state_dict``,
``load_state_dict``) as never to be compiled through ``torch._disable_dynamo``, which imports
``torch._dynamo`` on a method's first call just to build that mark: seconds of every run on the H200 host
(``phase_s`` shows them), whether or not anything compiles. Outside a compiled frame the mark changes
nothing, so a run resolves it to the plain method up front (``keep_dynamo_unloaded``) and a variant that
compiles takes it back before compiling (``restore_dynamo_marks``). ``Adam.step`` itself still imports
dynamo, so variants that call it load it in their first warm-up step; the ZeroGNN variants step Adam
through its fused kernel and never load it.
"""

from __future__ import annotations

import torch
from torch.optim import Optimizer

# The attribute torch._disable_dynamo caches its wrapped function in (torch/_compile.py).
_CACHE = "__dynamo_disable"
_MARKED = ("add_param_group", "zero_grad", "state_dict", "load_state_dict")


def _plain(name: str):
    """The undecorated method behind ``Optimizer.<name>`` (None if torch no longer wraps it)."""
    return getattr(getattr(Optimizer, name), "__wrapped__", None)


def keep_dynamo_unloaded() -> None:
    """Let the marked Optimizer methods run as plain methods, without importing dynamo."""
    for name in _MARKED:
        plain = _plain(name)
        if plain is not None and getattr(plain, _CACHE, None) is None:
            setattr(plain, _CACHE, plain)


def restore_dynamo_marks() -> None:
    """Undo ``keep_dynamo_unloaded``: the next call of each method builds its real mark (a compiling variant)."""
    for name in _MARKED:
        plain = _plain(name)
        if plain is not None and getattr(plain, _CACHE, None) is plain:
            delattr(plain, _CACHE)


def build_adam(params, lr: float, cuda: bool) -> torch.optim.Adam:
    """Adam over ``params``: fused on a GPU (one kernel instead of a dozen multi-tensor passes, for every variant
    alike) and capturable, so that a variant may record its step in a CUDA Graph."""
    keep_dynamo_unloaded()
    return torch.optim.Adam(params, lr=lr, capturable=cuda, fused=cuda)
