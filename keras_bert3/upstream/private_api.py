"""The import-time guard of the fenced modules."""


def require_private(owner, name: str, *, package, why: str) -> None:
    """Raises `ImportError`, naming `package`'s version and `why` keras_bert3 uses it, when `owner` (a class or module,
    or a fresh instance for attributes set in `__init__`) lacks `name`."""
    if hasattr(owner, name):
        return
    kind = owner if isinstance(owner, type) else type(owner)
    raise ImportError(
        f"keras_bert3 relies on {kind.__module__}.{kind.__qualname__}.{name}, a private API that "
        f"{package.__name__} {getattr(package, '__version__', '?')} does not have ({why}). Install the "
        f"earlier {package.__name__} release that keras_bert3 was tested with, or report this to keras_bert3."
    )
