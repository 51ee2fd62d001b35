from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.market_status import MarketStatus

if TYPE_CHECKING:
    from ..models.user_refund import UserRefund


T = TypeVar("T", bound="Cancellation")


@_attrs_define
class Cancellation:
    """A cancelled market.

    Attributes:
        cancellation_data (Any): Free-form strings the provider records with the cancellation.
        cancellation_source (str): Where the reason for cancelling comes from (free text).
        cancelled_at (datetime.datetime): RFC 3339 time in UTC
        canceller_wallet_id (str): Who cancelled, as the provider names them (free text).
        market_id (str): A market.
        positions_refunded (int): How many positions were refunded.
        reason (str): Why the market was cancelled.
        refund_ratio (str): The share of their cost basis positions got back, a decimal string (1 unless the pool fell
            short).
        status (MarketStatus): A market's status. `Closed` is never stored: it is an active market whose end has passed.
        total_refund_amount (str): An amount in wei, or shares in share units: a decimal integer string
        user_refunds (list[UserRefund]): One entry per wallet refunded.
    """

    cancellation_data: Any
    cancellation_source: str
    cancelled_at: datetime.datetime
    canceller_wallet_id: str
    market_id: str
    positions_refunded: int
    reason: str
    refund_ratio: str
    status: MarketStatus
    total_refund_amount: str
    user_refunds: list[UserRefund]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cancellation_data = self.cancellation_data

        cancellation_source = self.cancellation_source

        cancelled_at = self.cancelled_at.isoformat()

        canceller_wallet_id = self.canceller_wallet_id

        market_id = self.market_id

        positions_refunded = self.positions_refunded

        reason = self.reason

        refund_ratio = self.refund_ratio

        status = self.status.value

        total_refund_amount = self.total_refund_amount

        user_refunds = []
        for user_refunds_item_data in self.user_refunds:
            user_refunds_item = user_refunds_item_data.to_dict()
            user_refunds.append(user_refunds_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cancellation_data": cancellation_data,
                "cancellation_source": cancellation_source,
                "cancelled_at": cancelled_at,
                "canceller_wallet_id": canceller_wallet_id,
                "market_id": market_id,
                "positions_refunded": positions_refunded,
                "reason": reason,
                "refund_ratio": refund_ratio,
                "status": status,
                "total_refund_amount": total_refund_amount,
                "user_refunds": user_refunds,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.user_refund import UserRefund

        d = dict(src_dict)
        cancellation_data = d.pop("cancellation_data")

        cancellation_source = d.pop("cancellation_source")

        cancelled_at = datetime.datetime.fromisoformat(d.pop("cancelled_at"))

        canceller_wallet_id = d.pop("canceller_wallet_id")

        market_id = d.pop("market_id")

        positions_refunded = d.pop("positions_refunded")

        reason = d.pop("reason")

        refund_ratio = d.pop("refund_ratio")

        status = MarketStatus(d.pop("status"))

        total_refund_amount = d.pop("total_refund_amount")

        user_refunds = []
        _user_refunds = d.pop("user_refunds")
        for user_refunds_item_data in _user_refunds:
            user_refunds_item = UserRefund.from_dict(user_refunds_item_data)

            user_refunds.append(user_refunds_item)

        cancellation = cls(
            cancellation_data=cancellation_data,
            cancellation_source=cancellation_source,
            cancelled_at=cancelled_at,
            canceller_wallet_id=canceller_wallet_id,
            market_id=market_id,
            positions_refunded=positions_refunded,
            reason=reason,
            refund_ratio=refund_ratio,
            status=status,
            total_refund_amount=total_refund_amount,
            user_refunds=user_refunds,
        )

        cancellation.additional_properties = d
        return cancellation

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
