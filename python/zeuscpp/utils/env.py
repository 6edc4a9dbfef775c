"""Environment-variable helper (upstream ``zeus.utils.env``)."""

from __future__ import annotations

import os
from typing import Type, TypeVar, cast

__all__ = ["get_env"]

T = TypeVar("T")


def get_env(name: str, valtype: Type[T], default: T | None = None) -> T:
    """Environment variable ``name`` converted with ``valtype``.

    A ``bool`` must be spelled ``true`` or ``false`` (any case): anything else
    is a ``ValueError`` rather than a silent False.

    Raises:
        ValueError: the variable is unset and no default (other than None) was
            given, or its value does not convert.
    """
    if name not in os.environ:
        if default is not None:
            return default
        raise ValueError(f"environment variable {name} is not set")
    value = os.environ[name]
    if valtype is bool:
        lowered = value.lower()
        if lowered not in ("true", "false"):
            raise ValueError(f"environment variable {name} must be 'true' or 'false', got {value!r}")
        return cast(T, lowered == "true")
    return valtype(value)  # type: ignore[call-arg]
