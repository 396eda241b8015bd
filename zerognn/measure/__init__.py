"""Measurement, the same for every variant: step times (``timing``), the profiled window's trace and the
phases it breaks a step into (``trace``) and what it says against the unprofiled step (``execution``),
peak memory over the timed steps (``memory``), CUDA Graph captures (``captures``), GPU work the trace
cannot show (``untraced``), the hardware floor (``floor``), host interference (``host_load``) and the
run's environment."""

from .environment import collect_environment
from .trace import TraceMetrics, analyze_chrome_trace, load_chrome_trace, profile_window

__all__ = ["TraceMetrics", "analyze_chrome_trace", "collect_environment", "load_chrome_trace", "profile_window"]
