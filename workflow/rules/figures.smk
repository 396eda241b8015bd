# Figures: every figure the records support (the summary checkpoint's figures.json), PNG and PDF, each a
# tracked output (delete one and the next run draws it again); the manifest lists them. `snakemake
# figures` re-renders every figure from the records already on disk and never starts a training run.

rule figure:
    input:
        f"{RESULTS}/summary.csv",
    output:
        # The PNG goes into `snakemake --report`; the PDF is the same figure for print.
        **{fmt: report(f"{FIGURES}/{{figure}}.{fmt}", caption="../report/figure.rst", category="Figures")
           if fmt == "png" else f"{FIGURES}/{{figure}}.{fmt}" for fmt in FIGURE_FORMATS},
    log:
        f"{LOGS}/figures/{{figure}}.log",
    params:
        runs=lambda wc, input: os.path.join(os.path.dirname(input[0]), "runs"),
        out=lambda wc, output: os.path.dirname(output[0]),
    wildcard_constraints:
        figure="|".join(FIGURE_NAMES),
    conda:
        "../../environment.yml"
    shell:
        "zerognn figures --only {wildcards.figure} --summary {input:q} --runs {params.runs:q} --out {params.out:q} "
        "> {log:q} 2>&1"


# Draws nothing: lists the supported figures' files and removes those of figures no longer supported.
rule render_figures:
    input:
        supported_figure_files,
        supported=f"{RESULTS}/figures.json",
    output:
        f"{FIGURES}/manifest.txt",
    log:
        f"{LOGS}/figures.log",
    params:
        out=lambda wc, output: os.path.dirname(output[0]),
    conda:
        "../../environment.yml"
    shell:
        "zerognn figures --supported {input.supported:q} --out {params.out:q} --manifest {output:q} > {log:q} 2>&1"


rule figures:
    log:
        f"{LOGS}/figures-rerender.log",
    params:
        runs=f"{RESULTS}/runs",
        summary=f"{RESULTS}/summary.csv",
        markdown=f"{RESULTS}/summary.md",
        supported=f"{RESULTS}/figures.json",
        out=FIGURES,
        mixed=MIXED_PROVENANCE,
    conda:
        "../../environment.yml"
    shell:
        "(zerognn summarize --runs {params.runs:q} --out {params.summary:q} --markdown {params.markdown:q} "
        "{params.mixed} --figures {params.supported:q} && zerognn figures --summary {params.summary:q} --runs {params.runs:q} "
        "--out {params.out:q}) > {log:q} 2>&1"
