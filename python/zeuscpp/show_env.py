"""``python -m zeuscpp.show_env`` (upstream ``python -m zeus.show_env``): what this installation sees.

Sections, each after a separator line as wide as the terminal, as upstream:
package versions (Python, zeuscpp, PyTorch with or without CUDA, JAX with or
without CUDA, CuPy), GPUs (``CUDA_VISIBLE_DEVICES``/``HIP_VISIBLE_DEVICES``
and the physical -> CUDA index mapping), CPUs (RAPL zones and DRAM), SoC
(a Jetson's rails, or none) and zeusd. The device facts come from
:func:`zeuscpp.device.environment_report` (``zeus show-env --json``).
"""

from __future__ import annotations

import importlib
import platform
import shutil
import sys
from typing import Any

__all__ = ["show_env", "framework_versions"]


def _framework(name: str) -> Any | None:
    try:
        return importlib.import_module(name)
    except Exception:  # not installed, or broken: either way not usable
        return None


def framework_versions() -> dict[str, str]:
    """The deep-learning frameworks' lines: {"PyTorch": "2.1.0 (without CUDA support)", ...}."""
    lines = {}
    torch = _framework("torch")
    if torch is None:
        lines["PyTorch"] = "not available"
    else:
        cuda = bool(getattr(torch, "cuda", None) and torch.cuda.is_available())
        lines["PyTorch"] = f"{torch.__version__} ({'with' if cuda else 'without'} CUDA support)"
    jax = _framework("jax")
    if jax is None:
        lines["JAX"] = "not available"
    else:
        try:
            cuda = any(d.platform == "gpu" for d in jax.devices())
        except Exception:
            cuda = False
        lines["JAX"] = f"{jax.__version__} ({'with' if cuda else 'without'} CUDA support)"
    cupy = _framework("cupy")
    lines["CuPy"] = "not available" if cupy is None else str(cupy.__version__)
    return lines


def _set_or_not(value: str | None) -> str:
    return "[NOT SET]" if value is None else value


def show_env() -> None:
    """Print the report (see the module docstring)."""
    from zeuscpp import __version__
    from zeuscpp.device import environment_report

    separator = "-" * shutil.get_terminal_size().columns
    report = environment_report()

    print(separator)
    print("## Package availability and versions\n")
    print("Detected:")
    print(f"  Python version: {platform.python_version()}")
    print(f"  Zeus (zeuscpp): {__version__}")
    for name, line in framework_versions().items():
        print(f"  {name}: {line}")
    print()

    print(separator)
    print("## Device availability\n")
    print("Detected:")
    gpus = report["gpus"]
    if gpus:
        env = report["environment"]
        print(f"  GPU backend: {report['gpu_backend']}")
        print(f"  CUDA_VISIBLE_DEVICES={_set_or_not(env.get('CUDA_VISIBLE_DEVICES'))}")
        print(f"  HIP_VISIBLE_DEVICES={_set_or_not(env.get('HIP_VISIBLE_DEVICES'))}")
        print("  Device index mapping: Physical (e.g., nvidia-smi) -> Zeus (or any CUDA application)")
        for gpu in gpus:
            print(f"    GPU {gpu['physical_index']} -> GPU {gpu['index']} ({gpu['name']})")
    else:
        print("  No GPUs available.")
    print()

    print(separator)
    print("## CPU availability\n")
    print("Detected:")
    cpus = report["cpus"]
    zones = {z["name"]: z for z in report["rapl_zones"]}
    if cpus:
        for cpu in cpus:
            zone = zones.get(cpu["name"])
            where = f" ({zone['path']})" if zone else ""
            print(f"  CPU {cpu['index']}:\n    CPU measurements available{where}")
            print(f"    DRAM measurements {'available' if cpu['dram'] else 'unavailable'}")
    else:
        print("  No CPUs available.")
    print()

    print(separator)
    print("## SoC availability\n")
    print("Detected:")
    jetson = report.get("jetson")
    if jetson and jetson.get("rails"):
        fields = {"cpu": "cpu_energy_mj", "gpu": "gpu_energy_mj", "total": "total_energy_mj"}
        print(f"  NVIDIA Jetson ({jetson['driver']} power monitor)")
        print("    Available metrics: " + ", ".join(fields[r["rail"]] for r in jetson["rails"] if r["rail"] in fields))
        for rail in jetson["rails"]:
            print(f"    {rail['rail']} rail: {rail['label']}")
    else:
        print("  No SoC available (no Jetson power rails found; Apple Silicon needs macOS).")
    print()

    zeusd = report.get("zeusd")
    if zeusd:
        print(separator)
        print("## Zeusd\n")
        print("Detected:")
        print(f"  Endpoint: {zeusd['endpoint']}")
        print(f"  GPUs: {zeusd['gpus']}, CPUs: {zeusd['cpus']}")
        print(f"  API groups: {', '.join(zeusd['enabled_api_groups'])}")
        print(f"  Auth required: {zeusd['auth_required']}")
        token = zeusd.get("token")
        if token:
            print(f"  User: {token['user']}, scopes: {', '.join(token['scopes'])}, expires: {token['expires']}")
        if zeusd.get("auth_error"):
            print(f"  Auth error: {zeusd['auth_error']}")
        print()

    for title, lines in (("Notes", report.get("notes")), ("Details (what was tried)", report.get("details"))):
        if lines:
            print(separator)
            print(f"## {title}\n")
            for line in lines:
                print(f"  {line}")
            print()
    print(separator)


if __name__ == "__main__":
    show_env()
    sys.exit(0)
