"""The Zeus time-energy cost (upstream ``zeus.utils.metric.zeus_cost``)."""

from __future__ import annotations

__all__ = ["zeus_cost"]


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
