"""Runs to a target accuracy for the figure tests: a hand-built record given a valid ``training``."""

from __future__ import annotations

from typing import Any

from zerognn.records import RunKey

TARGET = 0.6


def trained(record: dict[str, Any], times: list[float], accuracies: list[float | None], seed: int = 0,
            setup: float = 0.5, target: float | None = TARGET) -> dict[str, Any]:
    """``record`` (make_record's) as seed ``seed``'s run to ``target`` that evaluated after each epoch: by epoch k
    it had trained ``times[k - 1]`` seconds to validation accuracy ``accuracies[k - 1]``."""
    config = record["config"]
    config |= {"seed": seed, "epochs": len(times), "eval_every": 1, "eval_nodes": 100}
    record["run_id"] = RunKey.of(config).run_id
    steps_per_epoch = record["metrics"]["steps_per_epoch"]
    evaluations = [{"step": steps_per_epoch * epoch, "epoch": epoch, "train_s": s, "eval_s": 0.1, "val_acc": acc,
                    "train_loss": 1.0} for epoch, (s, acc) in enumerate(zip(times, accuracies), start=1)]
    hit = next((e for e in evaluations if target is not None and e["val_acc"] is not None
                and e["val_acc"] >= target), None)
    record["training"] = {
        "target_val_acc": target, "epochs": len(times), "eval_every": 1, "eval_nodes": 100, "setup_s": setup,
        "evaluations": evaluations, "time_to_target_s": hit and hit["train_s"],
        "time_to_target_with_setup_s": hit and hit["train_s"] + setup, "epochs_to_target": hit and hit["epoch"],
        "not_reached": None if hit else "val accuracy stayed below the target"}
    return record
