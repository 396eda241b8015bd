# One measured training run per (dataset, model, variant, batch size, fanouts, GPU count). A run takes
# every core, so nothing else competes with it for the host while it is timed.


rule run:
    input:
        dataset=f"{DATA}/{{dataset}}",
        kernels=f"{RESULTS}/kernels.json",
    output:
        f"{RESULTS}/runs/{{dataset}}__{{model}}__{{variant}}__b{{batch}}__f{{fanouts}}__g{{gpus}}.json",
    log:
        f"{LOGS}/runs/{{dataset}}__{{model}}__{{variant}}__b{{batch}}__f{{fanouts}}__g{{gpus}}.log",
    params:
        hidden=config["hidden"],
        lr=config["lr"],
        seed=config["seed"],
        warmup=config["warmup_steps"],
        measure=config["measure_steps"],
        profile=config["profile_steps"],
        eval_nodes=config["eval_nodes"],
        modules=" ".join(f"--variant-module {m}" for m in config["variant_modules"]),
        # A multi-GPU run is one process per GPU: torchrun on this node, or srun + torchrun across nodes.
        launcher=lambda wc: run_launcher(int(wc.gpus), config["gpus_per_node"]),
    threads: workflow.cores
    resources:
        # Timed runs never share a GPU: the default profile caps `gpu` at 1 on a local machine.
        gpu=lambda wc: int(wc.gpus),
        # On SLURM (profiles/slurm) a run that spans nodes asks for them, one torchrun task per node.
        nodes=lambda wc: nodes_for(int(wc.gpus), config["gpus_per_node"]),
        tasks=lambda wc: nodes_for(int(wc.gpus), config["gpus_per_node"]),
    conda:
        "../../environment.yml"
    shell:
        "{params.launcher} run --dataset {wildcards.dataset} --dataset-dir {input.dataset} --model {wildcards.model} "
        "--variant {wildcards.variant} --batch-size {wildcards.batch} --fanouts {wildcards.fanouts} "
        "--gpus {wildcards.gpus} --hidden {params.hidden} --lr {params.lr} --seed {params.seed} "
        "--warmup-steps {params.warmup} --measure-steps {params.measure} --profile-steps {params.profile} "
        "--eval-nodes {params.eval_nodes} --threads {threads} {params.modules} --out {output} > {log} 2>&1"
