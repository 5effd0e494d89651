"""A Keras weights file (`.weights.h5`) written into a file object: where a write to a path of HDF5's own fails (a full
disk), the process crashes at exit; here `keras_bert3.files.weight_files` catches the failure and raises a clear error.

Private API (Keras): `keras.src.saving.saving_lib.H5IOStore` (on an `io.BytesIO`)
and `saving_lib._save_state` (what `save_weights_only` does inside the store)."""

import io

import keras
from keras.src.saving import saving_lib

from keras_bert3.upstream.private_api import require_private

require_private(saving_lib, "H5IOStore", package=keras, why="weights written through a file object")
require_private(saving_lib, "_save_state", package=keras, why="weights written through a file object")


def save_weights_to_file_object(model: keras.Model, file_object: io.BytesIO) -> None:
    """Writes `model.save_weights`' HDF5 file into `file_object` (an
    `io.BytesIO`, or a subclass that passes the bytes on)."""
    if not model.built:
        raise ValueError("The model is not built yet: call it on a batch, or build() it, before saving its weights.")
    store = saving_lib.H5IOStore(file_object, mode="w")
    try:
        saving_lib._save_state(model, weights_store=store, assets_store=None, inner_path="", visited_saveables=set())
    finally:
        store.close()
