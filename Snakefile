# The ZeroGNN reproduction study: datasets -> measured runs -> summary table -> figures.
#
#   snakemake                                              # the embedded default (workflow/config/default.yaml)
#   snakemake --configfile workflow/config/paper.yaml      # the full study
#   snakemake figures                                      # re-render figures from existing records only
#   snakemake --workflow-profile profiles/slurm --configfile workflow/config/paper.yaml   # on SLURM
#
# Rules are thin: each calls the `zerognn` command line. The workflow profile profiles/default/ is
# picked up automatically (local execution, one GPU job at a time).

from snakemake.utils import min_version

min_version("9.0")


# `snakemake --report report.html`: this description, the summary table and every figure.
report: "workflow/report/workflow.rst"


# A --configfile on the command line replaces the embedded default instead of being merged into it.
if not workflow.overwrite_configfiles:

    configfile: "workflow/config/default.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/kernels.smk"
include: "workflow/rules/runs.smk"
include: "workflow/rules/summary.smk"
include: "workflow/rules/figures.smk"


# A baseline outside this package can bring its own rules: they write run records (docs/records.md)
# into the runs directory, and `extra_run_records` names them so the summary waits for them.
for extra_rules in config["extra_rule_files"]:

    include: extra_rules


rule all:
    default_target: True
    input:
        f"{FIGURES}/manifest.txt",
        # Also here, not only in the manifest's input: a figure deleted after the manifest was written
        # is drawn again (Snakemake keeps a checkpoint's new dependencies only for jobs that run).
        supported_figure_files,


# The end of every invocation says what ran, what was skipped and why, and where the outputs are.
onsuccess:
    end_summary(True)


onerror:
    end_summary(False)


# On a cluster these take seconds and need no GPU: they run where Snakemake runs.
localrules:
    all,
    summary,
    figure,
    render_figures,
    figures,
