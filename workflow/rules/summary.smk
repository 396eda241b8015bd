# The summary table: one row per run record, with speedup against host-mediated. A checkpoint: which
# figures the records support (the figures rule's outputs) is known once the summary exists.


checkpoint summary:
    input:
        RUN_RECORDS,
    output:
        csv=report(f"{RESULTS}/summary.csv", caption="../report/summary.rst", category="Results"),
        markdown=f"{RESULTS}/summary.md",
    log:
        f"{LOGS}/summary.log",
    params:
        runs=lambda wc, input: os.path.dirname(input[0]),
    conda:
        "../../environment.yml"
    shell:
        "zerognn summarize --runs {params.runs:q} --out {output.csv:q} --markdown {output.markdown:q} > {log:q} 2>&1"
