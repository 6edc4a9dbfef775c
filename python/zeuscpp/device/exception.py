"""Base device exceptions (upstream ``zeus.device.exception``)."""

from zeuscpp.exception import ZeusBaseCPUError, ZeusBaseGPUError

__all__ = ["ZeusBaseGPUError", "ZeusBaseCPUError"]
