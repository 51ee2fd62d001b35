from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.trade_status import TradeStatus

T = TypeVar("T", bound="SaleReceipt")


@_attrs_define
class SaleReceipt:
    """A sale of shares.

    Attributes:
        average_price (str): Average price per share of the trade, a decimal string in [0, 1].
        balance_after (str): An amount in wei, or shares in share units: a decimal integer string
        balance_before (str): An amount in wei, or shares in share units: a decimal integer string
        created_at (datetime.datetime): RFC 3339 time in UTC
        market_id (str): A market.
        new_outcome_price (str): The outcome's price after the trade, a decimal string in [0, 1].
        outcome_id (str): An outcome of a market.
        position_id (str): A wallet's position in one outcome.
        session_id (str): A login session.
        status (TradeStatus): What every trade receipt says of its state: it is recorded and durable.
        transaction_fee (str): An amount in wei, or shares in share units: a decimal integer string
        net_proceeds (str): An amount in wei, or shares in share units: a decimal integer string
        proceeds (str): An amount in wei, or shares in share units: a decimal integer string
        shares_sold (str): An amount in wei, or shares in share units: a decimal integer string
        transaction_id (str): A bet, sale or claim.
        unfilled_shares (str): An amount in wei, or shares in share units: a decimal integer string
    """

    average_price: str
    balance_after: str
    balance_before: str
    created_at: datetime.datetime
    market_id: str
    new_outcome_price: str
    outcome_id: str
    position_id: str
    session_id: str
    status: TradeStatus
    transaction_fee: str
    net_proceeds: str
    proceeds: str
    shares_sold: str
    transaction_id: str
    unfilled_shares: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        average_price = self.average_price

        balance_after = self.balance_after

        balance_before = self.balance_before

        created_at = self.created_at.isoformat()

        market_id = self.market_id

        new_outcome_price = self.new_outcome_price

        outcome_id = self.outcome_id

        position_id = self.position_id

        session_id = self.session_id

        status = self.status.value

        transaction_fee = self.transaction_fee

        net_proceeds = self.net_proceeds

        proceeds = self.proceeds

        shares_sold = self.shares_sold

        transaction_id = self.transaction_id

        unfilled_shares = self.unfilled_shares

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "average_price": average_price,
                "balance_after": balance_after,
                "balance_before": balance_before,
                "created_at": created_at,
                "market_id": market_id,
                "new_outcome_price": new_outcome_price,
                "outcome_id": outcome_id,
                "position_id": position_id,
                "session_id": session_id,
                "status": status,
                "transaction_fee": transaction_fee,
                "net_proceeds": net_proceeds,
                "proceeds": proceeds,
                "shares_sold": shares_sold,
                "transaction_id": transaction_id,
                "unfilled_shares": unfilled_shares,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        average_price = d.pop("average_price")

        balance_after = d.pop("balance_after")

        balance_before = d.pop("balance_before")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        market_id = d.pop("market_id")

        new_outcome_price = d.pop("new_outcome_price")

        outcome_id = d.pop("outcome_id")

        position_id = d.pop("position_id")

        session_id = d.pop("session_id")

        status = TradeStatus(d.pop("status"))

        transaction_fee = d.pop("transaction_fee")

        net_proceeds = d.pop("net_proceeds")

        proceeds = d.pop("proceeds")

        shares_sold = d.pop("shares_sold")

        transaction_id = d.pop("transaction_id")

        unfilled_shares = d.pop("unfilled_shares")

        sale_receipt = cls(
            average_price=average_price,
            balance_after=balance_after,
            balance_before=balance_before,
            created_at=created_at,
            market_id=market_id,
            new_outcome_price=new_outcome_price,
            outcome_id=outcome_id,
            position_id=position_id,
            session_id=session_id,
            status=status,
            transaction_fee=transaction_fee,
            net_proceeds=net_proceeds,
            proceeds=proceeds,
            shares_sold=shares_sold,
            transaction_id=transaction_id,
            unfilled_shares=unfilled_shares,
        )

        sale_receipt.additional_properties = d
        return sale_receipt

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
