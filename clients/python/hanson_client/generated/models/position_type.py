from enum import StrEnum


class PositionType(StrEnum):
    LONG = "long"

    def __str__(self) -> str:
        return str(self.value)
