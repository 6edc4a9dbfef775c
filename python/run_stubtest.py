"""Checks the built zeuscpp package's type stubs against the package with mypy's stubtest.

    python3 python/run_stubtest.py BUILD/python [stubtest options, e.g. --concise]

Every .pyi (and every .py, which mypy reads as its own stub) is compared with
what importing the package gives: names, signatures, defaults, properties,
``__all__``. Settings: pyproject.toml's [tool.mypy]; entries that cannot match
(pybind11's metaclass and constructors): python/stubtest_allowlist.txt.
ctest runs it as python_stubtest. Exits 77 (ctest: skipped) without mypy
(Debian's python3-mypy, which scripts/setup.sh installs).
"""

from __future__ import annotations

import os
import pathlib
import sys
import tempfile

SOURCE = pathlib.Path(__file__).resolve().parent

try:
    from mypy import stubtest
except ImportError:
    print("python_stubtest: skipped, mypy is not installed (Debian: python3-mypy)")
    sys.exit(77)


def main(argv: list[str]) -> int:
    if not argv or not (pathlib.Path(argv[0]) / "zeuscpp" / "__init__.py").is_file():
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    root = str(pathlib.Path(argv[0]).resolve())
    # The built package, not python/zeuscpp beside this script (no _core there),
    # for both the import and mypy's module search.
    sys.path.insert(0, root)
    os.environ["MYPYPATH"] = root
    sys.argv = [
        "stubtest",
        "--mypy-config-file", str(SOURCE.parent / "pyproject.toml"),
        "--allowlist", str(SOURCE / "stubtest_allowlist.txt"),
        *argv[1:],
        "zeuscpp",
    ]
    # mypy writes a cache into the working folder even though stubtest never
    # reads it back: a scratch folder keeps it out of the build tree.
    with tempfile.TemporaryDirectory(prefix="zeuscpp-stubtest-") as scratch:
        os.chdir(scratch)
        return stubtest.main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
