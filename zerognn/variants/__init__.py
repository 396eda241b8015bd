"""The variant registry: built-in variants, plus out-of-package ones named by module or file path.

The built-ins are the modules the table in ``zerognn.catalog`` names. ``register`` is the decorator a
variant class uses; ``get_variant`` looks one up by name and ``load_external`` imports a user's module
(``pkg.module``) or file (``path/to/baseline.py``) so that its ``@register``-ed classes join the registry;
``external_variants`` says which module defines which variant and where its source file is (the workflow
re-runs a variant's runs when that file changes).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import torch

from ..catalog import BUILTIN_VARIANTS
from ..errors import ZeroGNNError, one_line
from .base import Variant, VariantContext, phase

_REGISTRY: dict[str, type[Variant]] = {}
_BUILTIN_MODULES = tuple(f"zerognn.variants.{v.module}" for v in BUILTIN_VARIANTS)
_builtins_loaded = False


def register(cls: type[Variant]) -> type[Variant]:
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise ZeroGNNError(f"variant class {cls.__qualname__} needs a non-empty class attribute `name`")
    existing = _REGISTRY.get(name)
    if existing is not None and existing.__qualname__ != cls.__qualname__:
        raise ZeroGNNError(f"two variants are named {name!r}: {existing.__module__} and {cls.__module__}; rename one")
    _REGISTRY[name] = cls
    return cls


def _load_builtins() -> None:
    global _builtins_loaded
    if not _builtins_loaded:
        _builtins_loaded = True
        for module in _BUILTIN_MODULES:
            importlib.import_module(module)


def load_external(spec: str) -> tuple[str, ...]:
    """Import a variant module given as a file path (``*.py``) or a dotted module name; return the
    names of the variants it defines (a module already imported is not imported again)."""
    _load_builtins()
    name = spec
    if spec.endswith(".py"):
        path = Path(spec).resolve()
        if not path.is_file():
            raise ZeroGNNError(f"variant module file {spec} does not exist; fix the path in `variant_modules`")
        name = f"zerognn_external_{path.stem}_{abs(hash(str(path)))}"
        if name not in sys.modules:
            module_spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            try:
                module_spec.loader.exec_module(module)
            except ZeroGNNError:
                del sys.modules[name]
                raise
            except Exception as exc:
                del sys.modules[name]
                raise ZeroGNNError(f"variant module {spec} failed to import: {one_line(exc, with_type=True)}; "
                                   f"fix the file") from exc
    else:
        try:
            importlib.import_module(spec)
        except ModuleNotFoundError as exc:
            if exc.name is not None and not spec.startswith(exc.name) and exc.name != spec:
                raise ZeroGNNError(f"variant module {spec!r} failed to import: {one_line(exc, with_type=True)}; "
                                   f"install what it needs") from exc
            raise ZeroGNNError(f"cannot import variant module {spec!r} ({exc}); install it or give a .py path") from exc
        except ZeroGNNError:
            raise
        except Exception as exc:
            raise ZeroGNNError(f"variant module {spec!r} failed to import: {one_line(exc, with_type=True)}; "
                               f"fix the module") from exc
    return tuple(sorted(n for n, cls in _REGISTRY.items() if cls.__module__ == name))


def module_file(spec: str) -> str | None:
    """The source file of a variant module spec: the path itself for a ``.py`` file, else the
    imported module's file (None for a module without one)."""
    if spec.endswith(".py"):
        return spec
    module = sys.modules.get(spec) or importlib.import_module(spec)
    return getattr(module, "__file__", None)


def external_variants(specs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Variant name -> the module spec (of ``specs``) that defines it."""
    return {name: spec for spec in specs for name in load_external(spec)}


def all_variants(external: list[str] | tuple[str, ...] = ()) -> dict[str, type[Variant]]:
    _load_builtins()
    for spec in external:
        load_external(spec)
    return dict(_REGISTRY)


def study_variants(external: list[str] | tuple[str, ...] = ()) -> dict[str, type[Variant]]:
    """The built-ins and the variants the modules ``external`` define: what a study's ``variants: all`` means,
    whatever other variant modules this process has imported."""
    registered = all_variants(external)
    named = set(external_variants(external))
    return {n: cls for n, cls in registered.items() if cls.__module__ in _BUILTIN_MODULES or n in named}


def get_variant(name: str, external: list[str] | tuple[str, ...] = ()) -> type[Variant]:
    variants = all_variants(external)
    if name not in variants:
        raise ZeroGNNError(
            f"unknown variant {name!r}; registered: {', '.join(sorted(variants))}. An out-of-package "
            f"variant must be named in `variant_modules` (config) or --variant-module (CLI)."
        )
    return variants[name]


def runnable_here(cls: type[Variant]) -> bool:
    return not cls.requires_cuda or torch.cuda.is_available()


__all__ = ["Variant", "VariantContext", "all_variants", "external_variants", "get_variant", "load_external",
           "module_file", "phase", "register", "runnable_here", "study_variants"]
