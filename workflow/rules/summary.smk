# The summary table: one row per run record, with speedup against host-mediated, and the list of the
# figures the records support (figures.json: figure -> null, or why not). A checkpoint: the figure jobs
# are planned from that list once it exists.


checkpoint summary:
    input:
        RUN_RECORDS,
    output:
        csv=report(f"{RESULTS}/summary.csv", caption="../report/summary.rst", category="Results"),
        markdown=f"{RESULTS}/summary.md",
        figures=f"{RESULTS}/figures.json",
    log:
        f"{LOGS}/summary.log",
    params:
        runs=lambda wc, input: os.path.dirname(input[0]),
        mixed=MIXED_PROVENANCE,
    conda:
        "../../environment.yml"
    shell:
        "zerognn summarize --runs {params.runs:q} --out {output.csv:q} --markdown {output.markdown:q} "
        "{params.mixed} "
        "--figures {output.figures:q} > {log:q} 2>&1"
