from enum import StrEnum


class SubscribedType(StrEnum):
    ALL = "*"
    CLAIM_COMPLETED = "claim.completed"
    DEPOSIT_COMPLETED = "deposit.completed"
    MARKET_CANCELLED = "market.cancelled"
    MARKET_CLOSED = "market.closed"
    MARKET_CREATED = "market.created"
    MARKET_FINALIZED = "market.finalized"
    MARKET_RESOLVED = "market.resolved"
    MARKET_UPDATED = "market.updated"
    OUTCOME_CREATED = "outcome.created"
    OUTCOME_UPDATED = "outcome.updated"
    TRADE_CREATED = "trade.created"
    WITHDRAWAL_COMPLETED = "withdrawal.completed"

    def __str__(self) -> str:
        return str(self.value)
