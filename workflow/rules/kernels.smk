# Compile every CUDA operator for this machine's GPU (sm_90 without one) into the kernel cache; runs
# start from the cache instead of compiling while they are timed.


rule kernels:
    input:
        sorted(glob.glob("kernels/*.cu")) + sorted(glob.glob("kernels/*.cuh")),
    output:
        f"{RESULTS}/kernels.json",
    log:
        f"{LOGS}/kernels.log",
    conda:
        "../../environment.yml"
    shell:
        "zerognn build --arch auto --out {output:q} > {log:q} 2>&1"
