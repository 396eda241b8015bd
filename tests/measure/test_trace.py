import dataclasses
import gzip
import json

import pytest
import torch

from zerognn.errors import ZeroGNNError
from zerognn.measure import analyze_chrome_trace, load_chrome_trace, profile_window
from zerognn.measure.execution import gpu_ms_by_class
from zerognn.measure.trace import is_host_launch, is_host_sync, kernel_class, window_gpu_activities


def X(cat, name, ts, dur=1.0, tid=1):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur}


def ann(name, ts, dur):
    return X("user_annotation", name, ts, dur)


def api(name, ts, cat="cuda_runtime", tid=1):
    return X(cat, name, ts, 2.0, tid)


# Window [1000, 2000) extended by window_sync to 2200: 1200 us. Steps [1010, 1400) and [1400, 1800).
GPU_TRACE = {"traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}},
    ann("zerognn/window", 1000, 1000),
    ann("zerognn/window_sync", 1900, 300),
    ann("zerognn/step", 1010, 390),
    ann("zerognn/step", 1400, 400),
    ann("zerognn/phase/forward", 1050, 100),
    ann("zerognn/phase/forward", 1450, 100),
    ann("zerognn/phase/sample", 1011, 50),
    ann("zerognn/phase/sample", 1401, 30),
    X("cpu_op", "aten::mm", 1060, 20),
    # kineto's copy of the window on the GPU timeline: must not be taken for ours
    X("gpu_user_annotation", "zerognn/window", 900, 3000, tid=7),
    # GPU: two overlapping kernels (union 400), a memcpy half before the window (50 inside),
    # a memset during the final sync (50), a kernel after the window (0)
    X("kernel", "k_a", 1100, 200, tid=7),
    X("kernel", "k_b", 1200, 300, tid=8),
    X("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 900, 150, tid=7),
    X("gpu_memset", "Memset (Device)", 2100, 50, tid=7),
    X("kernel", "k_late", 2300, 100, tid=7),
    # step 1: 4 launches, 1 sync
    api("cudaLaunchKernel", 1020),
    api("cudaLaunchKernel", 1030),
    api("cudaMemcpyAsync", 1040),
    api("cudaStreamSynchronize", 1045),
    api("cudaStreamQuery", 1046),
    api("cuLaunchKernel", 1050, cat="cuda_driver"),
    # step 2: 5 launches (one from the autograd thread), 2 syncs
    api("cudaGraphLaunch", 1410),
    api("cuMemcpyDtoH_v2", 1420, cat="cuda_driver"),
    api("cudaMemcpy", 1430),
    api("cudaMemsetAsync_ptsz", 1440),
    api("cudaEventQuery", 1445),
    api("cudaLaunchKernel", 1500, tid=2),
    # in the window but outside any step: not counted
    api("cudaLaunchKernel", 1005),
    api("cudaStreamSynchronize", 1800),
    api("cudaDeviceSynchronize", 1950),
    {"ph": "i", "name": "instant", "pid": 1, "tid": 1, "ts": 1500, "s": "t"},
]}


def test_gpu_trace_metrics():
    m = analyze_chrome_trace(GPU_TRACE, n_steps=2)
    assert m.window_us == pytest.approx(1200.0)
    assert m.window_ms == pytest.approx(1.2) and m.profiled_step_ms == pytest.approx(0.6)
    assert m.gpu_busy_ms_per_step == pytest.approx(0.25)
    assert m.gpu_activities_per_step == pytest.approx(3 / 2)  # k_a, k_b, the memset; not those starting outside
    assert m.gpu_ms_by_class == pytest.approx({"other": (200 + 300 + 50) / 1e3 / 2})
    assert m.gpu_gap_in_graph_ms_per_step is None  # no correlation ids in this trace
    assert m.host_launches_per_step == pytest.approx(9 / 2)
    assert m.host_syncs_per_step == pytest.approx(3 / 2)
    assert m.phase_ms == pytest.approx({"forward": 0.1, "sample": 0.04})
    assert m.to_dict()["gpu_busy_ms_per_step"] == m.gpu_busy_ms_per_step


def test_window_gpu_activities_leave_out_what_starts_outside_the_window():
    # the memcpy before the window (a lead-in step's work) and the kernel after it are not the window's
    events, n_steps = window_gpu_activities(GPU_TRACE)
    assert [e["name"] for e in events] == ["k_a", "k_b", "Memset (Device)"]
    assert n_steps == 2


def corr(event, correlation):
    return event | {"args": {"correlation": correlation}}


