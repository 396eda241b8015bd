"""Peers: baselines built on the libraries GNN users train with, each one module loaded like any baseline of
one's own (``variant_modules: [zerognn.peers.pyg]`` or ``--variant-module zerognn.peers.pyg``), never
registered by default, so a study without them needs none of their libraries. Each needs the ``peers`` extra
(``pip install 'zerognn[peers]'``) and says so in one line when its library is missing.
"""
