"""The Snakemake workflow: lint, a dry run of the full study, and a real CPU run of the default."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml

from zerognn.records.ids import RunKey

from .base_config import base_config, write_config

REPO = Path(__file__).resolve().parents[2]


def workflow_copy(tmp_path: Path, shipped_default: bool = False) -> Path:
    """The workflow files as a fresh clone has them, in a scratch directory; its default config is the tests'
    own (``base_config``) unless ``shipped_default``."""
    for name in ("Snakefile", "environment.yml"):
        shutil.copy(REPO / name, tmp_path / name)
    for name in ("workflow", "profiles", "kernels"):
        shutil.copytree(REPO / name, tmp_path / name)
    if not shipped_default:
        write_config(tmp_path / "workflow/config/default.yaml")
    return tmp_path


def snakemake(cwd: Path, *args: str, timeout: int = 600, env: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess:
    env = dict(os.environ, **(env or {}),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=timeout)


def test_lint_is_clean(tmp_path):
    result = snakemake(workflow_copy(tmp_path), "--lint")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Congratulations, your workflow is in a good condition!" in output, output
    assert "Lints for" not in output, output


def job_counts(output: str) -> dict[str, int]:
    return {name: int(n) for name, n in re.findall(r"^(\w+)\s+(\d+)\s*$", output, flags=re.M)}


def test_paper_config_plans_the_full_study_whatever_machine_plans_it(tmp_path):
    """`target: gpu` plans every variant, also here (a CPU machine, like a cluster's login node)."""
    result = snakemake(workflow_copy(tmp_path), "-n", "--configfile", "workflow/config/paper.yaml")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    variants = ["cuda-graph-naive", "dynamic-parallelism", "host-mediated", "torch-compile", "torch-eager", "zerognn",
                "zerognn-epoch", "zerognn-worstcase"]
    assert f"variants {variants}" in output, output
    counts = job_counts(output)
    assert counts["run"] == 3 * 3 * 3 * len(variants), output  # datasets x models x batch sizes x variants
    said = re.search(r"`paper\.yaml` \((\d+) runs", (REPO / "docs" / "running.md").read_text())
    assert said and int(said.group(1)) == counts["run"], "docs/running.md's count of paper.yaml's runs is stale"
    assert counts["dataset"] == 3, output
    for name in ("summary", "render_figures"):
        assert counts[name] == 1, output
    assert "--device cuda" in snakemake(tmp_path, "-n", "-p", "--configfile", "workflow/config/paper.yaml").stdout


def test_papers_config_times_a_whole_epoch_for_two_variants_only(tmp_path):
    cwd = workflow_copy(tmp_path)
    result = snakemake(cwd, "-n", "-p", "--configfile", "workflow/config/h200-papers.yaml")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert job_counts(output)["run"] == 7 * 6, output  # six trials each
    commands = [line for line in output.splitlines() if "zerognn run " in line or " run --dataset" in line]
    with_epoch = sorted(re.search(r"--variant (\S+)", c).group(1) for c in commands if "--whole-epoch" in c)
    assert len(commands) == 7 * 6 and with_epoch == ["host-mediated"] * 6 + ["zerognn"] * 6, output
    result = snakemake(cwd, "-n", "--configfile", "workflow/config/h200-papers.yaml",
                       "--config", "whole_epoch_variants=[zerogn]")
    assert result.returncode != 0
    errors = [line for line in (result.stdout + result.stderr).splitlines() if "config error" in line]
    assert len(errors) == 1 and "whole_epoch_variants names unknown variants ['zerogn']" in errors[0], result.stderr


def test_interference_config_plans_every_variant_alone_and_under_load(tmp_path):
    result = snakemake(workflow_copy(tmp_path), "-n", "-p", "--configfile", "workflow/config/h200-interference.yaml")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    counts = job_counts(output)
    assert counts["run"] == 16 * 6 and "run_under_host_load" not in counts, output  # one run rule, six trials each
    loaded = [line for line in output.splitlines() if "--host-load 16" in line]
    assert len(loaded) == 8 * 6 and all("__h16" in line for line in loaded), output
    assert sum("--host-load 0 " in line for line in output.splitlines()) == 8 * 6, output


def test_command_line_config_lists_are_typed_by_the_schema(tmp_path):
    cwd = workflow_copy(tmp_path)
    result = snakemake(cwd, "-n", "--config", "batch_sizes=[64]", "fanouts=[5,3]", "target=cpu")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "batch sizes [64]" in output and "tiny__sage__torch-eager__b64__f5-3__g1" in output, output
    result = snakemake(cwd, "-n", "--config", "batch_sizes=[0]")
    assert result.returncode != 0
    assert "0 is less than the minimum of 1" in result.stdout + result.stderr


class _Job:
    """What the SLURM plugin reads of a job: its resources (dict and attribute access) and threads."""

    def __init__(self, resources: dict, threads: int = 1):
        self.resources = type("Resources", (dict,), {"__getattr__": dict.__getitem__})(resources)
        self.threads = threads


def dry_run_jobs(output: str) -> list[dict]:
    """Each job of a dry run's listing: its rule, wildcards and resources."""

    def parse(text):
        return dict(item.split("=", 1) for item in text.split(", ")) if text else {}

    jobs = []
    for block in re.split(r"\n(?=(?:local)?(?:rule|checkpoint) \w+:)", output)[1:]:
        fields = dict(re.findall(r"^    (\w+): (.*)$", block, flags=re.M))
        jobs.append({"rule": block.split(":", 1)[0].split()[-1], "wildcards": parse(fields.get("wildcards", "")),
                     "resources": parse(fields.get("resources", ""))})
    return jobs


def run_key(job: dict) -> RunKey:
    return RunKey.parse(job["wildcards"]["run_id"])


def test_cluster_jobs_ask_slurm_for_their_own_gpus_and_nodes(tmp_path):
    """The run jobs' resources, as the SLURM executor plugin turns them into sbatch options."""
    pytest.importorskip("snakemake_executor_plugin_slurm")
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    cwd = workflow_copy(tmp_path)
    config = yaml.safe_load((REPO / "workflow/config/h200-x2.yaml").read_text())
    config.update(gpus=[1, 2, 16], gpus_per_node=8, variants=["zerognn"])
    (cwd / "cluster.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(cwd, "-n", "--profile", "profiles/slurm", "--configfile", "cluster.yaml",
                       "--default-resources", "slurm_account=lab", "slurm_partition=h200")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    runs = {run_key(j).gpus: j["resources"] for j in dry_run_jobs(output) if j["rule"] == "run"}
    assert sorted(runs) == [1, 2, 16], output
    expected = {1: ("--gpus=1", "--nodes=1"), 2: ("--gpus=2", "--nodes=1"), 16: ("--gres=gpu:8", "--nodes=2")}
    params = dict(run_uuid="u", slurm_logfile="l", comment_str="c", account="-A lab", partition="-p h200",
                  workdir=str(cwd))
    for gpus, resources in runs.items():
        # the account and partition given on the command line join the profile's per-rule settings
        assert resources["slurm_account"] == "lab" and resources["runtime"] == "60", resources
        assert "tasks" not in resources, resources
        typed = {k: int(v) if v.isdigit() else v for k, v in resources.items()}
        sbatch = get_submit_command(_Job(typed), params) + set_gres_string(_Job(typed))
        for option in expected[gpus]:
            assert option in sbatch.split(), (gpus, sbatch)
        assert "--ntasks-per-gpu" not in sbatch and ("--gpus=" in sbatch) == (gpus < 16), (gpus, sbatch)


TOY_BASELINE = """
import torch.nn.functional as F
from zerognn.models import TORCH_OPS
from zerognn.sampling import sample_subgraph
from zerognn.variants import Variant, phase, register


@register
class ToyBaseline(Variant):
    name = "toy-baseline"
    description = "the add-a-baseline example of docs/running.md"

    def step(self, epoch, step, global_step):
        ctx, ds = self.ctx, self.ctx.dataset
        seeds = self.seeds(epoch, step)
        with phase("sample"):
            sub = sample_subgraph(ds.graph, seeds, ctx.fanouts, ctx.seed, epoch, step)
        with phase("forward"):
            loss = F.cross_entropy(ctx.model(ds.features[sub.frontiers[-1]], sub.hops[::-1], TORCH_OPS),
                                   ds.labels[seeds])
        self.backward_and_update(loss, global_step)
"""


EXTERNAL_RULES = """
rule external_framework:
    output:
        "results/runs/tiny__sage__ext-framework__b256__f15-10-5__g1.json",
    log:
        "logs/external_framework.log",
    shell:
        "python external_record.py {output} > {log} 2>&1"
"""

# What another framework's harness would write: a record that follows docs/records.md.
EXTERNAL_RECORD = """
import json, os, sys
steps = [9.0, 9.5, 10.0]
record = {
    "schema_version": 1,
    "run_id": "tiny__sage__ext-framework__b256__f15-10-5__g1",
    "config": {"dataset": "tiny", "model": "sage", "variant": "ext-framework", "batch_size": 256,
               "fanouts": [15, 10, 5], "hidden": 256, "lr": 0.003, "seed": 0, "warmup_steps": 1,
               "measure_steps": 3, "profile_steps": 0, "gpus": 1, "device": "cpu", "dtype": "float32"},
    "dataset": {"name": "tiny", "source": "synthetic-rmat", "num_nodes": 2000, "num_edges": 20000,
                "num_features": 16, "num_classes": 4, "scale": 1.0},
    "metrics": {"steps_per_epoch": 4, "step_ms": steps, "step_ms_median": 9.5, "step_ms_p10": 9.1,
                "step_ms_p90": 9.9, "epoch_s": 0.038, "seeds_per_s": 256 * 1000 / 9.5,
                "gpu_exec_fraction": None, "host_syncs_per_step": None, "host_launches_per_step": None,
                "peak_mem_bytes": None, "phase_ms": {}, "window_ms": None},
    "losses": [1.4, 1.2, 1.1, 1.0],
    "accuracy": {"val": None, "test": None, "eval_nodes": 0},
    "variant_info": {},
    "environment": {"git_commit": None, "gpu_name": None},
}
tmp = sys.argv[1] + ".tmp"
with open(tmp, "w") as f:
    json.dump(record, f)
os.replace(tmp, sys.argv[1])
"""


def figure_variants(cwd: Path, figure: str) -> set[str]:
    """The variants a rendered figure's legend names (the figure is drawn again from the same files)."""
    from zerognn.figures.data import FigureData
    from zerognn.figures.render import draw_figure

    fig = draw_figure(figure, FigureData.load(cwd / "results" / "summary.csv", cwd / "results" / "runs"))
    return {text.get_text() for legend in fig.legends for text in legend.get_texts()}


def test_figure_jobs_are_planned_from_the_summarys_list_without_matplotlib(tmp_path):
    """With the runs done and summarized, a dry run plans one job per supported figure, reading the list
    `zerognn summarize --figures` wrote: nothing is drawn, nor matplotlib or seaborn imported, to plan."""
    from tests.records.factory import make_record, write_records
    from zerognn.cli import main

    (tmp_path / "workflow").mkdir()
    cwd = workflow_copy(tmp_path / "workflow")
    write_config(cwd / "done.yaml", target="cpu", datasets={"tiny": {"scale": 1.0}}, variants=["torch-eager"])
    # the runs' inputs, the runs (their records; CPU runs at two batch sizes), then their summary
    (cwd / "data" / "tiny").mkdir(parents=True)
    (cwd / "results").mkdir()
    (cwd / "results" / "kernels.json").write_text("{}\n")
    write_records(cwd / "results" / "runs", [
        make_record("torch-eager", batch_size=b, step_ms=(10.0 * b, 11.0 * b), phase_ms={"sample": 1.0})
        for b in (256, 1024)])
    results = cwd / "results"
    assert main(["summarize", "--runs", str(results / "runs"), "--out", str(results / "summary.csv"), "--markdown",
                 str(results / "summary.md"), "--figures", str(results / "figures.json")]) == 0
    stamp = time.time() - 100
    for i, paths in enumerate([[cwd / "data" / "tiny", results / "kernels.json", *(cwd / "kernels").iterdir()],
                               list((results / "runs").iterdir()),
                               [results / name for name in ("summary.csv", "summary.md", "figures.json")]]):
        for path in paths:
            os.utime(path, (stamp + 10 * i, stamp + 10 * i))
    stubs = tmp_path / "stubs"
    for name in ("matplotlib", "seaborn"):
        (stubs / name).mkdir(parents=True)
        (stubs / name / "__init__.py").write_text(f"raise ImportError('{name} is not importable here')\n")
    no_plotting = {"PYTHONPATH": str(stubs)}
    check = subprocess.run([sys.executable, "-c", "import zerognn.figures.render"], env=dict(os.environ, **no_plotting),
                           capture_output=True, text=True)
    assert check.returncode != 0 and "matplotlib is not importable here" in check.stderr  # the stubs do hide them

    result = snakemake(cwd, "-n", "--configfile", "done.yaml", env=no_plotting)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    counts = job_counts(output)
    assert counts.get("figure") == 3 and counts.get("render_figures") == 1, output
    assert not {"run", "summary", "dataset", "kernels"} & set(counts), output
    planned = {job["wildcards"]["figure"] for job in dry_run_jobs(output) if job["rule"] == "figure"}
    assert planned == {"batch_sweep", "breakdown", "loss"}, output


@pytest.mark.slow
def test_default_pipeline_runs_end_to_end_on_the_cpu_with_added_baselines(tmp_path):
    cwd = workflow_copy(tmp_path)
    (cwd / "toy_baseline.py").write_text(TOY_BASELINE)
    (cwd / "external.smk").write_text(EXTERNAL_RULES)
    (cwd / "external_record.py").write_text(EXTERNAL_RECORD)
    # the default config, trimmed to its smallest graph so the test stays quick, plus one out-of-package
    # variant and one external rule that writes its own record, both named only in the config
    config = base_config(datasets={"tiny": {"scale": 1.0}}, measure_steps=4, variant_modules=["toy_baseline.py"],
                         extra_rule_files=["external.smk"],
                         extra_run_records=["results/runs/tiny__sage__ext-framework__b256__f15-10-5__g1.json"])
    (cwd / "small.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(cwd, "--cores", "2", "--configfile", "small.yaml")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    # the end of the output says what ran, what did not and why, and where everything is
    end = output[output.rindex("zerognn: finished"):]
    assert "zerognn: target " in end and "figures/ (listed in figures/manifest.txt)" in end, end
    assert "figure scaling not drawn: needs runs at 2 or more GPU counts" in end, end
    if not torch.cuda.is_available():
        assert "skipping variant host-mediated: it needs a CUDA GPU" in end and "with a CUDA GPU the same" in end
    if not torch.cuda.is_available():
        # the log names every registered variant the CPU cannot run
        log = "".join(p.read_text() for p in (cwd / ".snakemake" / "log").glob("*.log"))
        assert "skipping variant host-mediated: it needs a CUDA GPU" in log
    summary = pd.read_csv(cwd / "results" / "summary.csv")
    assert set(summary["batch_size"]) == {256, 1024}
    assert {"torch-eager", "toy-baseline", "ext-framework"} <= set(summary["variant"])
    assert (summary["step_ms_median"] > 0).all()
    assert (cwd / "results" / "summary.md").read_text().count("\n") == len(summary) + 2  # header, rule, rows
    for name in ("batch_sweep", "loss", "breakdown"):
        assert (cwd / "figures" / f"{name}.png").is_file() and (cwd / "figures" / f"{name}.pdf").is_file()
    supported = json.loads((cwd / "results" / "figures.json").read_text())
    assert sorted(f"figures/{n}.{f}" for n, r in supported.items() if r is None for f in ("png", "pdf")) == sorted(
        (cwd / "figures" / "manifest.txt").read_text().split())
    assert {"torch-eager", "toy-baseline"} <= figure_variants(cwd, "batch_sweep")
    assert {"torch-eager", "toy-baseline", "ext-framework"} <= figure_variants(cwd, "loss")
    assert sorted((cwd / "logs" / "runs").glob("*.log"))
    # same samples, same model: the added baseline's losses equal torch-eager's, up to the last bits of CPU
    # GEMMs in two processes (MKL's results can depend on memory alignment), which the run's steps carried
    # to 1.9e-5 relative in one CI run (1.2e-5 in absolute terms at B=1024): 1e-4 holds that with room
    eager = summary[summary["variant"] == "torch-eager"].set_index("batch_size")["final_loss"]
    toy = summary[summary["variant"] == "toy-baseline"].set_index("batch_size")["final_loss"]
    assert ((eager - toy).abs() / eager).max() < 1e-4

    # every figure is a tracked output: a deleted one is planned again, and drawn again, alone
    (cwd / "figures" / "loss.png").unlink()
    result = snakemake(cwd, "-n", "--configfile", "small.yaml")
    counts = job_counts(result.stdout + result.stderr)
    assert counts.get("figure") == 1 and "run" not in counts, result.stdout + result.stderr
    assert "figures/loss.png" in result.stdout
    result = snakemake(cwd, "--cores", "1", "--configfile", "small.yaml")
    assert result.returncode == 0 and (cwd / "figures" / "loss.png").is_file(), result.stdout + result.stderr
    assert "figures/loss.png" in (cwd / "figures" / "manifest.txt").read_text()

    # one more baseline plans its own runs only; a changed baseline module re-plans its own runs only
    (cwd / "toy_baseline_two.py").write_text(TOY_BASELINE.replace('"toy-baseline"', '"toy-baseline-two"'))
    config["variant_modules"] = ["toy_baseline.py", "toy_baseline_two.py"]
    (cwd / "small.yaml").write_text(yaml.safe_dump(config))
    jobs = dry_run_jobs(snakemake(cwd, "-n", "--configfile", "small.yaml").stdout)
    assert {(run_key(j).variant, run_key(j).batch_size) for j in jobs if j["rule"] == "run"} == {
        ("toy-baseline-two", 256), ("toy-baseline-two", 1024)}, jobs
    (cwd / "toy_baseline.py").write_text(TOY_BASELINE + "# changed\n")  # Snakemake compares checksums
    jobs = dry_run_jobs(snakemake(cwd, "-n", "--configfile", "small.yaml").stdout)
    assert {run_key(j).variant for j in jobs if j["rule"] == "run"} == {"toy-baseline", "toy-baseline-two"}
    assert len([j for j in jobs if j["rule"] == "run"]) == 4
    config["variant_modules"] = ["toy_baseline.py"]
    (cwd / "small.yaml").write_text(yaml.safe_dump(config))

    # `snakemake figures` re-renders from the records on disk and starts no training run
    records = sorted((cwd / "results" / "runs").glob("*.json"))
    stamps = [p.stat().st_mtime_ns for p in records]
    (cwd / "figures" / "batch_sweep.png").unlink()
    result = snakemake(cwd, "--cores", "1", "figures", "--configfile", "small.yaml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (cwd / "figures" / "batch_sweep.png").is_file()
    assert [p.stat().st_mtime_ns for p in records] == stamps

    # `snakemake --report` writes one page with the summary and every figure drawn (after a run, so
    # that Snakemake knows the figures the summary checkpoint asked for)
    result = snakemake(cwd, "--cores", "1", "--report", "report.html", "--report-after-run", "--configfile",
                       "small.yaml")
    assert result.returncode == 0, result.stdout + result.stderr
    page = (cwd / "report.html").read_text()
    for name in ("summary.csv", "batch_sweep.png", "loss.png", "breakdown.png"):
        assert name in page, name


def test_multi_node_runs_are_started_by_srun_and_torchrun(tmp_path):
    cwd = workflow_copy(tmp_path)
    write_config(cwd / "multi-node.yaml", gpus=[1, 2, 8], gpus_per_node=4, batch_sizes=[64],
                 datasets={"tiny": {"scale": 1.0}, "products-like": {"scale": 1.0, "needs_gpu": True}})
    result = snakemake(cwd, "-n", "-p", "--configfile", "multi-node.yaml")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    eight = "srun --nodes 2 --ntasks-per-node 1 torchrun --nnodes 2 --nproc-per-node 4 --rdzv-backend c10d"
    assert eight in output and "--gpus 8 " in output.split(eight, 1)[1].split("\n")[0], output
    assert "torchrun --standalone --nproc-per-node 2 -m zerognn run" in output
    assert "nodes=2" in output and "gres=gpu:4" in output, output


def test_variants_all_leaves_out_experimental_variants(tmp_path):
    cwd = workflow_copy(tmp_path)
    (cwd / "toy_baseline.py").write_text(TOY_BASELINE.replace('    name = "toy-baseline"\n',
                                                              '    name = "toy-baseline"\n    experimental = True\n'))
    result = snakemake(cwd, "-n", "--config", "variants=all", "variant_modules=[toy_baseline.py]")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "leaves out experimental variant toy-baseline" in output, output
    assert "toy-baseline" not in output.replace("leaves out experimental variant toy-baseline", ""), output


def _processes_writing(path: Path) -> list[int]:
    """Pids of live `zerognn run` processes whose command line names ``path``."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and "run" in cmdline and str(path) in cmdline:
            pids.append(int(proc.name))
    return pids


@pytest.mark.slow
def test_a_killed_pipeline_leaves_no_run_behind_and_runs_again(tmp_path):
    cwd = workflow_copy(tmp_path)
    config = base_config()
    # every configured directory with a space and a non-ASCII letter: each shell argument is quoted
    dirs = {key: f"{key.split('_')[0]} dir é" for key in ("data_dir", "results_dir", "figures_dir", "logs_dir")}
    config.update(datasets={"tiny": {"scale": 1.0}}, batch_sizes=[64], warmup_steps=0, measure_steps=1_000_000,
                  profile_steps=0, eval_nodes=0, **dirs)
    (cwd / "long.yaml").write_text(yaml.safe_dump(config, allow_unicode=True))
    record = f"{dirs['results_dir']}/runs/tiny__sage__torch-eager__b64__f15-10-5__g1.json"
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    pipeline = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", "long.yaml"],
                                cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline, runs = time.monotonic() + 300, []
        while not runs and time.monotonic() < deadline and pipeline.poll() is None:
            time.sleep(0.5)
            runs = _processes_writing(Path(record))
        assert runs, "the pipeline never started the run"
    finally:
        pipeline.kill()  # SIGKILL: Snakemake gets no chance to stop its jobs
        pipeline.wait()
    deadline = time.monotonic() + 30
    while _processes_writing(Path(record)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _processes_writing(Path(record)), "the run trains on as an orphan"
    assert not (cwd / record).exists()

    assert snakemake(cwd, "--unlock", "--configfile", "long.yaml").returncode == 0
    result = snakemake(cwd, "--cores", "2", "--configfile", "long.yaml", "--config", "measure_steps=2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (cwd / record).is_file() and (cwd / dirs["figures_dir"] / "manifest.txt").is_file()
    assert not list((cwd / dirs["results_dir"] / "runs").glob(".*"))  # no lock or temporary file left
    assert (cwd / record).stat().st_mode & 0o777 == 0o666 & ~_umask()  # shareable, like any file written
    # nothing landed outside the configured directories (an unquoted path would leave stray files)
    assert sorted(p.name for p in cwd.iterdir() if not p.name.startswith(".")) == sorted(
        ["Snakefile", "environment.yml", "workflow", "profiles", "kernels", "long.yaml", *dirs.values()])


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("override, message", [
    ("variants=[nope]", "config names unknown variants ['nope']"),
    ("variant_modules=[missing.py]", "variant module file missing.py does not exist"),
    ("models=[xyz]", "models[0]: 'xyz' is not one of"),
])
def test_a_bad_config_is_one_line_before_any_job(tmp_path, override, message):
    result = snakemake(workflow_copy(tmp_path), "-n", "--config", override)
    assert result.returncode == 2
    errors = [line for line in (result.stdout + result.stderr).splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and errors[0].startswith("zerognn: config error: ") and message in errors[0], errors


def test_a_config_file_naming_a_key_twice_is_one_line_before_any_job(tmp_path):
    cwd = workflow_copy(tmp_path)
    text = (cwd / "workflow/config/default.yaml").read_text()
    (cwd / "twice.yaml").write_text(text + "models: [gcn]\n")
    result = snakemake(cwd, "-n", "--configfile", "twice.yaml")
    assert result.returncode == 2
    errors = [line for line in (result.stdout + result.stderr).splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and "twice.yaml: key 'models' appears twice" in errors[0], errors


def test_the_ogb_config_plans_the_paper_study_on_the_real_datasets(tmp_path):
    result = snakemake(workflow_copy(tmp_path), "-n", "--configfile", "workflow/config/ogb.yaml")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "datasets ['ogbn-arxiv', 'ogbn-products', 'ogbn-papers100M']" in output, output
    counts = job_counts(output)
    paper = yaml.safe_load((REPO / "workflow/config/paper.yaml").read_text())
    ogb = yaml.safe_load((REPO / "workflow/config/ogb.yaml").read_text())
    assert {k: v for k, v in ogb.items() if k != "datasets"} == {k: v for k, v in paper.items() if k != "datasets"}
    assert counts["run"] == 216 and counts["dataset"] == 3, output


def test_a_baseline_added_as_the_docs_say_is_planned_beside_the_shipped_study(tmp_path):
    cwd = workflow_copy(tmp_path, shipped_default=True)
    (cwd / "my_baseline.py").write_text(TOY_BASELINE)
    (cwd / "my.yaml").write_text("variant_modules: [my_baseline.py]\n")  # just what changes
    result = snakemake(cwd, "-n", "--configfile", "workflow/config/default.yaml", "my.yaml", "--config",
                       "target=cpu")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "'toy-baseline'" in output and "datasets ['tiny', 'arxiv-like']" in output, output
    docs = " ".join((REPO / "docs/running.md").read_text().split())
    assert "--configfile workflow/config/default.yaml my.yaml" in docs  # what this test runs
