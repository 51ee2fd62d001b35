from enum import StrEnum


class SortFieldTradeFilters(StrEnum):
    AMOUNT = "amount"
    CREATED_AT = "created_at"
    SHARES = "shares"

    def __str__(self) -> str:
        return str(self.value)
