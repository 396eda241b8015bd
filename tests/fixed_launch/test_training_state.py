"""The flat training state: same values, same optimizer trajectory, restorable with one copy."""

import pytest
import torch

from zerognn.errors import ZeroGNNError
from zerognn.fixed_launch.training_state import ALIGN_FLOATS, flatten_training_state
from zerognn.models import build_model


def model_and_adam(seed=0):
    model = build_model("sage", 12, 16, 5, 2, seed=seed)
    return model, torch.optim.Adam(model.parameters(), lr=0.01)


def train(model, opt, steps, seed=1):
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        for p in model.parameters():
            p.grad = torch.randn(p.shape, generator=g)
        opt.step()


def test_flattening_keeps_values_and_the_optimizer_trajectory():
    ref_model, ref_opt = model_and_adam()
    model, opt = model_and_adam()
    flat = flatten_training_state(model, opt)
    for a, b in zip(ref_model.parameters(), model.parameters()):
        assert torch.equal(a, b)
    assert all(float(s["step"]) == 0 for s in opt.state.values())
    train(ref_model, ref_opt, 5)
    train(model, opt, 5)
    for a, b in zip(ref_model.parameters(), model.parameters()):
        assert torch.equal(a, b)  # bit-identical: the first step saw the same (fresh) state
    # params, 2 moments, steps, each view starting at a multiple of 256 bytes of the buffer
    views = [p for p in model.parameters()] + [v for st in opt.state.values() for v in st.values()]
    assert len(views) == 4 * len(list(model.parameters()))
    assert all((v.data_ptr() - flat.data_ptr()) % (4 * ALIGN_FLOATS) == 0 for v in views)
    starts = sorted(v.data_ptr() for v in views)
    assert len(set(starts)) == len(starts)  # no two views share storage
    assert flat.numel() == sum(-(-v.numel() // ALIGN_FLOATS) * ALIGN_FLOATS for v in views)


def test_one_copy_restores_parameters_and_optimizer_state():
    model, opt = model_and_adam()
    flat = flatten_training_state(model, opt)
    train(model, opt, 2)
    snapshot = flat.clone()
    before = [p.detach().clone() for p in model.parameters()]
    train(model, opt, 3, seed=7)
    flat.copy_(snapshot)
    train(model, opt, 1, seed=9)
    ref_model, ref_opt = model_and_adam()
    train(ref_model, ref_opt, 2)
    assert all(torch.equal(a, b) for a, b in zip(before, ref_model.parameters()))
    train(ref_model, ref_opt, 1, seed=9)
    for a, b in zip(ref_model.parameters(), model.parameters()):
        assert torch.equal(a, b)


def test_unsupported_optimizers_and_late_calls_are_clear_errors():
    model = build_model("sage", 12, 16, 5, 2, seed=0)
    with pytest.raises(ZeroGNNError, match="Adam"):
        flatten_training_state(model, torch.optim.SGD(model.parameters(), lr=0.1))
    model, opt = model_and_adam()
    train(model, opt, 1)
    with pytest.raises(ZeroGNNError, match="before the optimizer's first step"):
        flatten_training_state(model, opt)
