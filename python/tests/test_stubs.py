"""The hand-written type stubs (.pyi) are checked against the modules they describe.

Each stub's classes, functions and methods must exist at run time with the
same parameters (names, order, which have defaults): a constructor changed in
C++ or in the Python wrapper without its stub fails here, naming the stub, the
object and both signatures. Stubs therefore cannot drift from the module.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pathlib

import pytest

import zeuscpp

PACKAGE = pathlib.Path(zeuscpp.__file__).parent
STUBS = sorted(p for p in PACKAGE.rglob("*.pyi") if p.name != "_core.pyi")


def module_name(stub: pathlib.Path) -> str:
    parts = stub.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":  # a package's stub
        parts = parts[:-1]
    return ".".join(parts)


def split_top_level(text: str) -> list[str]:
    """Splits a parameter list at commas outside brackets and quotes."""
    parts, depth, quote, current = [], 0, None, []
    for ch in text:
        if quote:
            current.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def runtime_parameters(obj) -> list[tuple[str, bool]] | None:
    """(name, has_default) of each named parameter, or None when unknown (overloads)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        sig = None
    if sig is not None:
        return [
            (p.name, p.default is not inspect.Parameter.empty)
            for p in sig.parameters.values()
            if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        ]
    # A pybind11 function: its docstring starts with "name(a: T, b: U = x) -> R".
    doc = (getattr(obj, "__doc__", None) or "").lstrip().splitlines()
    if not doc or "Overloaded function" in (obj.__doc__ or ""):
        return None
    first = doc[0]
    start = first.find("(")
    if start < 0:
        return None
    depth, end = 0, None
    for i in range(start, len(first)):
        if first[i] == "(":
            depth += 1
        elif first[i] == ")":
            depth -= 1
            if depth == 0:
                end = i
                break
    if end is None:
        return None
    params = []
    for part in split_top_level(first[start + 1 : end]):
        if part.startswith("*"):
            continue
        name = part.split(":")[0].split("=")[0].strip()
        params.append((name, "=" in part.split(":", 1)[-1] or "=" in part.split(":")[0]))
    return params


def stub_parameters(fn: ast.FunctionDef) -> list[tuple[str, bool]]:
    positional = fn.args.posonlyargs + fn.args.args
    with_default = len(fn.args.defaults)
    out = [(a.arg, i >= len(positional) - with_default) for i, a in enumerate(positional)]
    out += [(a.arg, d is not None) for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults)]
    return out


def is_property(fn: ast.FunctionDef) -> bool:
    return any(
        (isinstance(d, ast.Name) and d.id == "property")
        or (isinstance(d, ast.Attribute) and d.attr in ("setter", "getter"))
        for d in fn.decorator_list
    )


def is_static(fn: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)


def check_function(where: str, runtime, fn: ast.FunctionDef, method: bool, problems: list[str]) -> None:
    want = stub_parameters(fn)
    got = runtime_parameters(runtime)
    if got is None:
        return
    if method and not is_static(fn) and want and want[0][0] in ("self", "cls"):
        want = want[1:]
        if got and got[0][0] in ("self", "cls"):
            got = got[1:]
    if fn.name.startswith("__") and fn.name.endswith("__") and fn.name != "__init__":
        # Operators are called positionally: only the count of parameters matters.
        want, got = [d for _, d in want], [d for _, d in got]
    if want != got:
        problems.append(f"{where}: stub {want} but the module has {got}")


def check_stub(stub: pathlib.Path) -> list[str]:
    module = importlib.import_module(module_name(stub))
    tree = ast.parse(stub.read_text())
    problems: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            where = f"{stub.name}: {node.name}"
            if not hasattr(module, node.name):
                problems.append(f"{where}: not in {module.__name__}")
                continue
            check_function(where, getattr(module, node.name), node, False, problems)
        elif isinstance(node, ast.ClassDef):
            where = f"{stub.name}: {node.name}"
            if not hasattr(module, node.name):
                problems.append(f"{where}: not in {module.__name__}")
                continue
            cls = getattr(module, node.name)
            for item in node.body:
                if not isinstance(item, ast.FunctionDef):
                    continue
                member = f"{where}.{item.name}"
                if not hasattr(cls, item.name):
                    problems.append(f"{member}: not in the class")
                    continue
                if is_property(item):
                    continue
                check_function(member, getattr(cls, item.name), item, True, problems)
    return problems


def test_there_are_stubs_to_check():
    assert len(STUBS) >= 7, STUBS


@pytest.mark.parametrize("stub", STUBS, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_stub_matches_the_module(stub):
    problems = check_stub(stub)
    assert not problems, "\n".join(problems)


def test_the_check_catches_a_drifted_signature():
    """A stub that renames a parameter the module has is reported."""
    text = (PACKAGE / "monitor" / "energy.pyi").read_text()
    assert "def begin_window(self, key: str" in text
    tree = ast.parse(text.replace("def begin_window(self, key: str", "def begin_window(self, name: str"))
    stub_class = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ZeusMonitor")
    begin = next(n for n in stub_class.body if isinstance(n, ast.FunctionDef) and n.name == "begin_window")
    module = importlib.import_module("zeuscpp.monitor.energy")
    problems: list[str] = []
    check_function("begin_window", module.ZeusMonitor.begin_window, begin, True, problems)
    assert problems and "'name'" in problems[0] and "'key'" in problems[0], problems
