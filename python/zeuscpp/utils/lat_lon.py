"""This machine's location from its public IP address (upstream ``zeus.utils.lat_lon``).

Carbon-intensity providers take a latitude and longitude;
:func:`get_ip_lat_long` asks an IP-geolocation service for them, as upstream
does (``http://ipinfo.io/json``, whose ``loc`` field is ``"lat,lon"``). The
service can be another one answering the same JSON: the `url` argument, or
the ``ZEUS_IP_GEOLOCATION_URL`` environment variable. Offline, or when the
service answers anything else, the error says so and how to go on without it.
"""

from __future__ import annotations

import json
import logging
import os
import urllib.error
import urllib.request

from zeuscpp.exception import ZeusIOError, ZeusParseError

__all__ = ["get_ip_lat_long", "DEFAULT_URL"]

DEFAULT_URL = "http://ipinfo.io/json"
_log = logging.getLogger("zeuscpp")


def get_ip_lat_long(url: str | None = None, timeout: float = 5.0) -> tuple[float, float]:
    """The (latitude, longitude) of this machine's public IP address.

    Args:
        url: The geolocation service; None: ``ZEUS_IP_GEOLOCATION_URL``, else
            upstream's ``http://ipinfo.io/json``.
        timeout: Seconds to wait for the answer.

    Raises:
        ZeusIOError: the service could not be reached or refused (an ``OSError``).
        ZeusParseError: its answer has no ``loc`` of two numbers (a ``ValueError``).
    """
    url = url or os.environ.get("ZEUS_IP_GEOLOCATION_URL") or DEFAULT_URL
    hint = "pass the location yourself instead, e.g. ElectrictyMapsClient(location=(lat, lon))"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            body = response.read()
    except (urllib.error.URLError, OSError, ValueError) as e:
        status = getattr(e, "code", None)  # an HTTP error status
        reason: object = getattr(e, "reason", None)
        if status:
            reason = f"HTTP {status} {'' if reason is None else reason}".strip()
        elif reason is None:
            reason = e
        raise ZeusIOError(f"could not get this machine's location from {url}: {reason} (offline?); {hint}") from e
    try:
        lat_text, lon_text = json.loads(body)["loc"].split(",")
        lat, lon = float(lat_text), float(lon_text)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ZeusParseError(f"{url} answered without a 'loc' of 'lat,lon' ({body[:200]!r}); {hint}") from e
    if not (-90.0 <= lat <= 90.0 and -180.0 <= lon <= 180.0):
        raise ZeusParseError(f"{url} answered an impossible location {lat}, {lon}; {hint}")
    _log.info("location from %s: %s, %s", url, lat, lon)
    return lat, lon
