"""The run's Adam: the same optimizer, built, flattened and stepped without loading dynamo; a compiling variant gets
its marks back."""

import subprocess
import sys
import textwrap

import torch

from zerognn.optimizer import adam_step, build_adam, keep_dynamo_unloaded, restore_dynamo_marks


def test_building_zeroing_and_flattening_adam_does_not_load_dynamo():
    script = textwrap.dedent("""
        import sys
        from zerognn.fixed_launch.training_state import flatten_training_state
        from zerognn.models import build_model
        from zerognn.optimizer import build_adam
        model = build_model("sage", 12, 16, 5, 2, seed=0)
        opt = build_adam(model.parameters(), 0.01, cuda=False)
        flatten_training_state(model, opt)
        opt.zero_grad(set_to_none=True)
        opt.load_state_dict(opt.state_dict())
        print("torch._dynamo" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_the_plain_methods_behave_as_the_marked_ones():
    params = [torch.nn.Parameter(torch.ones(3))]
    opt = build_adam(params, 0.1, cuda=False)
    params[0].grad = torch.ones(3)
    opt.zero_grad(set_to_none=True)
    assert params[0].grad is None
    opt.add_param_group({"params": [torch.nn.Parameter(torch.zeros(2))]})
    assert len(opt.state_dict()["param_groups"]) == 2


def test_the_shortcut_never_replaces_a_real_mark_and_is_undone_cleanly():
    from torch.optim import Optimizer

    plain = Optimizer.zero_grad.__wrapped__
    before = plain.__dict__.get("__dynamo_disable")
    try:
        real = object()  # what dynamo caches once it has built the mark
        setattr(plain, "__dynamo_disable", real)
        keep_dynamo_unloaded()
        restore_dynamo_marks()
        assert getattr(plain, "__dynamo_disable") is real
        delattr(plain, "__dynamo_disable")
        keep_dynamo_unloaded()
        assert getattr(plain, "__dynamo_disable") is plain
        restore_dynamo_marks()
        assert "__dynamo_disable" not in plain.__dict__
    finally:
        plain.__dict__.pop("__dynamo_disable", None)
        if before is not None:
            setattr(plain, "__dynamo_disable", before)


_STEPS_WITHOUT_DYNAMO = """
import sys, torch
from zerognn.models import build_model
from zerognn.optimizer import adam_step, keep_dynamo_unloaded
model = build_model("sage", 12, 16, 5, 2, seed=0)
keep_dynamo_unloaded()  # build_adam's, for an Adam fused on the CPU (a GPU run's is fused)
opt = torch.optim.Adam(model.parameters(), lr=0.01, fused=True)
for _ in range(2):
    for p in model.parameters():
        p.grad = torch.ones_like(p)
    adam_step(opt)
print("torch._dynamo" in sys.modules)
"""


def test_a_fused_adams_step_does_not_load_dynamo():
    out = subprocess.run([sys.executable, "-c", _STEPS_WITHOUT_DYNAMO], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _trained(step, fused: bool):
    from zerognn.models import build_model

    model = build_model("sage", 20, 64, 7, 3, seed=1)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3, weight_decay=1e-4, fused=fused)
    gen = torch.Generator().manual_seed(0)
    for _ in range(4):
        for p in model.parameters():
            p.grad = torch.randn(p.shape, generator=gen)
        step(opt)
    return model, opt


def test_adam_step_is_adams_own_step_bit_for_bit():
    # fused (the whole tensors through the fused kernel, state made up front) and not (optimizer.step itself)
    for fused in (True, False):
        ours, ours_opt = _trained(adam_step, fused)
        ref, ref_opt = _trained(lambda opt: opt.step(), fused)
        for a, b in zip(ours.parameters(), ref.parameters()):
            assert torch.equal(a, b)
            for key in ("exp_avg", "exp_avg_sq", "step"):
                assert torch.equal(ours_opt.state[a][key], ref_opt.state[b][key]), (fused, key)
