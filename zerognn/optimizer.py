"""The optimizer every variant trains with (``torch.optim.Adam``), built without loading PyTorch's compiler.

``torch.optim.Optimizer`` marks four methods (``add_param_group``, ``zero_grad``, ``state_dict``,
``load_state_dict``) as never to be compiled through ``torch._disable_dynamo``, which imports
``torch._dynamo`` on a method's first call just to build that mark: seconds of every run on the H200 host
(``phase_s`` shows them), whether or not anything compiles. Outside a compiled frame the mark changes
nothing, so a run resolves it to the plain method up front (``keep_dynamo_unloaded``) and a variant that
compiles takes it back before compiling (``restore_dynamo_marks``). ``Adam.step`` itself imports dynamo
too, for graph breaks that only a compiled frame heeds, so a GPU run steps Adam through ``adam_step``: the
fused kernel over the whole tensors, the launches ``Adam.step`` makes, bit for bit, without its wrappers
(the ZeroGNN variants launch the same kernel over chunks, ``zerognn.fixed_launch.chunked_adam``).
"""

from __future__ import annotations

import torch
from torch.optim import Optimizer

from .errors import ZeroGNNError

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


def materialize_adam_state(optimizer: torch.optim.Adam) -> None:
    """Create Adam's lazily-initialised state now, as its first step would (zero moments, step 0), through
    ``load_state_dict`` rather than a step: nothing moves, and ``Adam.step`` (which loads dynamo) is not called."""
    if type(optimizer) is not torch.optim.Adam:
        raise ZeroGNNError(f"Adam's state up front is for torch.optim.Adam, not {type(optimizer).__name__}")
    saved = optimizer.state_dict()
    index = 0  # state_dict numbers the parameters across the groups, in order
    for group in optimizer.param_groups:
        keys = ["exp_avg", "exp_avg_sq"] + (["max_exp_avg_sq"] if group["amsgrad"] else [])
        for p in group["params"]:
            # load_state_dict puts each value on its parameter's device, a tensor step in float32 where Adam is
            # capturable or fused, as Adam's own initialisation does.
            state = {"step": torch.zeros((), dtype=torch.float32)}
            state.update({k: torch.zeros_like(p, memory_format=torch.preserve_format) for k in keys})
            saved["state"][index] = state
            index += 1
    optimizer.load_state_dict(saved)


def adam_step(optimizer: torch.optim.Optimizer) -> None:
    """``optimizer.step()``; for a fused Adam (a GPU run's, ``build_adam``) its fused kernel over the whole tensors
    without ``Adam.step``'s wrappers, whose first call imports dynamo (seconds of every process on the H200 host)."""
    if type(optimizer) is not torch.optim.Adam or not all(g.get("fused") for g in optimizer.param_groups):
        optimizer.step()
        return
    if not optimizer.state:
        materialize_adam_state(optimizer)
    fused_adam_step(optimizer)


def _views(tensor: torch.Tensor, chunk: int | None) -> list[torch.Tensor]:
    if chunk is None:
        return [tensor]
    flat = tensor.view(-1)
    return [flat[i:i + chunk] for i in range(0, flat.numel(), chunk)]


@torch.no_grad()
def fused_adam_step(optimizer: torch.optim.Optimizer, chunk: int | None = None) -> None:
    """``optimizer.step()`` for a fused Adam without AMSGrad, maximize or grad scaling: its fused kernel over the
    whole tensors (the launch ``optimizer.step()`` itself makes), or over views of ``chunk`` elements."""
    if type(optimizer) is not torch.optim.Adam:
        raise ZeroGNNError(f"a fused Adam step supports torch.optim.Adam, not {type(optimizer).__name__}")
    if getattr(optimizer, "grad_scale", None) is not None or getattr(optimizer, "found_inf", None) is not None:
        raise ZeroGNNError("a fused Adam step does not support gradient scaling (AMP)")
    for group in optimizer.param_groups:
        unsupported = [k for k in ("amsgrad", "maximize", "differentiable") if group.get(k)]
        if not group.get("fused") or unsupported:
            raise ZeroGNNError(f"a fused Adam step needs Adam(fused=True) without {', '.join(unsupported)}")
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            continue
        states = [optimizer.state[p] for p in params]
        if any(not torch.is_tensor(s.get("step")) for s in states):
            raise ZeroGNNError("Adam's state must exist (tensor steps) before a fused step")
        torch._foreach_add_([s["step"] for s in states], 1)  # once per parameter, as Adam does
        params_v, grads_v, avgs_v, sqs_v, steps_v = [], [], [], [], []
        for p, s in zip(params, states):
            views = _views(p.detach(), chunk)
            params_v += views
            grads_v += _views(p.grad, chunk)
            avgs_v += _views(s["exp_avg"], chunk)
            sqs_v += _views(s["exp_avg_sq"], chunk)
            steps_v += [s["step"]] * len(views)  # the kernel reads the step; it does not advance it
        beta1, beta2 = (float(b) for b in group["betas"])
        fused = torch._fused_adamw_ if group.get("decoupled_weight_decay") else torch._fused_adam_
        fused(params_v, grads_v, avgs_v, sqs_v, [], steps_v, amsgrad=False, lr=group["lr"], beta1=beta1, beta2=beta2,
              weight_decay=group["weight_decay"], eps=group["eps"], maximize=False, grad_scale=None, found_inf=None)
