from enum import StrEnum


class MarketStatus(StrEnum):
    ACTIVE = "active"
    CANCELLED = "cancelled"
    CLOSED = "closed"
    RESOLVED = "resolved"

    def __str__(self) -> str:
        return str(self.value)
