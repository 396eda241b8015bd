"""Our CUDA operators: compiled from kernels/*.cu with NVRTC through cuda-core and launched on PyTorch's
current stream. ``build`` owns compilation and its on-disk cache, ``launch`` the launches (checked
against each kernel's declaration), ``sampling`` and ``aggregate`` the PyTorch-facing operators
(sampling, dedupe, gather; aggregation with autograd), ``capture`` how work is captured into a CUDA
Graph, and ``segment_graphs`` the naive per-shape graph cache."""
