"""The markdown table of every run in a summary CSV, as docs/results.md shows it.

    python scripts/results_table.py results/reference/h200/summary.csv > table.md

Rows: SAGE by batch size, then the other models; within a batch size, dataset, then the variants in
the paper's order. Empty cells are values a record does not have (an older schema, a CPU run).
"""

import argparse

import pandas as pd

from zerognn.figures.style import variant_order
from zerognn.records import read_summary

HEADER = ("| dataset | model | variant | batch | step ms, median (p10–p90) | × host-mediated | GPU busy ms | "
          "exec fraction | GPU activities/step | step / floor | syncs/step | launches/step | peak MiB | final loss "
          "| commit |")


def cell(value, fmt: str) -> str:
    return "" if pd.isna(value) else format(value, fmt)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("summary")
    df = read_summary(parser.parse_args().summary)
    order = {v: i for i, v in enumerate(variant_order(df["variant"]))}
    df = df.assign(_model=df["model"].map(lambda m: (m != "sage", m)), _variant=df["variant"].map(order))
    df = df.sort_values(["_model", "batch_size", "dataset", "_variant", "gpus"])
    print(HEADER)
    print("|" + "---|" * HEADER.count(" | ") + "---|")
    for r in df.itertuples():
        peak = None if pd.isna(r.peak_mem_bytes) else r.peak_mem_bytes / 2**20
        print(f"| {r.dataset} | {r.model.upper()} | {r.variant} | {r.batch_size} | {r.step_ms_median:.2f} "
              f"({r.step_ms_p10:.2f}–{r.step_ms_p90:.2f}) | {cell(r.speedup_vs_host_mediated, '.2f')} | "
              f"{cell(r.gpu_busy_ms_per_step, '.2f')} | {cell(r.gpu_exec_fraction, '.3f')} | "
              f"{cell(r.gpu_activities_per_step, '.0f')} | {cell(r.step_over_floor, '.1f')} | "
              f"{cell(r.host_syncs_per_step, '.0f')} | {cell(r.host_launches_per_step, '.0f')} | {cell(peak, '.0f')} | "
              f"{cell(r.final_loss, '.4f')} | {r.git_commit} |")


if __name__ == "__main__":
    main()
