from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.trade_kind import TradeKind

T = TypeVar("T", bound="TradeRecord")


@_attrs_define
class TradeRecord:
    """One trade as the public trade records show it (positions search).

    Attributes:
        amount (str): An amount in wei, or shares in share units: a decimal integer string
        created_at (datetime.datetime): RFC 3339 time in UTC
        fee (str): An amount in wei, or shares in share units: a decimal integer string
        id (str): A bet, sale or claim.
        market_id (str): A market.
        net_amount (str): An amount in wei, or shares in share units: a decimal integer string
        outcome_id (str): An outcome of a market.
        price (str): The average price per share of the trade, a decimal string in [0, 1].
        shares (str): An amount in wei, or shares in share units: a decimal integer string
        transaction_type (TradeKind): Buy or sell, as trade records name them.
        wallet_address (str): The wallet's address (EVM: 0x + 40 hex digits).
        wallet_id (str): A wallet (one per provider and address).
    """

    amount: str
    created_at: datetime.datetime
    fee: str
    id: str
    market_id: str
    net_amount: str
    outcome_id: str
    price: str
    shares: str
    transaction_type: TradeKind
    wallet_address: str
    wallet_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        created_at = self.created_at.isoformat()

        fee = self.fee

        id = self.id

        market_id = self.market_id

        net_amount = self.net_amount

        outcome_id = self.outcome_id

        price = self.price

        shares = self.shares

        transaction_type = self.transaction_type.value

        wallet_address = self.wallet_address

        wallet_id = self.wallet_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "amount": amount,
                "created_at": created_at,
                "fee": fee,
                "id": id,
                "market_id": market_id,
                "net_amount": net_amount,
                "outcome_id": outcome_id,
                "price": price,
                "shares": shares,
                "transaction_type": transaction_type,
                "wallet_address": wallet_address,
                "wallet_id": wallet_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        amount = d.pop("amount")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        fee = d.pop("fee")

        id = d.pop("id")

        market_id = d.pop("market_id")

        net_amount = d.pop("net_amount")

        outcome_id = d.pop("outcome_id")

        price = d.pop("price")

        shares = d.pop("shares")

        transaction_type = TradeKind(d.pop("transaction_type"))

        wallet_address = d.pop("wallet_address")

        wallet_id = d.pop("wallet_id")

        trade_record = cls(
            amount=amount,
            created_at=created_at,
            fee=fee,
            id=id,
            market_id=market_id,
            net_amount=net_amount,
            outcome_id=outcome_id,
            price=price,
            shares=shares,
            transaction_type=transaction_type,
            wallet_address=wallet_address,
            wallet_id=wallet_id,
        )

        trade_record.additional_properties = d
        return trade_record

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
