"""What only the Snakemake workflow uses: the study config against its schema (``config_types``), the plan
of runs a config asks for (``plan``) and how a run on G GPUs is started on a node or a cluster
(``launcher``)."""
