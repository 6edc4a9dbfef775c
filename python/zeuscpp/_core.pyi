# The extension module. Its submodules are typed loosely (Any): the public
# modules' stubs describe what users call. carbon, metric, zeusd, batch_size
# and legacy exist only in builds with those parts (the full configuration).
from typing import Any

__version__: str
device: Any
monitor: Any
optimizer: Any
carbon: Any
metric: Any
zeusd: Any
batch_size: Any
legacy: Any

def _at_interpreter_exit() -> None: ...
def _raise_library_error(code: str, message: str) -> None: ...

_error_code_names: list[str]
