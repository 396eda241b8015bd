"""ZeroGNN reproduction suite: GPU-resident sampling-based GNN training and its baselines.

The package is organised as one module per job: ``datasets`` (graphs on disk), ``sampling`` (the
reference neighbour sampler), ``models`` (GNN layers over sampled blocks), ``variants`` (execution
strategies behind one interface), ``train`` (the measured training loop), ``measure`` (timing and
trace analysis), ``records`` (run records and the summary table), ``figures`` and ``cli``.
"""

__version__ = "0.1.0"
