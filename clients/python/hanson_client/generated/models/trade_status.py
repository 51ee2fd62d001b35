from enum import StrEnum


class TradeStatus(StrEnum):
    CONFIRMED = "confirmed"

    def __str__(self) -> str:
        return str(self.value)
