"""The variant registry: built-ins, out-of-package modules, clear errors."""

import textwrap

import pytest

from zerognn import variants as registry
from zerognn.errors import ZeroGNNError
from zerognn.variants import all_variants, external_variants, get_variant, module_file, runnable_here

GPU_ONLY_BASELINE = textwrap.dedent('''
    from zerognn.variants import Variant, register

    @register
    class NeedsGpu(Variant):
        name = "needs-gpu-test"
        description = "a test variant that claims to need CUDA"
        requires_cuda = True

        def step(self, epoch, step, global_step):
            raise AssertionError("never run in this test")
''')


@pytest.fixture(autouse=True)
def restore_registry():
    """Variants registered by a test must not leak into other tests."""
    saved = all_variants()  # built-ins loaded before the snapshot
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)


def test_torch_eager_is_registered_and_runs_anywhere():
    cls = get_variant("torch-eager")
    assert cls.name == "torch-eager" and runnable_here(cls)


def test_unknown_variant_names_the_registered_ones():
    with pytest.raises(ZeroGNNError, match="unknown variant 'nope'.*torch-eager"):
        get_variant("nope")


def test_out_of_package_file_registers_its_variant(tmp_path):
    path = tmp_path / "my_baseline.py"
    path.write_text(GPU_ONLY_BASELINE)
    variants = all_variants([str(path)])
    assert "needs-gpu-test" in variants
    assert variants["needs-gpu-test"].requires_cuda


def test_missing_external_module_is_a_clear_error(tmp_path):
    with pytest.raises(ZeroGNNError, match="does not exist"):
        all_variants([str(tmp_path / "absent.py")])
    with pytest.raises(ZeroGNNError, match="cannot import variant module"):
        all_variants(["no_such_module_anywhere"])


def test_each_external_variant_is_mapped_to_the_module_that_defines_it(tmp_path):
    one, two = tmp_path / "one.py", tmp_path / "two.py"
    one.write_text(GPU_ONLY_BASELINE)
    two.write_text(GPU_ONLY_BASELINE.replace("needs-gpu-test", "second-test").replace("NeedsGpu", "Second"))
    assert external_variants([str(one), str(two)]) == {"needs-gpu-test": str(one), "second-test": str(two)}
    assert external_variants([str(one)]) == {"needs-gpu-test": str(one)}  # imported once, still mapped
    assert module_file(str(one)) == str(one)
    assert module_file("zerognn.variants.torch_eager").endswith("torch_eager.py")
