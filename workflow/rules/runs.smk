# One measured training run per (dataset, model, variant, batch size, fanouts, GPU count). A run takes
# every core, so locally nothing else (another run, a dataset build) runs beside it while it is timed.


rule run:
    input:
        dataset=f"{DATA}/{{dataset}}",
        kernels=f"{RESULTS}/kernels.json",
        # an out-of-package variant's runs are re-run when its module changes; no other run reads it
        variant_module=variant_module_source,
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
        device=RUN_DEVICE,
        module=variant_module_option,
        whole_epoch=whole_epoch_option,
        host_load=lambda wc: wc.get("load", 0),
        # A multi-GPU run is one process per GPU: torchrun on this node, or srun + torchrun across nodes.
        launcher=lambda wc: run_launcher(int(wc.gpus), config["gpus_per_node"]),
    threads: workflow.cores
    resources:
        # What a cluster job asks for, in the SLURM plugin's resource names (zerognn/workflow/launcher.py,
        # job_resources); locally no resource is capped and these only describe the job.
        gpu=job_resource("gpu"),
        gres=job_resource("gres"),
        nodes=job_resource("nodes"),
    conda:
        "../../environment.yml"
    shell:
        # exec: no shell stays between Snakemake and the run; ZEROGNN_PARENT: the run stops if Snakemake dies.
        "ZEROGNN_PARENT=$PPID@$HOSTNAME exec {params.launcher} run --dataset {wildcards.dataset} "
        "--dataset-dir {input.dataset:q} --model {wildcards.model} --variant {wildcards.variant} "
        "--batch-size {wildcards.batch} --fanouts {wildcards.fanouts} --gpus {wildcards.gpus} "
        "--device {params.device} --hidden {params.hidden} --lr {params.lr} --seed {params.seed} "
        "--warmup-steps {params.warmup} --measure-steps {params.measure} --profile-steps {params.profile} "
        "--eval-nodes {params.eval_nodes} --threads {threads} --host-load {params.host_load} {params.whole_epoch} "
        "{params.module} --out {output:q} > {log:q} 2>&1"


# The same run measured beside `load` CPU-bound processes on its cores (config `host_load`).
use rule run as run_under_host_load with:
    output:
        f"{RESULTS}/runs/{{dataset}}__{{model}}__{{variant}}__b{{batch}}__f{{fanouts}}__g{{gpus}}__h{{load}}.json",
    log:
        f"{LOGS}/runs/{{dataset}}__{{model}}__{{variant}}__b{{batch}}__f{{fanouts}}__g{{gpus}}__h{{load}}.log",
