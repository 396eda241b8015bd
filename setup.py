"""Packaging beyond pyproject.toml: the CUDA sources and the run record's JSON Schema ship inside the package.

``kernels/`` stays at the repository's top level (one operator per .cu file), and is mapped to the
package ``zerognn.kernels`` so that a wheel carries the sources as package data and ``zerognn build``
works after a plain ``pip install .``, not only from a checkout. ``zerognn/records/record.schema.json`` is
package data too: every record written or read is checked against it.
"""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["zerognn", "zerognn.*"]) + ["zerognn.kernels"],
    package_dir={"zerognn.kernels": "kernels"},
    package_data={"zerognn.kernels": ["*.cu", "*.cuh"], "zerognn.records": ["*.json"]},
)
