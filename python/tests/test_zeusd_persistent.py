"""ZeusdClient(persistent=True): an operator's lasting change, as upstream's client.

The default client leases its changes (zeusd restores them when it goes away);
a persistent one takes no lease, so what it sets stays after it is gone.
"""

from __future__ import annotations

import time

from test_zeusd import zeusd  # noqa: F401  (the fixture: a real zeusd on simulated GPUs)


def test_a_persistent_client_leaves_its_settings(zeusd):  # noqa: F811
    from zeuscpp.utils.zeusd import ZeusdClient, ZeusdConfig

    client = ZeusdClient(ZeusdConfig.uds(zeusd), persistent=True)
    client.set_power_limit([0, 1], 200000)
    assert client.lease_id == ""  # no lease taken
    del client
    time.sleep(0.3)  # a leased change is restored within milliseconds of the disconnect
    check = ZeusdClient(ZeusdConfig.uds(zeusd))
    assert check.get_power_limit() == {0: 200000, 1: 200000}
