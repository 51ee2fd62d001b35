from enum import StrEnum


class SortFieldPriceFilters(StrEnum):
    TIMESTAMP = "timestamp"

    def __str__(self) -> str:
        return str(self.value)
