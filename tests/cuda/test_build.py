"""Every operator compiles with NVRTC for sm_80 and sm_90 — on a machine with no GPU, as in CI."""

import pytest

from zerognn.cuda.build import build_all, compile_operator, kernel_operator, operators
from zerognn.errors import ZeroGNNError

EXPECTED_KERNELS = {
    "sample_neighbors", "dedupe_neighbors", "relabel_nodes", "relabel_neighbors",
    "gather_rows", "gather_labels", "sage_concat_forward", "sage_concat_backward", "gcn_aggregate_forward",
    "gcn_aggregate_backward", "gat_attention_forward", "gat_attention_backward", "step_begin", "step_end",
    "loop_begin", "loop_continue", "ell_transpose_count", "ell_transpose_place", "ell_transpose_order",
    "sage_concat_backward_transposed", "gcn_aggregate_backward_transposed", "gat_attention_backward_transposed",
    "dense_gemm_128", "dense_gemm_64", "dense_column_sums", "dense_chunk_sums", "cross_entropy_forward_backward",
}
# Sized by tensor shapes alone, the dense gradients launch from the host in every variant, and so does the
# loss (a fixed grid, whatever the row count).
LAUNCHED_FROM_THE_DEVICE = {k for k in EXPECTED_KERNELS
                            if not k.startswith(("step_", "loop_", "dense_", "cross_entropy"))}


def test_operators_are_discovered_one_per_file():
    ops = operators()
    parents = {f"dl_{k}" for k in LAUNCHED_FROM_THE_DEVICE}
    assert {k for op in ops.values() for k in op.kernels} == EXPECTED_KERNELS | parents
    assert kernel_operator("dedupe_neighbors").path.name == "dedupe_nodes.cu"
    # the device-launch module includes the operators it launches, but owns only its parents
    assert kernel_operator("dl_dedupe_neighbors").path.name == "device_launch.cu"
    assert set(ops["device_launch"].kernels) == parents and ops["device_launch"].device_runtime
    # the device-driven loop sets graph conditionals from the device: the device runtime, too
    assert {name for name, op in ops.items() if op.device_runtime} == {"device_launch", "device_loop"}


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_every_operator_compiles(arch, tmp_path, monkeypatch):
    monkeypatch.setenv("ZEROGNN_CACHE_DIR", str(tmp_path))
    sizes = build_all(arch)
    assert set(sizes) == set(operators()) and all(size > 0 for size in sizes.values())


def test_compile_errors_name_the_file_and_line(tmp_path, monkeypatch):
    (tmp_path / "zerognn_common.cuh").write_text("#pragma once\n")
    (tmp_path / "broken.cu").write_text('#include "zerognn_common.cuh"\n\n'
                                        'extern "C" __global__ void broken() { int x = ; }\n')
    monkeypatch.setenv("ZEROGNN_KERNELS_DIR", str(tmp_path))
    monkeypatch.setenv("ZEROGNN_CACHE_DIR", str(tmp_path / "cache"))
    operators.cache_clear()
    try:
        with pytest.raises(ZeroGNNError, match=r"broken\.cu\(3\): error"):
            compile_operator(operators()["broken"], "sm_90")
    finally:
        operators.cache_clear()


def test_bad_arch_is_rejected():
    with pytest.raises(ZeroGNNError, match="arch must look like sm_90"):
        compile_operator(operators()["gather_rows"], "hopper")


def test_an_unusable_kernel_cache_is_a_clear_error(tmp_path, monkeypatch):
    (tmp_path / "a_file").write_text("x")
    monkeypatch.setenv("ZEROGNN_CACHE_DIR", str(tmp_path / "a_file" / "cache"))
    with pytest.raises(ZeroGNNError, match="kernel cache directory .* cannot be made .*set ZEROGNN_CACHE_DIR"):
        compile_operator(operators()["gather_rows"], "sm_90")
