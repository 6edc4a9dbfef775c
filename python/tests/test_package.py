"""The package as users meet it: import cost, layout and names, stubs, docstrings, and a
script written for the Python Zeus that runs after swapping `zeus` for `zeuscpp`."""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import os
import re

import pytest

from conftest import run_python

PUBLIC_MODULES = [
    "zeuscpp",
    "zeuscpp.exception",
    "zeuscpp.callback",
    "zeuscpp.device",
    "zeuscpp.device.gpu",
    "zeuscpp.device.cpu",
    "zeuscpp.device.exception",
    "zeuscpp.monitor",
    "zeuscpp.monitor.energy",
    "zeuscpp.monitor.power",
    "zeuscpp.optimizer",
    "zeuscpp.optimizer.power_limit",
    "zeuscpp.utils.framework",
]
STUBBED = ["zeuscpp.monitor.energy", "zeuscpp.monitor.power", "zeuscpp.optimizer.power_limit",
           "zeuscpp.device.gpu", "zeuscpp.device.cpu"]


def test_import_loads_no_framework():
    result = run_python(
        """
        import sys, zeuscpp
        heavy = [m for m in ("torch", "numpy", "jax", "cupy") if m in sys.modules]
        print(zeuscpp.__version__, heavy)
        """
    )
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"\d+\.\d+\.\d+ \[\]", result.stdout.strip())


def public_members(cls) -> set[str]:
    names = set()
    for klass in cls.__mro__:
        if klass is object or klass.__module__ == "builtins" or klass.__name__ in ("pybind11_object", "ABC"):
            continue
        names |= {n for n in vars(klass) if not n.startswith("_")}
    return names


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_name_has_a_docstring(name):
    module = importlib.import_module(name)
    assert (module.__doc__ or "").strip(), f"{name} has no docstring"
    for attr in getattr(module, "__all__", []):
        obj = getattr(module, attr)
        if attr == "__version__" or not (inspect.isclass(obj) or inspect.isroutine(obj)):
            continue
        assert (obj.__doc__ or "").strip(), f"{name}.{attr} has no docstring"
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for member in public_members(obj):
                value = inspect.getattr_static(obj, member)
                if isinstance(value, (property, staticmethod, classmethod)) or callable(value):
                    doc = getattr(value, "__doc__", None) or getattr(getattr(obj, member), "__doc__", None)
                    assert (doc or "").strip(), f"{name}.{attr}.{member} has no docstring"


def stub_tree(module_name: str) -> ast.Module:
    module = importlib.import_module(module_name)
    path = os.path.splitext(module.__file__)[0] + ".pyi"
    assert os.path.exists(path), f"no stub for {module_name}"
    with open(path) as f:
        return ast.parse(f.read())


@pytest.mark.parametrize("name", STUBBED)
def test_stubs_cover_the_runtime_api(name):
    module = importlib.import_module(name)
    tree = stub_tree(name)
    top: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            top[node.name] = node
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                top[alias.asname or alias.name] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    top[t.id] = node
    for attr in module.__all__:
        assert attr in top, f"{name}.{attr} is missing from the stub"
        obj = getattr(module, attr)
        node = top[attr]
        if (inspect.isclass(obj) and isinstance(node, ast.ClassDef)
                and not issubclass(obj, (BaseException, enum.Enum))):
            stubbed = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            stubbed |= {n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
            stubbed |= {t.id for n in node.body if isinstance(n, ast.Assign) for t in n.targets}
            from zeuscpp.callback import Callback

            inherited = public_members(Callback) if issubclass(obj, Callback) else set()
            missing = public_members(obj) - stubbed - inherited - {"name"}
            assert not missing, f"{name}.{attr}: {sorted(missing)} missing from the stub"


UPSTREAM_STYLE_SCRIPT = '''
import time
from zeus.monitor import ZeusMonitor
from zeus.monitor.power import PowerMonitor, PowerDomain
from zeus.optimizer.power_limit import GlobalPowerLimitOptimizer, MaxSlowdownConstraint, OptimumSelector
from zeus.callback import Callback, CallbackSet
from zeus.device import get_gpus
from zeus.device.gpu import ZeusGPUNoPermissionError
from zeus.exception import ZeusBaseError


class Printer(Callback):
    def on_epoch_end(self):
        print("epoch done")


monitor = ZeusMonitor(gpu_indices=[0])
power = PowerMonitor(gpu_indices=[0], update_period=0.01, power_domains=[PowerDomain.DEVICE_INSTANT])
try:
    plo = GlobalPowerLimitOptimizer(monitor, MaxSlowdownConstraint(factor=1.2),
                                    wait_steps=1, warmup_steps=1, profile_steps=2, pl_step=100)
except ZeusGPUNoPermissionError:
    raise SystemExit("no permission")
callbacks = CallbackSet([plo, Printer()])
for epoch in range(2):
    monitor.begin_window("epoch")
    callbacks.on_epoch_begin()
    for step in range(8):
        callbacks.on_step_begin()
        time.sleep(0.002)
        callbacks.on_step_end()
    callbacks.on_epoch_end()
    measurement = monitor.end_window("epoch")
    print(f"epoch {epoch}: {measurement.time:.3f} s {measurement.total_energy:.2f} J",
          sorted(measurement.gpu_energy))
start = time.time()
time.sleep(0.05)
print("energy keys", sorted(power.get_energy(start, time.time())))
try:
    monitor.end_window("never began")
except ValueError as e:
    print("ValueError:", e)
print("limit", get_gpus().get_power_management_limit(0) // 1000, "W")
'''


def test_an_upstream_script_runs_with_only_its_imports_changed():
    script = re.sub(r"^(from|import) zeus\b", r"\1 zeuscpp", UPSTREAM_STYLE_SCRIPT, flags=re.M)
    assert script.count("zeuscpp") == 7 and "zeus." not in script.replace("zeuscpp.", "")
    result = run_python(script, env={"ZEUS_GPU_BACKEND": "sim"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines.count("epoch done") == 2
    assert "epoch 1:" in result.stdout and "[0]" in result.stdout
    assert "energy keys [0]" in lines
    assert "ValueError: no measurement window named 'never began' is running" in lines
    assert lines[-1].startswith("limit ")
