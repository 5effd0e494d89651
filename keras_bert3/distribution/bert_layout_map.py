"""How BERT's variables are sharded for `keras.distribution.ModelParallel`."""

import keras


def bert_layout_map(device_mesh: keras.distribution.DeviceMesh, *, model_dim: str = "model"):
    """A `LayoutMap` that shards the embeddings and the dense kernels of every
    BERT layer over the `model_dim` axis of `device_mesh` (Megatron style:
    column-parallel qkv and intermediate, row-parallel attention output and
    output); LayerNorms and the remaining biases are replicated.

    Args:
        device_mesh: a `keras.distribution.DeviceMesh`, e.g. shape (2, 4) with
            axis names ("batch", "model").
        model_dim: the mesh axis to shard the weights over.

    Example:
    >>> mesh = keras.distribution.DeviceMesh((2, 4), ("batch", "model"), keras.distribution.list_devices())
    >>> keras.distribution.set_distribution(keras.distribution.ModelParallel(
    ...     layout_map=bert_layout_map(mesh), batch_dim_name="batch"))
    """
    layout_map = keras.distribution.LayoutMap(device_mesh)
    # Embedding tables: shard the hidden dimension.
    layout_map[r".*(token|segment|position)_embedding/embeddings"] = (None, model_dim)
    # Column-parallel: split the outputs (and their biases).
    layout_map[r".*/(qkv|intermediate)/kernel"] = (None, model_dim)
    layout_map[r".*/(qkv|intermediate)/bias"] = (model_dim,)
    # Row-parallel: split the inputs.
    layout_map[r".*/(attention_output|output)/kernel"] = (model_dim, None)
    # The MLM head's transform, and the pooler.
    layout_map[r".*masked_lm_head/dense/kernel"] = (None, model_dim)
    layout_map[r".*pooler/kernel"] = (None, model_dim)
    return layout_map
