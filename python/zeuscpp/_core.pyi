# The extension module; the public modules' stubs describe what it provides.
from typing import Any

__version__: str
device: Any
monitor: Any
optimizer: Any
batch_size: Any
legacy: Any

def _at_interpreter_exit() -> None: ...
def _raise_library_error(code: str, message: str) -> None: ...

_error_code_names: list[str]
