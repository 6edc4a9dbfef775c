"""The Zeus time-energy cost and the old power log's energy (upstream ``zeus.utils.metric``).

``energy()`` and ``avg_power()`` read the power-log CSV of Zeus's early
``zeus_monitor`` tool: a ``Time`` column (a timestamp such as
``2022-11-07 00:33:46.362781``, or seconds) and a ``Power`` column in mW,
possibly followed by one footer line. Energy is the trapezoidal integral of
power over time, as upstream's.
"""

from __future__ import annotations

import csv
import datetime
import os

__all__ = ["zeus_cost", "energy", "avg_power"]


def zeus_cost(energy: float, time: float, eta_knob: float, max_power: int | float) -> float:
    r"""The cost $\eta \cdot E + (1 - \eta) \cdot MaxPower \cdot T$ of the Zeus paper.

    Trades energy against time: eta_knob 1 counts only energy, 0 only time (as
    energy spent at max_power). As upstream, eta_knob is not range-checked here.

    Args:
        energy: J.
        time: s.
        eta_knob: In [0, 1].
        max_power: W; the GPU's maximum power limit (times the GPU count for several GPUs).
    """
    return eta_knob * energy + (1 - eta_knob) * max_power * time


def energy(logfile: str | os.PathLike[str], start: float | None = None, end: float | None = None) -> float:
    """Joules in a power log between `start` and `end` (upstream's signature).

    Args:
        logfile: The power-log CSV (``Time``, ``Power`` in mW).
        start: Seconds after the log's first sample; None: from the first sample.
        end: Seconds after the log's first sample; None: to the last sample.

    Raises:
        ValueError: the file lacks the columns, holds a malformed sample, or
            fewer than two samples fall in the range.
    """
    seconds, watts = _samples(logfile, start, end)
    return _trapezoid(seconds, watts)


def avg_power(logfile: str | os.PathLike[str], start: float | None = None, end: float | None = None) -> float:
    """Average watts in a power log between `start` and `end`: ``energy()`` over the samples' time span."""
    seconds, watts = _samples(logfile, start, end)
    span = seconds[-1] - seconds[0]
    if span <= 0:
        raise ValueError(f"{os.fspath(logfile)}: the samples in range span no time")
    return _trapezoid(seconds, watts) / span


def _timestamp(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return datetime.datetime.fromisoformat(text.strip()).timestamp()


def _samples(
    logfile: str | os.PathLike[str], start: float | None, end: float | None
) -> tuple[list[float], list[float]]:
    path = os.fspath(logfile)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise ValueError(f"{path}: empty power log")
    header = [c.strip() for c in rows[0]]
    if "Time" not in header or "Power" not in header:
        raise ValueError(f"{path}: a power log needs the columns Time and Power (mW), got {header}")
    t_col, p_col = header.index("Time"), header.index("Power")
    samples: list[tuple[float, float]] = []
    body = [r for r in rows[1:] if any(c.strip() for c in r)]
    for n, row in enumerate(body):
        try:
            samples.append((_timestamp(row[t_col]), float(row[p_col]) / 1000.0))
        except (IndexError, ValueError) as e:
            if n == len(body) - 1:
                break  # the footer line upstream's reader skips
            raise ValueError(f"{path}: malformed sample {row}: {e}") from None
    if not samples:
        raise ValueError(f"{path}: no samples")
    if any(b[0] < a[0] for a, b in zip(samples, samples[1:])):
        raise ValueError(f"{path}: the Time column goes backwards")
    first = samples[0][0]
    lo = first + start if start is not None else first
    hi = first + end if end is not None else samples[-1][0]
    chosen = [(t - first, w) for t, w in samples if lo <= t <= hi]
    if len(chosen) < 2:
        raise ValueError(f"{path}: fewer than two samples between {start} s and {end} s")
    return [t for t, _ in chosen], [w for _, w in chosen]


def _trapezoid(x: list[float], y: list[float]) -> float:
    if any(b < a for a, b in zip(x, x[1:])):
        raise ValueError("the power log's Time column goes backwards")
    return sum((x[i + 1] - x[i]) * (y[i] + y[i + 1]) / 2.0 for i in range(len(x) - 1))
