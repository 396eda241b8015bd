# One measured training run per planned run id (zerognn/records/ids.py: dataset, model, variant, batch
# size, fanouts, GPU count, host load, mode, trial). A run takes every core, so locally nothing else (another run, a
# dataset build) runs beside it while it is timed.


rule run:
    input:
        dataset=lambda wc: f"{DATA}/{run_key(wc).dataset}",
        kernels=f"{RESULTS}/kernels.json",
        # an out-of-package variant's runs are re-run when its module changes; no other run reads it
        variant_module=variant_module_source,
        # with trials: the run just before this one in its group's rounds (zerognn/workflow/plan.py), so
        # they run in that order; ancient: a re-run of it does not make this run out of date
        previous=previous_run,
    output:
        f"{RESULTS}/runs/{{run_id}}.json",
    log:
        f"{LOGS}/runs/{{run_id}}.log",
    params:
        # every RunSpec field, from the config and the run id (zerognn/workflow/plan.py)
        spec=run_arguments,
        # A multi-GPU run is one process per GPU: torchrun on this node, or srun + torchrun across nodes.
        launcher=lambda wc: run_launcher(run_key(wc).gpus, config["gpus_per_node"]),
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
        "ZEROGNN_PARENT=$PPID@$HOSTNAME exec {params.launcher} run {params.spec} --dataset-dir {input.dataset:q} "
        "--threads {threads} --out {output:q} > {log:q} 2>&1"
