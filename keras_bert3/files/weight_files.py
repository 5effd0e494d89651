"""HDF5 weights files written so that a failed write (a full disk, a quota, no permission) ends in one `WriteFailed`
naming the file, the half-written file removed, never in a crash; and read so that a truncated, damaged or
foreign file is named in the error. HDF5 cannot close a file whose write failed (h5py then crashes the process
when it is freed or at exit), so HDF5 writes through h5py's "fileobj" driver to a file object that keeps the
first failure instead of returning it: HDF5 finishes and closes, then the file is removed and the failure
raised. The bytes go straight to disk, nothing held in memory.
"""

import io
import os

import h5py
import numpy as np

from keras_bert3.files.write_failed import WriteFailed


class _FileKeepingItsFirstError(io.BytesIO):
    """A file on disk behind the `io.BytesIO` methods HDF5's fileobj driver calls (Keras' weights store
    accepts that type); a failed write, truncate or flush is kept in `error`, reported as done, later writes dropped."""

    def __init__(self, path: str):
        super().__init__()
        self.file = open(path, "w+b")  # noqa: SIM115 (closed by `close`)
        self.error = None

    def _keep(self, error: OSError) -> None:
        self.error = self.error or error

    def write(self, data) -> int:
        size = memoryview(data).nbytes
        if self.error is None:
            try:
                self.file.write(data)
            except OSError as error:
                self._keep(error)
        return size

    def seek(self, position: int, whence: int = 0) -> int:
        return self.file.seek(position, whence)

    def tell(self) -> int:
        return self.file.tell()

    def readinto(self, buffer) -> int:
        return self.file.readinto(buffer)

    def read(self, size: int = -1) -> bytes:
        return self.file.read(size)

    def truncate(self, size: int | None = None) -> int:
        try:
            return self.file.truncate(size)
        except OSError as error:
            self._keep(error)
            return self.file.tell() if size is None else size

    def flush(self) -> None:
        try:
            self.file.flush()
        except OSError as error:
            self._keep(error)

    def close(self) -> None:
        try:
            self.file.close()
        except OSError as error:
            self._keep(error)
        super().close()


def _write_through(path: str, what: str, write) -> None:
    """Runs `write(file_object)`; removes the file if `write` raised (raised again) or if any of its writes
    failed (raised as `WriteFailed`)."""
    try:
        target = _FileKeepingItsFirstError(path)
    except OSError as error:
        raise WriteFailed(what, path, error) from error
    try:
        write(target)
    except BaseException:
        target.close()
        _remove(path)
        raise
    target.close()
    if target.error is not None:
        _remove(path)
        raise WriteFailed(what, path, target.error) from target.error


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def write_arrays(path: str, arrays: dict, *, what: str = "the weights file") -> None:
    """Writes `{name: array}` into the HDF5 file `path` (a name's slashes make groups)."""

    def write(target):
        with h5py.File(target, "w") as f:
            for name, array in arrays.items():
                f.create_dataset(name, data=np.asarray(array))

    _write_through(path, what, write)


def read_arrays(path: str) -> dict:
    """Every array of the HDF5 file `path`, by name; a file that cannot be read is named in a `ValueError`."""
    arrays = {}
    try:
        with h5py.File(path, "r") as f:
            f.visititems(lambda name, item: arrays.update({name: item[()]}) if isinstance(item, h5py.Dataset) else None)
    except (OSError, KeyError, RuntimeError) as error:
        raise ValueError(_unreadable(path, error)) from error
    return arrays


def save_keras_weights(model, path: str, *, what: str = "the weights file") -> None:
    """`model.save_weights(path)`, written through `_FileKeepingItsFirstError`."""
    from keras_bert3.upstream.weights_to_file_object import save_weights_to_file_object

    _write_through(path, what, lambda target: save_weights_to_file_object(model, target))


def load_keras_weights(model, path: str) -> None:
    """`model.load_weights(path)`; a truncated, damaged or foreign file is named in a `ValueError` saying which."""
    try:
        model.load_weights(path)
    except (OSError, RuntimeError) as error:  # h5py: not HDF5, truncated, a damaged block.
        raise ValueError(_unreadable(path, error)) from error
    except (ValueError, KeyError) as error:  # Keras: the file holds another model's weights.
        raise ValueError(
            f"{path} holds weights that do not fit this model ({first_line(error)}). It was written for another "
            "model or config: keep a preset's files together, as save_to_preset wrote them."
        ) from error


def first_line(error: BaseException) -> str:
    """The first non-blank line of an error's message (its type's name where it has none)."""
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[0].strip() if lines else type(error).__name__


def _unreadable(path: str, error: BaseException) -> str:
    reason = first_line(error)
    return (
        f"{path} cannot be read as a weights file ({reason}): it is truncated or damaged, or not an HDF5 "
        "weights file. Copy it again from where it was written, or write it again."
    )
