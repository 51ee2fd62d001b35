from enum import StrEnum


class PositionStatus(StrEnum):
    ACTIVE = "active"
    CLAIMED = "claimed"
    CLOSED = "closed"
    LOST = "lost"
    REFUNDED = "refunded"
    WON = "won"

    def __str__(self) -> str:
        return str(self.value)
