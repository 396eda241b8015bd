import pytest
import torch

from zerognn.errors import ZeroGNNError
from zerognn.sampling import batch_seeds, epoch_permutation, steps_per_epoch


def test_permutation_is_a_keyed_shuffle():
    train = torch.arange(100, 200)
    p0 = epoch_permutation(train, seed=0, epoch=0)
    assert sorted(p0.tolist()) == train.tolist()
    assert torch.equal(p0, epoch_permutation(train, seed=0, epoch=0))
    assert not torch.equal(p0, epoch_permutation(train, seed=0, epoch=1))
    assert not torch.equal(p0, epoch_permutation(train, seed=1, epoch=0))


def test_batches_drop_the_last_partial_batch():
    assert steps_per_epoch(100, 30) == 3
    perm = torch.arange(100)
    assert batch_seeds(perm, 2, 30).tolist() == list(range(60, 90))
    with pytest.raises(ZeroGNNError):
        batch_seeds(perm, 3, 30)
    with pytest.raises(ZeroGNNError, match="exceeds the 100 train nodes"):
        steps_per_epoch(100, 101)


@pytest.mark.gpu
def test_permutation_is_the_same_on_gpu():
    train = torch.arange(5000)
    assert torch.equal(epoch_permutation(train, 3, 7), epoch_permutation(train.cuda(), 3, 7).cpu())
