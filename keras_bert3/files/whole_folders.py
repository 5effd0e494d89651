"""Folders that appear whole or not at all: written under a temporary name
beside their place, flushed to disk, then renamed into it."""

import contextlib
import os
import shutil
import socket

from keras_bert3.files.local_processes import running_here
from keras_bert3.files.write_failed import WriteFailed

PARTIAL_SUFFIX = ".partial"


@contextlib.contextmanager
def written_whole(final: str, what: str, *, marker: str):
    """Yields a new, empty folder beside `final` to write into; when the block ends, it is flushed to disk and
    takes `final`'s place in one rename (a folder already there is moved aside, then removed), so that a reader
    (TF Serving, the next command) never sees it half-written. If the block raises, the new folder is removed and
    `final` left as it was; an `OSError` becomes `WriteFailed` naming `final` (`what`: e.g. "the preset"). Only an
    empty folder, or one holding `marker` ("saved_model.pb", "task.json"), is replaced: anything else at `final` is
    refused before the block runs (`check_replaceable`). The temporary folder is `partial_path(final)`."""
    final = os.path.normpath(final)
    check_replaceable(final, what, marker=marker)
    partial = partial_path(final)
    try:
        shutil.rmtree(partial, ignore_errors=True)
        os.makedirs(partial)
        yield partial
        _flush_tree(partial)
        _replace(partial, final)
    except BaseException as error:
        shutil.rmtree(partial, ignore_errors=True)
        # A `WriteFailed` inside names the temporary folder: name `final`, with its cause.
        if isinstance(error, OSError):
            cause = error.__cause__ if isinstance(error, WriteFailed) and error.__cause__ is not None else error
            raise WriteFailed(what, final, cause, kept=_kept(final)) from error
        raise


def check_replaceable(final: str, what: str, *, marker: str) -> None:
    """Refuses (`ValueError`) what `written_whole` would not replace: a file, or other files without `marker`."""
    if not os.path.lexists(final):
        return
    if os.path.isdir(final) and (not os.listdir(final) or os.path.isfile(os.path.join(final, marker))):
        return
    kind = "a file" if not os.path.isdir(final) else f"a folder of other files (no {marker})"
    raise ValueError(
        f"{final} is {kind}, which writing {what} there would replace: give a new folder, or remove it first."
    )


def partial_path(final: str) -> str:
    """Where this process writes `final` before renaming it into place: `<final>.<host>.<pid>.partial`;
    those of this host's processes no longer running (killed midway) are removed first."""
    _remove_stale_partials(final)
    return f"{final}.{_writer()}{PARTIAL_SUFFIX}"


def _writer() -> str:
    return f"{socket.gethostname()}.{os.getpid()}"


def _kept(final: str) -> str:
    return f"What was at {final} before is untouched." if os.path.exists(final) else "Nothing was left behind."


def _replace(partial: str, final: str) -> None:
    """Renames `partial` to `final`, moving a folder already there aside first."""
    aside = None
    if os.path.lexists(final):
        aside = f"{final}.{_writer()}.replaced"
        os.rename(final, aside)
    try:
        os.rename(partial, final)
    except OSError:
        if aside is not None:
            os.rename(aside, final)
        raise
    flush_to_disk(os.path.dirname(os.path.abspath(final)))
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True) if os.path.isdir(aside) else os.remove(aside)


def _remove_stale_partials(final: str) -> None:
    """Removes `<final>.<this host>.<pid>.partial` folders and files of processes gone."""
    parent, base = os.path.split(os.path.abspath(final))
    prefix = f"{base}.{socket.gethostname()}."
    for name in os.listdir(parent) if os.path.isdir(parent) else []:
        pid = name[len(prefix) : -len(PARTIAL_SUFFIX)]
        if name.startswith(prefix) and name.endswith(PARTIAL_SUFFIX) and pid.isdigit() and not running_here(int(pid)):
            stale = os.path.join(parent, name)
            with contextlib.suppress(FileNotFoundError):  # Another writer of `final` may sweep it first.
                shutil.rmtree(stale) if os.path.isdir(stale) else os.remove(stale)


def _flush_tree(folder: str) -> None:
    for root, _, files in os.walk(folder):
        for name in files:
            flush_to_disk(os.path.join(root, name))
        flush_to_disk(root)


def flush_to_disk(path: str) -> None:
    """fsync of a file or folder: its contents (a folder's entries) reach the disk."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
