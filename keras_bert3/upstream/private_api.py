"""The import-time guard of the fenced modules: the private attribute is
still there, or a clear error names the version and what to do."""


def require_private(owner, name: str, *, package, why: str) -> None:
    """Raises `ImportError` when `owner` lacks `name` (at import, or when a
    fenced class is first built, for attributes set in `__init__`).

    Args:
        owner: the upstream class, module or (for attributes set in
            `__init__`) a fresh instance that should have `name`.
        name: the private attribute keras_bert3 relies on.
        package: the upstream package (its `__version__` goes in the message).
        why: what keras_bert3 uses it for, with the upstream issue link.
    """
    if hasattr(owner, name):
        return
    kind = owner if isinstance(owner, type) else type(owner)
    raise ImportError(
        f"keras_bert3 relies on {kind.__module__}.{kind.__qualname__}.{name}, a private API that "
        f"{package.__name__} {getattr(package, '__version__', '?')} does not have ({why}). Install the "
        f"earlier {package.__name__} release that keras_bert3 was tested with, or report this to keras_bert3."
    )
