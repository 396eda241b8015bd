"""The run's Adam: the same optimizer, built and flattened without loading dynamo; a compiling variant gets its
marks back."""

import subprocess
import sys
import textwrap

import torch

from zerognn.optimizer import build_adam, keep_dynamo_unloaded, restore_dynamo_marks


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
