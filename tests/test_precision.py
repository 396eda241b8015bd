"""Training precisions: what each sets for its block, where each may run, and how a run names it."""

import pytest
import torch

from zerognn.errors import ZeroGNNError
from zerognn.precision import PRECISIONS, precision_problem, using
from zerognn.records.ids import RunKey
from zerognn.records.spec import RunSpec


def test_tf32_turns_the_tensor_core_switches_on_for_its_block_only():
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    with using("tf32"):
        assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
        with using("float32"):
            assert not torch.backends.cuda.matmul.allow_tf32 and not torch.backends.cudnn.allow_tf32
        assert torch.backends.cuda.matmul.allow_tf32
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == before


def test_where_each_precision_may_run():
    assert all(precision_problem(name, "cuda", False) is None for name in PRECISIONS)
    assert precision_problem("float32", "cpu", True) is None
    assert "needs a CUDA GPU" in precision_problem("tf32", "cpu", False)
    assert "deterministic mode" in precision_problem("tf32", "cuda", True)
    assert precision_problem("tf32", "auto", False) is None  # decided once the device is known


@pytest.mark.parametrize("fields, message", [
    ({"dtype": "tf32", "device": "cpu"}, "needs a CUDA GPU"),
    ({"dtype": "tf32", "device": "cuda", "deterministic": True}, "without --deterministic"),
    ({"dtype": "bfloat16"}, "dtype must be one of"),
])
def test_a_spec_refuses_a_precision_it_cannot_run(fields, message):
    with pytest.raises(ZeroGNNError, match=message):
        RunSpec(dataset="tiny", **fields)


def test_a_run_id_names_its_precision_unless_it_is_float32():
    spec = RunSpec(dataset="tiny", variant="zerognn", dtype="tf32", device="cuda", trial=2)
    assert spec.key.run_id == "tiny__sage__zerognn__b1024__f15-10-5__g1__ptf32__t2"
    assert RunKey.parse(spec.key.run_id) == spec.key
    assert RunSpec(dataset="tiny").key.run_id == "tiny__sage__torch-eager__b1024__f15-10-5__g1"
    assert RunKey.of({"dataset": "tiny", "model": "sage", "variant": "zerognn", "batch_size": 1024,
                      "fanouts": [15, 10, 5], "dtype": "float32"}).dtype == "float32"


def _relative_error(x, weight, bias, out):
    exact = (x.double() @ weight.double().T + bias.double()).relu()
    return float((out.double() - exact).abs().max() / exact.abs().max())


@pytest.mark.gpu
def test_tf32_reaches_the_models_dense_layer_eager_and_captured():
    """fp32 GEMMs are accurate to about 1e-6 here, TF32's 10-bit mantissa to about 1e-3: the switch takes effect
    in the layer every variant runs (cuBLASLt's epilogue GEMM), also inside a CUDA Graph captured under it."""
    from zerognn.models.dense import linear

    g = torch.Generator(device="cuda").manual_seed(0)
    x, weight = (torch.randn(shape, device="cuda", generator=g) for shape in ((4096, 256), (256, 256)))
    bias = torch.randn(256, device="cuda", generator=g)
    with using("float32"):
        assert _relative_error(x, weight, bias, linear(x, weight, bias, True)) < 1e-5
    with using("tf32"):
        assert _relative_error(x, weight, bias, linear(x, weight, bias, True)) > 1e-4
        out = linear(x, weight, bias, True)  # warm-up outside the capture
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = linear(x, weight, bias, True)
    with using("float32"):
        graph.replay()  # what was captured, whatever the switch says now
        torch.cuda.synchronize()
        assert _relative_error(x, weight, bias, out) > 1e-4