@pytest.mark.parametrize("name, cls", [
    ("sage_concat_forward", "aggregation"), ("gat_attention_backward", "aggregation"),
    ("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize256x64x8", "dense"),
    ("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>", "dense"),
    ("std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float>", "dense"),
    ("dedupe_neighbors", "sampling"), ("relabel_nodes", "sampling"), ("gather_rows", "gather"),
    ("void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d", "loss"),
    ("cross_entropy_forward_backward", "loss"),
    ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedAdamMathFunctor>", "optimizer"),
    ("step_end", "step control"), ("ell_transpose_order", "aggregation"),
    ("sage_concat_backward_transposed", "aggregation"), ("dense_gemm_128", "dense"), ("dense_chunk_sums", "dense"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", "other"),
    ("Memcpy DtoD (Device -> Device)", "other"),
])
def test_gpu_activities_are_classed_by_kernel_name(name, cls):
    assert kernel_class(name) == cls


def test_untraced_gpu_work_is_a_class_of_its_own():
    m = analyze_chrome_trace(GPU_TRACE, n_steps=2)
    assert gpu_ms_by_class(m, 0.5) == pytest.approx({"other": 0.275, "device-launched (untraced)": 0.5})
    assert gpu_ms_by_class(m) == pytest.approx({"other": 0.275}) and gpu_ms_by_class(None, 0.5) == {}


def test_idle_gaps_inside_one_graph_launch_are_told_from_the_others():
    trace = {"traceEvents": [
        ann("zerognn/window", 0, 1000), ann("zerognn/step", 0, 500), ann("zerognn/step", 500, 500),
        corr(api("cudaGraphLaunch", 10), 7), corr(api("cudaGraphLaunch", 510), 8),
        corr(api("cudaLaunchKernel", 700), 9),
        # graph launch 7: a 10 us gap between nodes, an overlap, another 10 us gap before a memset
        corr(X("kernel", "a", 100, 100, tid=7), 7), corr(X("kernel", "b", 210, 90, tid=7), 7),
        corr(X("kernel", "c", 250, 100, tid=8), 7), corr(X("gpu_memset", "m", 360, 40, tid=7), 7),
        # graph launch 8, then a kernel of its own launch: the gaps between launches are not the graph's
        corr(X("kernel", "d", 600, 100, tid=7), 8), corr(X("kernel", "e", 720, 80, tid=7), 9),
    ]}
    m = analyze_chrome_trace(trace, n_steps=2)
    assert m.gpu_gap_in_graph_ms_per_step == pytest.approx(20 / 1e3 / 2)
    assert m.gpu_busy_ms_per_step == pytest.approx((100 + 140 + 40 + 100 + 80) / 1e3 / 2)


def test_execution_metrics_set_busy_time_against_the_unprofiled_step():
    from zerognn.measure.execution import EXECUTION_FIELDS, execution_metrics

    m = analyze_chrome_trace(GPU_TRACE, n_steps=2)  # busy 0.25 ms a step in 0.6 ms profiled steps
    e = execution_metrics(0.5, m)
    assert e["gpu_exec_fraction"] == pytest.approx(0.5) and e["profiler_dilation"] == pytest.approx(1.2)
    assert e["gpu_wait_host_ms_per_step"] is None  # no correlation ids: the idle split is unknown
    e = execution_metrics(0.5, m, untraced_ms_per_step=0.35)
    assert e["gpu_busy_ms_per_step"] == pytest.approx(0.6) and e["gpu_exec_fraction"] == 1.0
    assert e["gpu_untraced_ms_per_step"] == 0.35
    m = dataclasses.replace(m, gpu_gap_in_graph_ms_per_step=0.05)
    assert execution_metrics(0.5, m)["gpu_wait_host_ms_per_step"] == pytest.approx(0.2)
    assert execution_metrics(0.5, None) == dict.fromkeys(EXECUTION_FIELDS)


def test_a_device_driven_loops_gpu_time_is_all_measured_apart():
    from zerognn.measure.execution import EXECUTION_FIELDS, execution_metrics

    host_side = analyze_chrome_trace(GPU_TRACE, n_steps=2).host_side_only()
    assert execution_metrics(0.5, host_side) == dict.fromkeys(EXECUTION_FIELDS)  # nothing measured apart
    e = execution_metrics(0.5, host_side, untraced_ms_per_step=0.4)
    assert e["gpu_busy_ms_per_step"] == e["gpu_untraced_ms_per_step"] == 0.4
    assert e["gpu_exec_fraction"] == pytest.approx(0.8) and e["profiler_dilation"] == pytest.approx(1.2)
    assert e["gpu_wait_host_ms_per_step"] is None  # the body's gaps are not in the trace
    assert gpu_ms_by_class(host_side, 0.4) == {"device-launched (untraced)": 0.4}
    assert gpu_ms_by_class(host_side) == {}


def test_trace_file_plain_or_gzipped(tmp_path):
    plain, gz = tmp_path / "t.json", tmp_path / "t.json.gz"
    plain.write_text(json.dumps(GPU_TRACE))
    with gzip.open(gz, "wt") as f:
        json.dump(GPU_TRACE["traceEvents"], f)  # the bare-array form of the format
    expected = analyze_chrome_trace(GPU_TRACE, 2)
    assert analyze_chrome_trace(plain, 2) == expected
    assert analyze_chrome_trace(gz, 2) == expected


def test_cpu_trace_has_no_gpu_metrics():
    cpu = {"traceEvents": [
        e for e in GPU_TRACE["traceEvents"] if e.get("cat") in ("user_annotation", "cpu_op")
    ]}
    m = analyze_chrome_trace(cpu, n_steps=2)
    assert m.gpu_busy_ms_per_step is None and m.gpu_gap_in_graph_ms_per_step is None
    assert m.gpu_activities_per_step is None
    assert m.host_syncs_per_step is None and m.host_launches_per_step is None
    assert m.phase_ms == pytest.approx({"forward": 0.1, "sample": 0.04})


def test_trace_without_window_or_with_wrong_step_count():
    with pytest.raises(ZeroGNNError, match="zerognn/window"):
        analyze_chrome_trace({"traceEvents": [ann("zerognn/step", 0, 1)]}, 1)
    with pytest.raises(ZeroGNNError, match="n_steps=3"):
        analyze_chrome_trace(GPU_TRACE, 3)


def test_unreadable_trace_names_the_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ZeroGNNError, match="bad.json"):
        load_chrome_trace(bad)


