# Sourced by the scripts/gpu_*.sh scripts: install the project on a GPU host without network from the
# wheelhouses carried beside the tree. .whl/ holds the project's dependencies (the cuda, figures, pipeline and
# peers extras, pytest-timeout), installed with pip's resolver. Any further .whl-*/ directory holds more
# wheels, installed --no-deps after it: WholeGraph's (pylibwholegraph-cu13 with libwholegraph-cu13,
# librmm-cu13, rmm-cu13 and rapids-logger, about 36 MiB; libwholegraph-cu13's declared libraft-cu13, 20 MiB
# more, is never loaded: libwholegraph.so needs none of its symbols). Their requirements beyond those wheels
# (pyarrow, NCCL, cuda-bindings) must already be on the host: the wholegraph peer's GPU tests
# (tests/peers/test_wholegraph.py) say whether they are.
#
# Where what reaches the GPU host with the tree is limited (64 MiB there), .whl/ and WholeGraph do not fit
# together: bring instead, in a .whl-*/ directory, only the wheels the host lacks (Snakemake and its own, jsonschema,
# ogb; pulp may stay behind: Snakemake schedules greedily without it): without .whl/, the project itself is
# then installed --no-deps over what the host has. WholeGraph's wheels travel smaller as a .whl-*.tar.xz
# (scripts/pack_wheels.py: about 27 MiB instead of 36), unpacked here and installed like a .whl-*/ directory's.
# Prints one line per problem, never stops the calling script.
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --find-links .whl -e ".[cuda,figures,pipeline,peers]" pytest-timeout \
        > /dev/null 2>&1 || echo "wheel install from .whl failed"
fi
houses=(.whl-*/)
for packed in .whl-*.tar.xz; do
    [ -f "$packed" ] || continue
    unpacked=$(mktemp -d) && tar xJf "$packed" -C "$unpacked" && houses+=("$unpacked/") \
        || echo "unpacking $packed failed"
done
extra_wheels=()
for house in "${houses[@]}"; do
    for wheel in "$house"*.whl; do  # a house without wheels adds nothing (not its literal pattern)
        [ -f "$wheel" ] && extra_wheels+=("$wheel")
    done
done
if [ ${#extra_wheels[@]} -gt 0 ]; then
    python3 -m pip install -q --no-index --no-deps "${extra_wheels[@]}" > /dev/null 2>&1 \
        || echo "wheel install from ${#extra_wheels[@]} wheels in .whl-*/ failed"
    if [ ! -d .whl ]; then
        python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . > /dev/null 2>&1 \
            || echo "install of the project (--no-deps, over the host's packages) failed"
    fi
fi
unset extra_wheels houses house wheel packed unpacked
