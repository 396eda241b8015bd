# Sourced by the scripts/gpu_*.sh scripts: install the project on a GPU host without network from the
# wheelhouses carried beside the tree. .whl/ holds the project's dependencies (the cuda, figures, pipeline and
# peers extras, pytest-timeout); any further .whl-*/ directory holds more wheels, installed --no-deps after
# it: WholeGraph's (pylibwholegraph-cu13 with libwholegraph-cu13, libraft-cu13, librmm-cu13, rmm-cu13 and
# rapids-logger, about 55 MiB). Their requirements beyond those wheels (pyarrow, NCCL, a CUDA toolkit
# meta-package, an nvJitLink pin) must already be on the host or go unused: the wholegraph peer's GPU tests
# (tests/peers/test_wholegraph.py) say whether they do. Wheelhouses may come
# in pieces, each its own .whl-*/ directory, for example one per call to the same machine: a piece carried
# earlier is still there. Prints one line per problem, never stops the calling script.
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --find-links .whl -e ".[cuda,figures,pipeline,peers]" pytest-timeout \
        > /dev/null 2>&1 || echo "wheel install from .whl failed"
fi
extra_wheels=()
for house in .whl-*/; do
    [ -d "$house" ] && extra_wheels+=("$house"*.whl)
done
if [ ${#extra_wheels[@]} -gt 0 ]; then
    python3 -m pip install -q --no-index --no-deps "${extra_wheels[@]}" > /dev/null 2>&1 \
        || echo "wheel install from ${#extra_wheels[@]} wheels in .whl-*/ failed"
fi
unset extra_wheels house
