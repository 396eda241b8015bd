"""One float32 buffer holding the model's parameters and the optimizer's state, as views.

A step that may be rolled back on the device (ZeroGNN's overflow path) must snapshot and restore the
whole training state inside its CUDA Graph. With every parameter and every optimizer-state tensor
re-homed as a view of one flat buffer, that is one copy before the step and one conditional copy
after it, bit-exact, whatever the model. Adam's state is created up front (zeros, step 0, exactly
what its first step would create) so that the buffer exists before capture.

Every view starts at a multiple of ``ALIGN_FLOATS`` (256 bytes, where the caching allocator starts a
tensor of its own): GEMM libraries pick their kernels by their operands' alignment, and a weight behind
Adam's one-float ``step`` would be 4-byte aligned only (cuBLAS then runs its ``align1`` kernels: at TF32
on an H200, Ampere kernels at a fraction of the Hopper ones' speed). The padding between views is zeros
and is copied with the rest.
"""

from __future__ import annotations

import torch
from torch import nn

from ..errors import ZeroGNNError
from ..optimizer import materialize_adam_state

ALIGN_FLOATS = 64  # each view's start, in floats: 256 bytes


def flatten_training_state(model: nn.Module, optimizer: torch.optim.Optimizer) -> torch.Tensor:
    """Re-home parameters and optimizer state into one float32 buffer; return it.

    Values are unchanged; afterwards ``p.data`` and ``optimizer.state[p][k]`` are views of the buffer.
    """
    params = [p for group in optimizer.param_groups for p in group["params"]]
    if {id(p) for p in params} != {id(p) for p in model.parameters()}:
        raise ZeroGNNError("the optimizer must own exactly the model's parameters")
    if type(optimizer) is not torch.optim.Adam:
        raise ZeroGNNError(f"a flat training state supports torch.optim.Adam, not {type(optimizer).__name__}")
    if any(optimizer.state.get(p) for p in params):
        raise ZeroGNNError("flatten the training state before the optimizer's first step")
    materialize_adam_state(optimizer)
    slots: list[tuple[torch.Tensor, nn.Parameter, str | None]] = []
    for p in params:
        slots.append((p.data, p, None))
        slots += [(v, p, k) for k, v in optimizer.state[p].items() if torch.is_tensor(v)]
    for tensor, _, key in slots:
        if tensor.dtype != torch.float32 or tensor.device != params[0].device:
            raise ZeroGNNError(f"training state {key or 'parameter'} is {tensor.dtype} on {tensor.device}; "
                               f"a flat state needs float32 on {params[0].device} (Adam with capturable=True)")
    offsets, end = [], 0
    for tensor, _, _ in slots:
        offsets.append(end)
        end += -(-tensor.numel() // ALIGN_FLOATS) * ALIGN_FLOATS
    flat = torch.zeros(end, dtype=torch.float32, device=params[0].device)
    for (tensor, p, key), offset in zip(slots, offsets):
        view = flat[offset:offset + tensor.numel()].view(tensor.shape)
        view.copy_(tensor)
        if key is None:
            p.data = view
        else:
            optimizer.state[p][key] = view
    return flat
