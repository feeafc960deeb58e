"""A PyTorch Geometric feature store whose node features stay in storage, read through bam.

    import bam, bam.pyg
    feats = bam.open("features.f32", "float32", shape=(num_nodes, 256), backend="file")
    store = bam.pyg.FeatureStore({(None, "x"): feats})
    loader = NeighborLoader((store, graph_store), num_neighbors=[10, 10], batch_size=1024,
                            input_nodes=...)

Written against PyG's documented FeatureStore API (torch_geometric.data.FeatureStore:
_put_tensor, _get_tensor, _remove_tensor, _get_tensor_size, get_all_tensor_attrs). PyG and
torch are imported only when FeatureStore is first used, so `import bam.pyg` works without
them; untested here (PyG is not installed on the build machine).
"""

_store_class = None


def __getattr__(name):
    if name == "FeatureStore":
        return _feature_store_class()
    raise AttributeError(f"module 'bam.pyg' has no attribute {name!r}")


def _feature_store_class():
    global _store_class
    if _store_class is not None:
        return _store_class
    try:
        import torch
        from torch_geometric.data import FeatureStore as _PygFeatureStore
        from torch_geometric.data import TensorAttr
    except ImportError as e:
        raise ImportError(
            "bam.pyg.FeatureStore needs PyTorch Geometric (pip install torch_geometric): "
            f"{e}") from e

    from ._array import Array

    class FeatureStore(_PygFeatureStore):
        """Maps (group_name, attr_name) to a 2-D bam.Array of rows (one per node or edge).

        get_tensor gathers the rows of attr.index (a tensor, slice, int, or unset: all rows)
        and returns a torch tensor (on the array's GPU for device="cuda": CPU node ids are
        moved there first). put_tensor of a bam.Array registers it; put_tensor of a
        tensor with an index writes its rows into a writable array. Thread safety as
        bam.Array (gathers of one array run one at a time).
        """

        def __init__(self, arrays=None):
            super().__init__()
            self._arrays = {}
            for (group, attr), array in (arrays or {}).items():
                self._arrays[(group, attr)] = array

        @staticmethod
        def _key(attr):
            return (attr.group_name, attr.attr_name)

        def _put_tensor(self, tensor, attr):
            if isinstance(tensor, Array):
                self._arrays[self._key(attr)] = tensor
                return True
            array = self._arrays.get(self._key(attr))
            if array is None or not array.writable or not attr.is_set("index"):
                return False
            array.scatter(self._rows(attr.index, array), tensor)
            return True

        def _get_tensor(self, attr):
            array = self._arrays.get(self._key(attr))
            if array is None:
                return None
            index = attr.index if attr.is_set("index") else None
            out = array.gather(self._rows(index, array))
            return out if isinstance(out, torch.Tensor) else torch.from_numpy(out)

        def _remove_tensor(self, attr):
            return self._arrays.pop(self._key(attr), None) is not None

        def _get_tensor_size(self, attr):
            array = self._arrays.get(self._key(attr))
            return None if array is None else tuple(array.shape)

        def get_all_tensor_attrs(self):
            return [TensorAttr(group_name=g, attr_name=a) for (g, a) in self._arrays]

        @staticmethod
        def _rows(index, array):
            if index is None:
                rows = torch.arange(array.shape[0])
            elif isinstance(index, slice):
                rows = torch.arange(array.shape[0])[index]
            elif isinstance(index, int):
                rows = torch.tensor([index])
            else:
                rows = index
            # A device="cuda" array gathers on its GPU: the sampler's CPU node ids go there
            # (on torch's current stream), so the features come back as a GPU tensor.
            if array.device != "cpu" and isinstance(rows, torch.Tensor) and not rows.is_cuda:
                rows = rows.to(array.device)
            return rows

    _store_class = FeatureStore
    return _store_class
