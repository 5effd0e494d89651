"""The error of a file or folder that could not be written."""

import contextlib
import sys


class WriteFailed(OSError):
    """A file or folder could not be written; the message names what, where, the cause and what was kept;
    `errno` is the cause's."""

    def __init__(self, what: str, path: str, cause: BaseException, kept: str = ""):
        reason = getattr(cause, "strerror", None) or str(cause) or type(cause).__name__
        super().__init__(f"Cannot write {what} {path}: {reason}." + (f" {kept}" if kept else ""))
        self.errno = getattr(cause, "errno", None)
        self.path = path
        # What another process needs to raise the same error (`WriteFailed.from_parts`).
        self.parts = {"what": what, "path": path, "errno": self.errno, "reason": reason, "kept": kept}

    @classmethod
    def from_parts(cls, parts: dict) -> "WriteFailed":
        """The `WriteFailed` whose `parts` another process sent."""
        return cls(parts["what"], parts["path"], OSError(parts["errno"], parts["reason"]), kept=parts["kept"])


@contextlib.contextmanager
def write_failures_named(path: str, what: str, *, kept: str = ""):
    """Turns an `OSError` in the block, or TensorFlow's `ResourceExhaustedError` (no space, a quota) or
    `PermissionDeniedError`, into `WriteFailed` naming `path` (Python's message for a full disk names no file,
    TensorFlow's only the file). Wrap writes only: TensorFlow also raises `ResourceExhaustedError` out of memory."""
    tf = sys.modules.get("tensorflow")  # Not imported here for writes that never load it.
    failures = (OSError,) + ((tf.errors.ResourceExhaustedError, tf.errors.PermissionDeniedError) if tf else ())
    try:
        yield
    except WriteFailed:
        raise
    except failures as error:
        raise WriteFailed(what, path, error, kept=kept) from error
