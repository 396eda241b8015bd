"""``RunSpec``: one run's configuration, checked before any work starts."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import torch

from ..errors import ZeroGNNError
from ..measure.trace import PROFILER_LEAD_IN_STEPS


def parse_fanouts(text: str | list[int]) -> list[int]:
    """'15,10,5' or '15-10-5' or [15, 10, 5] -> [15, 10, 5]; every fanout a positive integer.

    One separator throughout: '15,-1' is a negative fanout and an error, not [15, 1].
    """
    example = "e.g. 15,10,5 or 15-10-5"
    if isinstance(text, str):
        stripped = text.strip()
        parts = stripped.split("," if "," in stripped else "-")
        if not all(p.strip().isdigit() for p in parts):
            raise ZeroGNNError(f"fanouts {text!r} must be positive integers separated by ',' or '-', {example}")
        values = [int(p) for p in parts]
    else:
        values = list(text)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise ZeroGNNError(f"fanouts {text!r} must be a list of positive integers, {example}")
    if not values or any(v <= 0 for v in values):
        raise ZeroGNNError(f"fanouts {text!r} must be one or more positive integers, {example}")
    return values


@dataclass
class RunSpec:
    dataset: str
    model: str
    variant: str
    batch_size: int
    fanouts: list[int]
    hidden: int = 256
    lr: float = 3e-3
    seed: int = 0
    warmup_steps: int = 5
    measure_steps: int = 20
    profile_steps: int = 5
    eval_nodes: int = 2048
    gpus: int = 1
    device: str = "auto"
    dtype: str = "float32"
    whole_epoch: bool = False  # also train and time one whole epoch (metrics.epoch_s_measured)
    host_load: int = 0  # CPU-bound processes beside the timed and profiled steps (zerognn.measure.host_load)
    variant_modules: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.fanouts = parse_fanouts(self.fanouts)
        for name in ("batch_size", "hidden", "measure_steps", "gpus"):
            if int(getattr(self, name)) <= 0:
                raise ZeroGNNError(f"{name} must be a positive integer, got {getattr(self, name)}")
        for name in ("warmup_steps", "profile_steps", "eval_nodes", "seed", "host_load"):
            if int(getattr(self, name)) < 0:
                raise ZeroGNNError(f"{name} must be a non-negative integer, got {getattr(self, name)}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ZeroGNNError(f"lr must be a finite number > 0, got {self.lr}")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ZeroGNNError(f"device must be auto, cpu or cuda, got {self.device!r}")
        if not isinstance(self.whole_epoch, bool):
            raise ZeroGNNError(f"whole_epoch must be true or false, got {self.whole_epoch!r}")
        if self.dtype != "float32":
            raise ZeroGNNError(f"only float32 training is supported, got dtype {self.dtype!r}")

    @property
    def total_steps(self) -> int:
        """Steps before the whole epoch (if any): warm-up, timed, profiler lead-in and profiled."""
        lead_in = PROFILER_LEAD_IN_STEPS if self.profile_steps else 0
        return self.warmup_steps + self.measure_steps + lead_in + self.profile_steps

    def whole_epoch_first_step(self, steps_per_epoch: int) -> int | None:
        """The global step the timed whole epoch starts at: the first epoch boundary after ``total_steps``."""
        return -(-self.total_steps // steps_per_epoch) * steps_per_epoch if self.whole_epoch else None

    def steps_run(self, steps_per_epoch: int) -> int:
        """Every step the run trains, the whole epoch and the steps up to its start included."""
        first = self.whole_epoch_first_step(steps_per_epoch)
        return self.total_steps if first is None else first + steps_per_epoch

    def resolve_device(self) -> torch.device:
        if self.device == "cuda" and not torch.cuda.is_available():
            raise ZeroGNNError("device 'cuda' was requested but PyTorch sees no CUDA GPU; "
                               "use --device cpu or run on a GPU machine")
        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return torch.device(self.device)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("variant_modules")
        return d
