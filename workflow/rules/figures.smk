# Figures: every figure the records support, PNG and PDF; `snakemake figures` re-renders from the
# records already on disk and never starts a training run.


rule render_figures:
    input:
        f"{RESULTS}/summary.csv",
    output:
        f"{FIGURES}/manifest.txt",
    log:
        f"{LOGS}/figures.log",
    params:
        runs=lambda wc, input: os.path.join(os.path.dirname(input[0]), "runs"),
        out=lambda wc, output: os.path.dirname(output[0]),
    conda:
        "../../environment.yml"
    shell:
        "zerognn figures --summary {input} --runs {params.runs} --out {params.out} --manifest {output} > {log} 2>&1"


rule figures:
    log:
        f"{LOGS}/figures-rerender.log",
    params:
        runs=f"{RESULTS}/runs",
        summary=f"{RESULTS}/summary.csv",
        out=FIGURES,
    conda:
        "../../environment.yml"
    shell:
        "(zerognn summarize --runs {params.runs} --out {params.summary} "
        "&& zerognn figures --summary {params.summary} --runs {params.runs} --out {params.out}) > {log} 2>&1"
