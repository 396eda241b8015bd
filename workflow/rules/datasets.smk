# Datasets: synthetic R-MAT stand-ins are generated, OGB datasets converted (downloaded by ogb if absent).


rule dataset:
    output:
        directory(f"{DATA}/{{dataset}}"),
    log:
        f"{LOGS}/datasets/{{dataset}}.log",
    params:
        scale=lambda wc: config["datasets"][wc.dataset].get("scale", 1.0),
        seed=lambda wc: config["datasets"][wc.dataset].get("seed", 0),
        ogb_root=f"{DATA}/ogb",
    resources:
        # Generation runs on the GPU of a GPU study (a cluster job asks for one).
        gpu=1 if ON_GPU else 0,
    conda:
        "../../environment.yml"
    shell:
        "ZEROGNN_PARENT=$PPID@$HOSTNAME exec zerognn dataset make {wildcards.dataset} --out {output:q} "
        "--scale {params.scale} --seed {params.seed} --ogb-root {params.ogb_root:q} > {log:q} 2>&1"
