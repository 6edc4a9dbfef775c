"""How GPU-setting restoration and Python's own signal handling share SIGINT and SIGTERM.

The C++ settings guard installs SIGINT/SIGTERM handlers that restore GPU
settings and then re-raise the signal. That is right for a signal Python does
not handle (SIGTERM by default: the process dies without running Python code).
It is wrong for a signal Python handles: Ctrl-C is a KeyboardInterrupt that a
script (or a notebook) may catch and carry on from, and a Python SIGTERM
handler may save a checkpoint first. So after the guard is installed, every
signal with a Python-level handler gets that handler back: the exception
unwinds, and the settings are restored when the optimizer is freed or, at the
latest, by the interpreter-exit hook (atexit), which every exit path through
Python passes (return, exception, sys.exit, an uncaught KeyboardInterrupt).
"""

from __future__ import annotations

import signal
import threading

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def hand_signals_back_to_python() -> None:
    """Re-installs the Python-level handler of SIGINT/SIGTERM where there is one.

    Does nothing outside the main thread (Python allows signal handlers only
    there); the guard's handlers then stay, and a signal restores the settings
    before Python's handler runs.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in _SIGNALS:
        handler = signal.getsignal(sig)
        if callable(handler):
            signal.signal(sig, handler)
