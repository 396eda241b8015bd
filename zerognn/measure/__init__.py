"""Measurement: trace analysis of a profiled steady-state window, and the run's environment."""

from .environment import collect_environment
from .trace import TraceMetrics, analyze_chrome_trace, load_chrome_trace, profile_window

__all__ = ["TraceMetrics", "analyze_chrome_trace", "collect_environment", "load_chrome_trace", "profile_window"]
