"""zeuscpp: the Zeus API for measuring and optimizing deep-learning energy, on a C++ core.

A script written for the Python Zeus runs unchanged after replacing ``zeus`` with
``zeuscpp`` in its imports::

    from zeuscpp.monitor import ZeusMonitor
    from zeuscpp.optimizer.power_limit import GlobalPowerLimitOptimizer

Submodules: ``zeuscpp.monitor`` (energy windows, power timelines),
``zeuscpp.optimizer.power_limit`` (the just-in-time power-limit optimizer),
``zeuscpp.callback``, ``zeuscpp.device`` and ``zeuscpp.exception``. Importing
this package loads only the extension module; submodules load on first use.
See docs/python.md for what differs from the Python Zeus and why.
"""

from zeuscpp._core import __version__

__all__ = ["__version__"]
