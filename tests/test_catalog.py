"""The built-in variants' table: every registered built-in is in it, and it names each one's module."""

from zerognn.catalog import BUILTIN_NAMES, BUILTIN_VARIANTS, variant_order
from zerognn.variants import all_variants


def test_every_registered_builtin_is_in_the_table_under_its_own_module():
    builtins = {name: cls for name, cls in all_variants().items() if cls.__module__.startswith("zerognn.variants.")}
    assert set(builtins) == set(BUILTIN_NAMES)
    for entry in BUILTIN_VARIANTS:
        assert builtins[entry.name].__module__ == f"zerognn.variants.{entry.module}"


def test_builtins_come_first_in_the_tables_order_then_the_others_alphabetically():
    assert variant_order(["zz", "zerognn", "aa", "torch-eager"]) == ["torch-eager", "zerognn", "aa", "zz"]
