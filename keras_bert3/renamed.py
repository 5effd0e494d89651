"""Public names renamed in a release keep working for the next one: a package's module `__getattr__` gives the new
object under the old name, with a `DeprecationWarning` that names the new one."""

import warnings


def old_names(package: str, renames: dict[str, tuple[str, object]]):
    """A module `__getattr__` for `package` that answers each old name of `renames`
    (old name: (new name, object)) and raises AttributeError for any other."""

    def __getattr__(name: str):
        if name not in renames:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        new_name, value = renames[name]
        warn_renamed(f"{package}.{name}", f"{package}.{new_name}", stacklevel=3)
        return value

    return __getattr__


def warn_renamed(old: str, new: str, *, stacklevel: int = 2) -> None:
    """The `DeprecationWarning` of a name that works for one more release."""
    warnings.warn(
        f"{old} is deprecated and will be removed in the next release: use {new}.",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )
