"""Micro-benchmarks of our CUDA operators (not run by the pipeline's timed runs)."""
