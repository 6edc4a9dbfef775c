"""Learning-rate scaling rules for a changed batch size (upstream ``zeus.utils.lr_scaler``)."""

from __future__ import annotations

import dataclasses
import math

__all__ = ["SquareRootScaler", "LinearScaler"]


@dataclasses.dataclass
class SquareRootScaler:
    """lr grows with the square root of the batch size.

    Args:
        bs: The batch size ``lr`` was tuned for.
        lr: Its learning rate.
    """

    bs: int
    lr: float

    def compute_lr(self, new_bs: int) -> float:
        """The learning rate for batch size ``new_bs``: lr * sqrt(new_bs / bs)."""
        return self.lr * math.sqrt(new_bs / self.bs)


@dataclasses.dataclass
class LinearScaler:
    """lr grows in proportion to the batch size.

    Args:
        bs: The batch size ``lr`` was tuned for.
        lr: Its learning rate.
    """

    bs: int
    lr: float

    def compute_lr(self, new_bs: int) -> float:
        """The learning rate for batch size ``new_bs``: lr * new_bs / bs."""
        return self.lr * new_bs / self.bs
