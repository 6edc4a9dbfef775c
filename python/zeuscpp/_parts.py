"""The compiled parts of zeuscpp, and a clear ImportError for those a build left out.

pip builds the measurement-only configuration by default (docs/install.md):
its ``_core`` has no HTTP layer (batch-size and pipeline-frequency clients,
Pushgateway metrics) and no trace simulator. A module that needs such a part
asks for it here, so importing it says what is missing and how to get it,
instead of Python's bare "cannot import name".
"""

from __future__ import annotations

from typing import Any

from zeuscpp import _core

_REINSTALL = (
    "reinstall with ZEUSCPP_FULL=1 (after `sudo bash scripts/setup.sh`), e.g. "
    "ZEUSCPP_FULL=1 pip install --no-build-isolation --no-index <checkout>"
)


def _not_built(module: str, needs: str) -> ImportError:
    return ImportError(
        f"{module} is not in this build of zeuscpp: it needs {needs}, which the "
        f"measurement-only build (pip's default) leaves out; {_REINSTALL}",
        name=module,
    )


def core_part(module: str, name: str, needs: str) -> Any:
    """``_core.<name>``, or ImportError naming ``module`` and what it ``needs``."""
    part = getattr(_core, name, None)
    if part is None:
        raise _not_built(module, needs)
    return part


def core_attribute(module: str, part: Any, attribute: str, needs: str) -> Any:
    """``part.<attribute>``, or the same ImportError as :func:`core_part`."""
    value = getattr(part, attribute, None)
    if value is None:
        raise _not_built(module, needs)
    return value
