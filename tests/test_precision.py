"""Training precisions: what each sets for its block, where each may run, and how a run names it."""

import pytest
import torch

from zerognn.errors import ZeroGNNError
from zerognn.precision import DEFAULT, PRECISIONS, gemm_dtype, precision_problem, using
from zerognn.records.ids import RunKey
from zerognn.records.spec import RunSpec


def test_tf32_turns_the_tensor_core_switch_on_for_its_block_only():
    before = torch.backends.cuda.matmul.allow_tf32
    with using("tf32"):
        assert torch.backends.cuda.matmul.allow_tf32 and gemm_dtype() is None
        with using("float32"):
            assert not torch.backends.cuda.matmul.allow_tf32
        assert torch.backends.cuda.matmul.allow_tf32
    assert torch.backends.cuda.matmul.allow_tf32 == before


def test_the_config_schema_offers_exactly_the_declared_precisions():
    from pathlib import Path

    import yaml

    schema = yaml.safe_load((Path(__file__).resolve().parents[1] / "workflow/schemas/config.schema.yaml").read_text())
    assert schema["properties"]["precisions"]["items"]["enum"] == list(PRECISIONS)
    assert schema["properties"]["precisions"]["default"] == [DEFAULT]


def test_where_each_precision_may_run():
    assert all(precision_problem(name, "cuda", False) is None for name in PRECISIONS)
    assert precision_problem("float32", "cpu", True) is None
    assert "needs a CUDA GPU" in precision_problem("tf32", "cpu", False)
    assert "deterministic mode" in precision_problem("tf32", "cuda", True)
    assert precision_problem("tf32", "auto", False) is None  # decided once the device is known


@pytest.mark.parametrize("fields, message", [
    ({"dtype": "tf32", "device": "cpu"}, "needs a CUDA GPU"),
    ({"dtype": "tf32", "device": "cuda", "deterministic": True}, "without --deterministic"),
    ({"dtype": "float16"}, "dtype must be one of"),
    ({"dtype": "bfloat16", "deterministic": True}, "without --deterministic"),
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


def test_bfloat16_runs_the_dense_layers_gemms_on_bf16_operands_and_keeps_fp32_everywhere_else():
    from zerognn.models.dense import linear

    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 32, generator=g, requires_grad=True)
    weight = torch.randn(16, 32, generator=g, requires_grad=True)
    bias = torch.randn(16, generator=g, requires_grad=True)
    exact = (x.double() @ weight.double().T + bias.double()).relu()
    with using("bfloat16"):
        assert gemm_dtype() is torch.bfloat16
        out = linear(x, weight, bias, True)
        out.square().sum().backward()
    assert gemm_dtype() is None
    assert out.dtype == x.grad.dtype == weight.grad.dtype == bias.grad.dtype == torch.float32
    error = float((out.detach().double() - exact.detach()).abs().max() / exact.detach().abs().max())
    assert 1e-4 < error < 2e-2  # bf16's 8-bit mantissa, not fp32's 24
    ref = [t.detach().clone().requires_grad_() for t in (x, weight, bias)]
    linear(*ref, True).square().sum().backward()
    for low, full in zip((x.grad, weight.grad, bias.grad), (t.grad for t in ref)):
        assert torch.allclose(low, full, rtol=5e-2, atol=5e-2 * float(full.abs().max()))


def _relative_error(x, weight, bias, out):
    exact = (x.double() @ weight.double().T + bias.double()).relu()
    return float((out.double() - exact).abs().max() / exact.abs().max())


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["tf32", "bfloat16"])
def test_a_lower_precision_reaches_the_models_dense_layer_eager_and_captured(name):
    """fp32 GEMMs are accurate to about 1e-6 here, TF32's 10-bit and bf16's 8-bit mantissas to about 1e-3: the
    precision takes effect in the layer every variant runs (cuBLASLt's epilogue GEMM), also inside a CUDA Graph
    captured under it."""
    from zerognn.models.dense import linear

    g = torch.Generator(device="cuda").manual_seed(0)
    x, weight = (torch.randn(shape, device="cuda", generator=g) for shape in ((4096, 256), (256, 256)))
    bias = torch.randn(256, device="cuda", generator=g)
    with using("float32"):
        assert _relative_error(x, weight, bias, linear(x, weight, bias, True)) < 1e-5
    with using(name):
        assert _relative_error(x, weight, bias, linear(x, weight, bias, True)) > 1e-4
        out = linear(x, weight, bias, True)  # warm-up outside the capture
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = linear(x, weight, bias, True)
    with using("float32"):
        graph.replay()  # what was captured, whatever the precision is now
        torch.cuda.synchronize()
        assert out.dtype == torch.float32 and _relative_error(x, weight, bias, out) > 1e-4
