from enum import StrEnum


class SortFieldHoldingsFilters(StrEnum):
    CREATED_AT = "created_at"
    CURRENT_VALUE = "current_value"
    SHARES = "shares"
    TOTAL_INVESTED = "total_invested"
    UPDATED_AT = "updated_at"

    def __str__(self) -> str:
        return str(self.value)
