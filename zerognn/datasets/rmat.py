"""R-MAT edge generation and the bounded-memory, symmetrised CSR build of the synthetic graphs.

Edges. Edge ``e`` is a pure function of (seed, e): its key is ``combine(key_int(seed, PURPOSE_EDGES), e)``
and each 64-bit draw of that key (``zerognn.rng``) chooses the quadrant of four recursion levels, 16 bits
per level compared against the initiator scaled to 2^16. Only integer arithmetic is involved, so the CPU
and CUDA produce the same edges, and any range of edge indices can be regenerated on demand: the CSR
build regenerates the edges on every pass instead of storing the edge list.

Ids. R-MAT picks ids in [0, 2^S) with S the bit length of N-1; they are folded into [0, N) by the
monotone map ``r -> (r * N) >> S``, which keeps id prefixes (R-MAT's recursive blocks) together and
gives every node one or two R-MAT ids.

Communities. The Graph500 initiator is slightly disassortative (a*d < b*c): ids that share a prefix
are not linked more often than chance once degree is accounted for. So that labels can be learnt from
the graph, a share ``intra_prob`` of the edges is moved inside the source's community (one of
``communities`` contiguous blocks of folded ids); the destination keeps its relative position, so
every community has hubs of its own mirroring the global ones and the degree distribution stays skewed.

Relabelling. Low R-MAT ids are the hubs. ``node_permutation`` (a stable argsort of hashed ids) gives the
final ids, so degree and community are not correlated with the id a node ends up with.
"""

from __future__ import annotations

import io
import logging
import math
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
import torch

from ..errors import ZeroGNNError
from ..graph import CSRGraph, col_dtype_for
from ..rng import combine, draw, key_int, mix64, uniform_unit
from .build import create_npy
from .progress import Progress

log = logging.getLogger(__name__)

GRAPH500 = (0.57, 0.19, 0.19, 0.05)
LEVEL_BITS = 16
LEVELS_PER_DRAW = 64 // LEVEL_BITS
# Keys such as row * N + col and products such as r * N must stay below 2^63.
MAX_NODES = 2**31
PURPOSE_EDGES = 1
PURPOSE_PERMUTATION = 2
# The calibration keeps a hash-chosen sample of about this many distinct pairs.
CALIBRATION_SAMPLE = 1 << 22
DEFAULT_CHUNK_EDGES = {"cpu": 1 << 21, "cuda": 1 << 25}
DEFAULT_MAX_RAW_ENTRIES = {"cpu": 1 << 27, "cuda": 1 << 30}
# A range's int64 keys, their sorted copy, the sort's scratch and the unique output, with room to spare.
SORT_BYTES_PER_ENTRY = 48
MAX_RAW_ENTRIES_GPU = (1 << 31) - 1  # a sort of more elements than int32 counts is not one torch promises
HOST_SLICE_ENTRIES = 1 << 27

NUMPY_DTYPE = {torch.int32: np.int32, torch.int64: np.int64}

EdgeChunks = Callable[[], Iterable[tuple[torch.Tensor, torch.Tensor]]]


def check_num_nodes(num_nodes: int) -> None:
    if not 2 <= num_nodes <= MAX_NODES:
        raise ZeroGNNError(
            f"an R-MAT graph needs 2 to {MAX_NODES} nodes, got {num_nodes}; choose a scale that "
            f"gives a node count in that range."
        )


def levels_for(num_nodes: int) -> int:
    return max(1, (num_nodes - 1).bit_length())


def community_of(ids: torch.Tensor, num_nodes: int, communities: int) -> torch.Tensor:
    """The community (contiguous block of pre-relabelling ids) of each id."""
    return ids * communities // num_nodes


def _into_community(src: torch.Tensor, dst: torch.Tensor, num_nodes: int, communities: int) -> torch.Tensor:
    """Map ``dst`` into ``src``'s community, keeping its relative position."""
    c = community_of(src, num_nodes, communities)
    lo = (c * num_nodes + communities - 1) // communities
    hi = ((c + 1) * num_nodes + communities - 1) // communities
    return lo + dst * (hi - lo) // num_nodes


