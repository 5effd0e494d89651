"""A Keras weights file (`.weights.h5`) written into a file object that
keras_bert3 controls, instead of a path that HDF5 opens itself.

`model.save_weights(path)` lets HDF5 write the file. When a write fails (a
full disk, a quota), HDF5 cannot close the file, and the process crashes
when the file object is freed or at exit (a segmentation fault, exit 139),
leaving the half-written file behind. Writing through a Python file object
instead (HDF5's "fileobj" driver) lets `keras_bert3.files.weight_files`
catch the failed write while HDF5 carries on, then remove the file and raise
a clear error.

Private API: `keras.src.saving.saving_lib.H5IOStore` (which takes an
`io.BytesIO` in place of a path) and `saving_lib._save_state` (what
`save_weights_only` does between opening and closing the store). The file
holds what `model.save_weights` writes; `tests/upstream/` loads it back with
`model.load_weights`.
"""

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
