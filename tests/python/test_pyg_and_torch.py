"""Optional frameworks: torch (CPU wheel) when installed; bam.pyg imports without PyG."""

import importlib.util

import numpy as np
import pytest

import bam


def test_bam_pyg_imports_without_pyg_and_names_it_when_needed():
    import bam.pyg

    if importlib.util.find_spec("torch_geometric") is None:
        with pytest.raises(ImportError, match="torch_geometric"):
            bam.pyg.FeatureStore
    else:
        assert bam.pyg.FeatureStore is not None


def test_a_torch_index_gives_a_torch_result(data_file):
    torch = pytest.importorskip("torch")
    path, ref = data_file("float32", 1000)
    with bam.open(path, "f32", shape=(-1, 10), backend="emulated-ssd", writable=True) as a:
        got = a[torch.tensor([[3, 1]])]
        assert isinstance(got, torch.Tensor) and got.shape == (1, 2, 10)
        np.testing.assert_array_equal(got.numpy(), ref.reshape(-1, 10)[[[3, 1]]])
        a[torch.tensor([0])] = torch.zeros(1, 10)
        assert (a[torch.tensor([0])] == 0).all()
        with pytest.raises(ValueError, match="integers"):
            a[torch.tensor([1.0])]
