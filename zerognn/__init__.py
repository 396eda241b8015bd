"""ZeroGNN reproduction suite: GPU-resident sampling-based GNN training and its baselines.

One module per job, in layers (``tests/test_layers.py`` holds them, lowest first): the foundation
(``errors``, ``atomic``, ``graph``, ``rng``, ``distributed``, ``catalog`` — the built-in variants'
table); ``datasets`` (graphs on disk) and ``sampling`` (the reference neighbour sampler); ``models``
(GNN layers over sampled blocks) and ``cuda`` (the CUDA operators); ``measure`` (timing, traces, memory,
the floor); ``fixed_launch`` (the envelope, step control and step graph ZeroGNN replays); ``records`` (a
run's spec and key, its record, the summary); ``variants`` (execution strategies behind one interface);
``train`` (the measured run) and ``bench`` (operator benchmarks); ``figures`` and ``workflow`` (what the
Snakemake workflow plans with); ``cli``.
"""

__version__ = "0.1.0"
