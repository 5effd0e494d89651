"""How BERT's variables are sharded for `keras.distribution.ModelParallel`."""

import keras


def bert_layout_map(device_mesh: keras.distribution.DeviceMesh, *, model_dim: str = "model"):
    """A `LayoutMap` that shards BERT's embeddings and dense kernels over the `model_dim` axis of `device_mesh` (a
    `keras.distribution.DeviceMesh`), Megatron style: column-parallel qkv and intermediate, row-parallel attention
    output and output; LayerNorms and the other biases are replicated.

    Example:
    >>> mesh = keras.distribution.DeviceMesh((2, 4), ("batch", "model"), keras.distribution.list_devices())
    >>> keras.distribution.set_distribution(keras.distribution.ModelParallel(
    ...     layout_map=bert_layout_map(mesh), batch_dim_name="batch"))
    """
    layout_map = keras.distribution.LayoutMap(device_mesh)
    layout_map[r".*(token|segment|position)_embedding/embeddings"] = (None, model_dim)
    # Column-parallel: split the outputs (and their biases).
    layout_map[r".*/(qkv|intermediate)/kernel"] = (None, model_dim)
    layout_map[r".*/(qkv|intermediate)/bias"] = (model_dim,)
    # Row-parallel: split the inputs.
    layout_map[r".*/(attention_output|output)/kernel"] = (model_dim, None)
    layout_map[r".*masked_lm_head/dense/kernel"] = (None, model_dim)
    layout_map[r".*pooler/kernel"] = (None, model_dim)
    return layout_map
