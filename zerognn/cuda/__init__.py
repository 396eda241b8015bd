"""Our CUDA operators: compiled from kernels/*.cu with NVRTC through cuda-core, launched on PyTorch's
current stream. ``build`` owns compilation and its on-disk cache, ``launch`` the launches, ``ops`` the
PyTorch-facing operators (sampling, dedupe, gather, aggregation with autograd)."""
