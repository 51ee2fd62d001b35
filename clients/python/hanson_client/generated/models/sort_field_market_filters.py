from enum import StrEnum


class SortFieldMarketFilters(StrEnum):
    CLOSES_AT = "closes_at"
    CREATED_AT = "created_at"
    QUESTION = "question"
    TOTAL_VOLUME = "total_volume"

    def __str__(self) -> str:
        return str(self.value)
