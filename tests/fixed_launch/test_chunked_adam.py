"""The chunked fused Adam step equals torch's own fused Adam step, bit for bit (CPU here, CUDA with -m gpu)."""

import pytest
import torch

from zerognn.errors import ZeroGNNError
from zerognn.fixed_launch.chunked_adam import chunked_fused_adam_step
from zerognn.models import build_model


def _model_and_optimizer(device, capturable):
    model = build_model("sage", 20, 64, 7, 3, seed=1).to(device)
    return model, torch.optim.Adam(model.parameters(), lr=3e-3, weight_decay=1e-4, capturable=capturable, fused=True)


def _check(device, capturable, chunk):
    ours, ours_opt = _model_and_optimizer(device, capturable)
    ref, ref_opt = _model_and_optimizer(device, capturable)
    gen = torch.Generator().manual_seed(0)
    for model, opt in ((ours, ours_opt), (ref, ref_opt)):  # Adam creates its state on its first step
        for p in model.parameters():
            p.grad = torch.ones_like(p)
        opt.step()
    for step in range(4):
        for a, b in zip(ours.parameters(), ref.parameters()):
            a.grad = torch.randn(a.shape, generator=gen).to(device)
            b.grad = a.grad.clone()
        chunked_fused_adam_step(ours_opt, chunk=chunk)
        ref_opt.step()
        for a, b in zip(ours.parameters(), ref.parameters()):
            assert torch.equal(a, b), f"parameters differ after step {step + 1}"
            for key in ("exp_avg", "exp_avg_sq", "step"):
                assert torch.equal(ours_opt.state[a][key], ref_opt.state[b][key]), key


def test_chunked_step_equals_fused_adam_on_cpu():
    # The CPU kernel runs a vector body and a scalar tail that round differently (FMA), so chunks here
    # are a multiple of the vector width: the views' tails are then the parameters' own.
    _check("cpu", capturable=False, chunk=256)


@pytest.mark.gpu
def test_chunked_step_equals_fused_adam_on_cuda():
    _check("cuda", capturable=True, chunk=100)  # every element runs the same code: any chunk, even ragged


def test_unsupported_optimizers_are_refused():
    model = build_model("sage", 20, 64, 7, 3, seed=1)
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    with pytest.raises(ZeroGNNError, match="Adam"):
        chunked_fused_adam_step(torch.optim.SGD(model.parameters(), lr=0.1))
    with pytest.raises(ZeroGNNError, match="amsgrad"):
        chunked_fused_adam_step(torch.optim.Adam(model.parameters(), amsgrad=True, fused=True))
