"""The trace-driven simulator of the Zeus NSDI '23 paper (upstream ``zeus._legacy``).

The replay runs in C++ (``zeus/sim``); policies plug in through
``zeuscpp._legacy.policy.interface``, as in the Python Zeus. See
docs/extending.md.
"""
