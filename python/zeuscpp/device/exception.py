"""Base device exceptions (upstream ``zeus.device.exception``)."""

from zeuscpp.exception import ZeusBaseCPUError, ZeusBaseGPUError

__all__ = ["ZeusBaseGPUError", "ZeusBaseCPUError", "ZeusdError"]


class ZeusdError(ZeusBaseGPUError):
    """A zeusd refused or failed a request (upstream's name; zeuscpp.utils.zeusd raises it)."""