@pytest.mark.parametrize("name, sync, launch", [
    ("cudaStreamSynchronize", True, False),
    ("cudaStreamSynchronize_ptsz", True, False),
    ("cuCtxSynchronize", True, False),
    ("cudaEventSynchronize", True, False),
    ("cudaStreamQuery", False, False),
    ("cudaMemcpy", True, True),
    ("cudaMemcpyToSymbol", True, True),
    ("cudaMemcpyAsync", False, True),
    ("cudaMemcpy2DAsync_ptsz", False, True),
    ("cuMemcpyHtoD_v2", True, True),
    ("cuMemcpyDtoHAsync_v2", False, True),
    ("cuMemsetD32Async", False, True),
    ("cudaMemset", False, True),
    ("cudaLaunchKernelExC", False, True),
    ("cuGraphLaunch", False, True),
    ("cudaFuncGetAttributes", False, False),
])
def test_api_name_classes(name, sync, launch):
    assert (is_host_sync(name), is_host_launch(name)) == (sync, launch)


def test_profile_window_on_cpu(tmp_path):
    x = torch.randn(64, 64)
    calls = []

    def step(i):
        calls.append(i)
        with torch.profiler.record_function("zerognn/phase/forward"):
            (x @ x).relu().sum()

    trace_path = tmp_path / "trace.json.gz"
    m = profile_window(step, n_steps=3, device="cpu", trace_path=trace_path)
    assert calls == [0, 1, 2, 3]  # a lead-in step, then the window's three
    assert m.phase_ms["forward"] > 0
    assert m.window_ms > 0
    assert m.gpu_busy_ms_per_step is None and m.host_launches_per_step is None
    assert trace_path.read_bytes()[:2] == b"\x1f\x8b"
    assert analyze_chrome_trace(trace_path, 3).phase_ms.keys() == {"forward"}
    assert [p.name for p in tmp_path.iterdir()] == ["trace.json.gz"]


@pytest.mark.gpu
def test_profile_window_on_cuda_sees_graph_kernels_syncs_and_launches():
    x = torch.randn(256, 256, device="cuda")
    static = torch.randn(256, 256, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        (static @ static).relu()  # warm cuBLAS up outside the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        (static @ static).relu().mul_(2)

    def step(i):
        with torch.profiler.record_function("zerognn/phase/forward"):
            graph.replay()
            (x @ x).sum().item()  # one blocking read-back per step

    m = profile_window(step, n_steps=3, device="cuda")
    assert 0.0 < m.gpu_busy_ms_per_step <= m.profiled_step_ms
    # the graph's matmul, relu and mul run back to back: a few microseconds between its nodes
    assert 0.0 < m.gpu_gap_in_graph_ms_per_step < 0.1
    assert m.host_syncs_per_step == pytest.approx(1.0)
    assert m.host_launches_per_step >= 3  # graph launch + matmul + sum + copy
    assert m.gpu_activities_per_step >= 5  # the graph's three nodes, the matmul, the sum (and the copy)
    assert m.phase_ms["forward"] > 0


@pytest.mark.gpu
def test_capture_counter_counts_each_cuda_graph_capture():
    from zerognn.measure.captures import counting_cuda_graph_captures

    x = torch.ones(4, device="cuda")
    with counting_cuda_graph_captures() as count:
        for _ in range(2):
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                x.mul_(2)
    assert count.count == 2
    with torch.cuda.graph(torch.cuda.CUDAGraph()):
        x.mul_(2)
    assert count.count == 2  # closed: no longer counting
