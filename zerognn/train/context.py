"""What a run trains with, built in one place: its device, and the model, optimizer and loss log that every
variant of it shares (``build_context``; the tests build theirs here too)."""

from __future__ import annotations

import torch

from ..datasets.store import Dataset
from ..distributed import SINGLE, World
from ..errors import ZeroGNNError
from ..measure.memory import PeakMemory
from ..models import build_model
from ..optimizer import build_adam
from ..records.spec import RunSpec
from ..sampling import steps_per_epoch
from ..variants import VariantContext


def resolve_device(name: str) -> torch.device:
    """``auto``, ``cpu`` or ``cuda`` as the device a run trains on; an error if CUDA is asked for and absent."""
    if name == "cuda" and not torch.cuda.is_available():
        raise ZeroGNNError("device 'cuda' was requested but PyTorch sees no CUDA GPU; "
                           "use --device cpu or run on a GPU machine")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def build_context(spec: RunSpec, dataset: Dataset, device: torch.device, world: World = SINGLE,
                  steps: int | None = None, memory: PeakMemory | None = None) -> VariantContext:
    """The model (initial parameters from ``spec.seed`` alone), its optimizer and a loss log of ``steps``
    entries (default: every step the run trains) for ``dataset``, already on ``device``."""
    spe = steps_per_epoch(dataset.train_idx.numel(), spec.batch_size * world.size)
    model = build_model(spec.model, dataset.num_features, spec.hidden, dataset.num_classes, len(spec.fanouts),
                        spec.seed).to(device)
    optimizer = build_adam(model.parameters(), spec.lr, cuda=device.type == "cuda")
    loss_log = torch.zeros(spec.steps_run(spe) if steps is None else steps, dtype=torch.float32, device=device)
    return VariantContext(dataset, model, optimizer, spec.model, list(spec.fanouts), spec.batch_size, spec.seed,
                          device, loss_log, spe, world, memory or PeakMemory(device))
