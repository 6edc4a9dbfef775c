"""``python -m zeuscpp.monitor energy|power`` (upstream ``python -m zeus.monitor``).

``energy`` opens one window over the GPUs and, on Ctrl+C, prints its
Measurement. ``power`` prints the time and the GPUs' power every update
period and, on Ctrl+C, the total time and the energy integrated over the same
power domain. Output goes through ``rich`` when it is installed (as upstream),
plain ``print`` otherwise.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from datetime import datetime
from typing import Any, Literal, NoReturn, Sequence

from zeuscpp.monitor.energy import ZeusMonitor
from zeuscpp.monitor.power import PowerMonitor

__all__ = ["energy", "power", "main"]

_WINDOW = "zeus.monitor.energy"
_DOMAINS = ["device_instant", "device_average", "memory_average"]


def _rich() -> Any | None:
    try:
        import rich
    except ImportError:
        return None
    return rich


_RICH = _rich()  # imported up front: not first after Ctrl+C


def _print(*values: Any) -> None:
    if _RICH is None:
        print(*values, flush=True)
    else:
        _RICH.print(*values)
        sys.stdout.flush()


def _by_name(values: dict[int, float]) -> dict[str, float]:
    return {f"GPU{index}": value for index, value in values.items()}


def energy(gpu_indices: list[int] | None = None) -> None:
    """Measure the GPUs' time and energy from now until Ctrl+C, then print the Measurement.

    Args:
        gpu_indices: GPUs to measure (CUDA indices). None: all.
    """
    monitor = ZeusMonitor(gpu_indices, sync_execution_with=None)
    monitor.begin_window(_WINDOW)
    print("Measuring energy; press Ctrl+C to stop.", file=sys.stderr, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        _print(monitor.end_window(_WINDOW))


def power(
    gpu_indices: list[int] | None = None,
    update_period: float = 1.0,
    power_domain: Literal["device_instant", "device_average", "memory_average"] = "device_instant",
) -> None:
    """Print the GPUs' power every update_period until Ctrl+C, then the total time and energy.

    The energy is integrated over the power domain that is displayed.

    Args:
        gpu_indices: GPUs to monitor (CUDA indices). None: all.
        update_period: Seconds between samples and printed lines.
        power_domain: ``device_instant``, ``device_average`` or ``memory_average``.
    """
    monitor = PowerMonitor(gpu_indices=gpu_indices, update_period=update_period, power_domains=[power_domain])
    start = time.time()
    period = monitor.update_period
    try:
        while True:
            time.sleep(period)
            watts = monitor.get_power(power_domain=power_domain)
            if watts is not None:
                _print(datetime.now(), _by_name(watts))
    except KeyboardInterrupt:
        end = time.time()
        _print("\nTotal time (s):", end - start)
        joules = monitor.get_energy(start, end, power_domain=power_domain)
        if joules is not None:
            _print("Total energy (J):", _by_name(joules))
    finally:
        monitor.stop()


_MAX_PERIOD = 86400.0  # a day: beyond it time.sleep overflows long before anyone waits
_MAX_INDEX = 2**31 - 1  # what the device layer's int holds


def _period(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0 or value > _MAX_PERIOD:
        raise argparse.ArgumentTypeError(
            f"must be a positive number of seconds, at most {_MAX_PERIOD:g}, got {text!r}"
        )
    return value


def _index(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a GPU index, got {text!r}") from None
    if not 0 <= value <= _MAX_INDEX:
        raise argparse.ArgumentTypeError(f"must be a GPU index (0 or more), got {text[:40]!r}")
    return value


class _Parser(argparse.ArgumentParser):
    """Reports a bad argument in one line and exits 2 (its subcommands too)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (2 for bad arguments or devices)."""
    parser = _Parser(prog="python -m zeuscpp.monitor", description="Zeus monitor CLI (zeuscpp)")
    commands = parser.add_subparsers(dest="subcommand", required=True, metavar="{energy,power}")
    energy_parser = commands.add_parser("energy", help="Measure the GPUs' time and energy until Ctrl+C.")
    power_parser = commands.add_parser(
        "power", help="Print the GPUs' power every period; on Ctrl+C, the total time and energy."
    )
    for sub in (energy_parser, power_parser):
        sub.add_argument("--gpu-indices", nargs="+", type=_index, metavar="I",
                         help="GPUs to monitor (CUDA indices). Default: all.")
    power_parser.add_argument("--update-period", type=_period, default=1.0,
                              help="Seconds between samples (default 1.0).")
    power_parser.add_argument("--power-domain", choices=_DOMAINS, default="device_instant",
                              help="Power domain to show and integrate (default device_instant; "
                                   "use device_average on GPUs without instant power).")
    args = parser.parse_args(argv)
    try:
        if args.subcommand == "energy":
            energy(args.gpu_indices)
        else:
            power(args.gpu_indices, args.update_period, args.power_domain)
    except (ValueError, OverflowError) as e:  # a GPU that does not exist, an unsupported domain...
        print(f"python -m zeuscpp.monitor {args.subcommand}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