def rmat_edges(
    num_nodes: int, seed: int, start: int, stop: int, device: torch.device | str,
    *, communities: int = 1, intra_prob: float = 0.0, initiator: tuple[float, ...] = GRAPH500,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Edges ``start..stop-1`` as (src, dst) int64 tensors of pre-relabelling ids in [0, num_nodes)."""
    levels = levels_for(num_nodes)
    a, b, c, _ = initiator
    t1, t2, t3 = (round(x * (1 << LEVEL_BITS)) for x in (a, a + b, a + b + c))
    keys = combine(key_int(seed, PURPOSE_EDGES), torch.arange(start, stop, dtype=torch.int64, device=device))
    src = torch.zeros_like(keys)
    dst = torch.zeros_like(keys)
    for level in range(levels):
        word, slot = divmod(level, LEVELS_PER_DRAW)
        if slot == 0:
            r = draw(keys, word)
        u = (r >> (64 - LEVEL_BITS * (slot + 1))) & ((1 << LEVEL_BITS) - 1)
        quadrant = (u >= t1).long() + (u >= t2).long() + (u >= t3).long()  # 0..3 = a, b, c, d
        src = (src << 1) | (quadrant >> 1)
        dst = (dst << 1) | (quadrant & 1)
    src = (src * num_nodes) >> levels
    dst = (dst * num_nodes) >> levels
    if intra_prob > 0:
        intra = uniform_unit(draw(keys, math.ceil(levels / LEVELS_PER_DRAW))) < intra_prob
        dst = torch.where(intra, _into_community(src, dst, num_nodes, communities), dst)
    return src, dst


def rmat_edge_chunks(
    num_nodes: int, num_edges: int, seed: int, device: torch.device | str, chunk_edges: int | None = None,
    *, communities: int = 1, intra_prob: float = 0.0, relabel: torch.Tensor | None = None,
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Yield the graph's ``num_edges`` R-MAT edges in chunks of ``chunk_edges`` as (src, dst) int64.

    With ``relabel`` (a new-id-of-old-id table, see ``node_permutation``) the ids are relabelled.
    """
    chunk_edges = chunk_edges or default_chunk_edges(device)
    for start in range(0, num_edges, chunk_edges):
        src, dst = rmat_edges(
            num_nodes, seed, start, min(start + chunk_edges, num_edges), device,
            communities=communities, intra_prob=intra_prob,
        )
        if relabel is not None:
            src, dst = relabel[src], relabel[dst]
        yield src, dst


def default_chunk_edges(device: torch.device | str) -> int:
    return DEFAULT_CHUNK_EDGES["cuda" if torch.device(device).type == "cuda" else "cpu"]


def default_max_raw_entries(device: torch.device | str) -> int:
    """Raw entries per CSR row range: on a GPU as many as its free memory sorts at once (fewer passes)."""
    device = torch.device(device)
    if device.type != "cuda":
        return DEFAULT_MAX_RAW_ENTRIES["cpu"]
    free, _ = torch.cuda.mem_get_info(device)
    return max(DEFAULT_MAX_RAW_ENTRIES["cuda"], min(free // SORT_BYTES_PER_ENTRY, MAX_RAW_ENTRIES_GPU))


def node_permutation(num_nodes: int, seed: int, device: torch.device | str) -> tuple[torch.Tensor, torch.Tensor]:
    """(old_of_new, new_of_old): a hash-keyed permutation of [0, num_nodes), the same on every device."""
    ids = torch.arange(num_nodes, dtype=torch.int64, device=device)
    old_of_new = torch.sort(combine(key_int(seed, PURPOSE_PERMUTATION), ids), stable=True).indices
    new_of_old = torch.empty_like(old_of_new)
    new_of_old[old_of_new] = ids
    return old_of_new, new_of_old


def draws_for_target(
    num_nodes: int, target_edges: int, seed: int, device: torch.device | str, chunk_edges: int | None = None,
    *, communities: int = 1, intra_prob: float = 0.0,
) -> int:
    """How many R-MAT edges to draw so the symmetrised, deduplicated graph has ~``target_edges`` edges.

    R-MAT repeats pairs, the more so the denser the graph, so the number of draws is measured, not
    guessed: draw edges, note the first draw index of each distinct undirected non-loop pair, and take
    the index at which the count of distinct pairs reaches target/2. Large graphs track only the pairs
    whose hash falls in a 2^-k sample (a function of the pair, so the count scales by exactly 2^k in
    expectation), which keeps memory bounded; small graphs track every pair and hit the target exactly.
    """
    target_pairs = target_edges // 2
    if target_pairs < 1 or target_pairs > num_nodes * (num_nodes - 1) // 2:
        raise ZeroGNNError(
            f"{target_edges} edges do not fit a simple undirected graph on {num_nodes} nodes; "
            f"ask for between 2 and {num_nodes * (num_nodes - 1)} edges."
        )
    chunk_edges = chunk_edges or default_chunk_edges(device)
    sample_bits = max(0, math.ceil(math.log2(target_pairs / CALIBRATION_SAMPLE)))
    need = max(1, round(target_pairs / 2**sample_bits))
    stop, drawn = max(1024, math.ceil(target_pairs * 1.25)), 0
    max_draws = 64 * target_pairs + 1024
    pair_keys: list[torch.Tensor] = []
    pair_idx: list[torch.Tensor] = []
    while True:
        progress = Progress(f"R-MAT calibration, draws {drawn}..{stop - 1}", stop - drawn, "edges")
        first = drawn
        for start in range(drawn, stop, chunk_edges):
            end = min(start + chunk_edges, stop)
            src, dst = rmat_edges(num_nodes, seed, start, end, device, communities=communities, intra_prob=intra_prob)
            key = torch.minimum(src, dst) * num_nodes + torch.maximum(src, dst)
            keep = src != dst
            if sample_bits:
                keep &= (mix64(key) >> (64 - sample_bits)) & ((1 << sample_bits) - 1) == 0
            pair_keys.append(key[keep])
            pair_idx.append(torch.arange(start, end, dtype=torch.int64, device=device)[keep])
            progress.step(end - first)
        drawn = stop
        pairs, inverse = torch.unique(torch.cat(pair_keys), return_inverse=True)
        if pairs.numel() >= need:
            first = torch.full((pairs.numel(),), drawn, dtype=torch.int64, device=device)
            first.scatter_reduce_(0, inverse, torch.cat(pair_idx), reduce="amin")
            return int(torch.sort(first).values[need - 1]) + 1
        if drawn >= max_draws:
            raise ZeroGNNError(
                f"R-MAT reaches only ~{pairs.numel() * 2**sample_bits * 2} distinct edges on {num_nodes} "
                f"nodes after {drawn} draws, short of {target_edges}; ask for fewer edges or more nodes."
            )
        stop = min(2 * stop, max_draws)


def build_csr(
    num_nodes: int, edge_chunks: EdgeChunks, device: torch.device | str, *,
    num_edges: int | None = None, col_path: Path | None = None, max_raw_entries: int | None = None,
) -> CSRGraph:
    """Symmetrised, deduplicated, loop-free CSR (rows sorted) of the edges ``edge_chunks()`` yields.

    ``edge_chunks`` is called once per pass and must yield the same edges every time. Pass 1 counts
    the raw degree of every node in both directions. The rows are then cut into contiguous ranges of
    at most ``max_raw_entries`` raw entries (a single range unless the graph is large); for each range a
    pass over the chunks gathers that range's entries as ``row * N + col`` keys into one buffer, sorts
    and deduplicates it, and appends the compacted rows to ``col``. Memory on ``device`` is bounded by the
    range buffer plus O(N); ``col`` goes to an .npy file at ``col_path`` (allocated up front, written
    sequentially) when given, otherwise to host memory. The result is the same for every range split
    and chunk size. ``num_edges`` (what the chunks hold in all) makes the progress lines say how far a pass
    is. The returned graph's tensors are on the CPU.
    """
    device = torch.device(device)
    max_raw_entries = max_raw_entries or default_max_raw_entries(device)
    n = num_nodes
    col_dtype = col_dtype_for(n)

    raw_deg = torch.zeros(n, dtype=torch.int64, device=device)
    progress = Progress("CSR degree count", num_edges, "edges")
    done = 0
    for src, dst in edge_chunks():
        src, dst = src.to(device), dst.to(device)
        if src.numel() and (min(int(src.min()), int(dst.min())) < 0 or max(int(src.max()), int(dst.max())) >= n):
            raise ZeroGNNError(f"edge list holds node ids outside [0, {n}); the input graph is corrupt.")
        keep = src != dst
        raw_deg += torch.bincount(src[keep], minlength=n) + torch.bincount(dst[keep], minlength=n)
        done += src.numel()
        progress.step(done)
    raw_end = torch.cumsum(raw_deg, 0).cpu()
    del raw_deg
    total_raw = int(raw_end[-1])
    ranges = _row_ranges(raw_end, max_raw_entries)

    if col_path is not None:
        col_out = create_npy(col_path, NUMPY_DTYPE[col_dtype], (max(total_raw, 1),))
    else:
        col_out = torch.empty(total_raw, dtype=col_dtype).numpy()
    deg = torch.zeros(n, dtype=torch.int64)
    written = 0
    for k, (r0, r1) in enumerate(ranges, 1):
        base = int(raw_end[r0 - 1]) if r0 else 0
        buf = torch.empty(int(raw_end[r1 - 1]) - base, dtype=torch.int64, device=device)
        fill = done = 0
        progress = Progress(f"CSR rows {r0}..{r1 - 1} (range {k}/{len(ranges)})", num_edges, "edges")
        for src, dst in edge_chunks():
            src, dst = src.to(device), dst.to(device)
            keep = src != dst
            rows = torch.cat([src[keep], dst[keep]])
            cols = torch.cat([dst[keep], src[keep]])
            if len(ranges) > 1:
                inside = (rows >= r0) & (rows < r1)
                rows, cols = rows[inside], cols[inside]
            if fill + rows.numel() > buf.numel():
                raise RuntimeError("edge_chunks yielded different edges on two passes")
            buf[fill:fill + rows.numel()] = (rows - r0) * n + cols
            fill += rows.numel()
            done += src.numel()
            progress.step(done)
        if fill != buf.numel():
            raise RuntimeError("edge_chunks yielded different edges on two passes")
        keys = torch.unique(buf)
        del buf
        deg[r0:r1] = torch.bincount(keys // n, minlength=r1 - r0).cpu()
        # To the host in slices: host memory stays bounded by a slice, not by the range.
        for s in range(0, keys.numel(), HOST_SLICE_ENTRIES):
            segment = (keys[s:s + HOST_SLICE_ENTRIES] % n).to(col_dtype).cpu().numpy()
            col_out[written:written + segment.size] = segment
            written += segment.size
        del keys

    rowptr = torch.zeros(n + 1, dtype=torch.int64)
    torch.cumsum(deg, 0, out=rowptr[1:])
    if col_path is None:
        return CSRGraph(rowptr, torch.from_numpy(col_out[:written].copy()))
    col_out.flush()
    del col_out
    shrink_npy(col_path, written)
    return CSRGraph(rowptr, torch.from_numpy(np.load(col_path, mmap_mode="c")))


def _row_ranges(raw_end: torch.Tensor, max_raw_entries: int) -> list[tuple[int, int]]:
    """Cut rows into contiguous ranges holding at most ``max_raw_entries`` entries (or one row)."""
    n = raw_end.numel()
    ranges, r0, base = [], 0, 0
    while r0 < n:
        r1 = int(torch.searchsorted(raw_end, torch.tensor(base + max_raw_entries), right=True))
        r1 = max(r1, r0 + 1)
        ranges.append((r0, r1))
        base, r0 = int(raw_end[r1 - 1]), r1
    return ranges


def shrink_npy(path: Path, length: int) -> None:
    """Cut a 1-D .npy file to its first ``length`` entries in place (header rewritten, file truncated).

    numpy pads .npy headers so that the first axis can change length without moving the data.
    """
    fmt = np.lib.format
    with open(path, "r+b") as f:
        version = fmt.read_magic(f)
        read, write = {
            (1, 0): (fmt.read_array_header_1_0, fmt.write_array_header_1_0),
            (2, 0): (fmt.read_array_header_2_0, fmt.write_array_header_2_0),
        }[version]
        shape, fortran, dtype = read(f)
        data_start = f.tell()
        if len(shape) != 1 or length > shape[0]:
            raise ValueError(f"{path}: cannot shrink shape {shape} to {length}")
        header = io.BytesIO()
        write(header, {"descr": fmt.dtype_to_descr(dtype), "fortran_order": fortran, "shape": (length,)})
        if header.tell() != data_start:
            raise ValueError(f"{path}: the .npy header would change length; cannot shrink in place")
        f.seek(0)
        f.write(header.getvalue())
        f.truncate(data_start + length * dtype.itemsize)
