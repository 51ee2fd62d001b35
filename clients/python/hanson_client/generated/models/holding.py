from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.position_status import PositionStatus
from ..models.position_type import PositionType
from ..types import UNSET, Unset

T = TypeVar("T", bound="Holding")


@_attrs_define
class Holding:
    """A position valued at its market's current prices or settlement (holdings search).

    Attributes:
        average_cost (str): Average price paid per share held, a decimal string.
        created_at (datetime.datetime): RFC 3339 time in UTC
        current_price (str): The outcome's price now, a decimal string in [0, 1].
        current_value (str): An amount in wei, or shares in share units: a decimal integer string
        id (str): A wallet's position in one outcome.
        is_claimable (bool): Whether POST /v1/markets/positions/{id}/claim would pay out now.
        market_id (str): A market.
        outcome_id (str): An outcome of a market.
        position_type (PositionType): Only long positions exist.
        shares (str): An amount in wei, or shares in share units: a decimal integer string
        status (PositionStatus): `Active` while held; `Closed` once sold out; on resolution `Won` or `Lost`; `Claimed`
            after the payout; `Refunded` by a cancellation.
        total_invested (str): An amount in wei, or shares in share units: a decimal integer string
        unrealized_pnl (str): A signed amount in wei: a decimal integer string
        updated_at (datetime.datetime): RFC 3339 time in UTC
        wallet_id (str): A wallet (one per provider and address).
        claimed_amount (None | str | Unset): Paid out by the claim, in wei.
    """

    average_cost: str
    created_at: datetime.datetime
    current_price: str
    current_value: str
    id: str
    is_claimable: bool
    market_id: str
    outcome_id: str
    position_type: PositionType
    shares: str
    status: PositionStatus
    total_invested: str
    unrealized_pnl: str
    updated_at: datetime.datetime
    wallet_id: str
    claimed_amount: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        average_cost = self.average_cost

        created_at = self.created_at.isoformat()

        current_price = self.current_price

        current_value = self.current_value

        id = self.id

        is_claimable = self.is_claimable

        market_id = self.market_id

        outcome_id = self.outcome_id

        position_type = self.position_type.value

        shares = self.shares

        status = self.status.value

        total_invested = self.total_invested

        unrealized_pnl = self.unrealized_pnl

        updated_at = self.updated_at.isoformat()

        wallet_id = self.wallet_id

        claimed_amount: None | str | Unset
        if isinstance(self.claimed_amount, Unset):
            claimed_amount = UNSET
        else:
            claimed_amount = self.claimed_amount

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "average_cost": average_cost,
                "created_at": created_at,
                "current_price": current_price,
                "current_value": current_value,
                "id": id,
                "is_claimable": is_claimable,
                "market_id": market_id,
                "outcome_id": outcome_id,
                "position_type": position_type,
                "shares": shares,
                "status": status,
                "total_invested": total_invested,
                "unrealized_pnl": unrealized_pnl,
                "updated_at": updated_at,
                "wallet_id": wallet_id,
            }
        )
        if claimed_amount is not UNSET:
            field_dict["claimed_amount"] = claimed_amount

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        average_cost = d.pop("average_cost")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        current_price = d.pop("current_price")

        current_value = d.pop("current_value")

        id = d.pop("id")

        is_claimable = d.pop("is_claimable")

        market_id = d.pop("market_id")

        outcome_id = d.pop("outcome_id")

        position_type = PositionType(d.pop("position_type"))

        shares = d.pop("shares")

        status = PositionStatus(d.pop("status"))

        total_invested = d.pop("total_invested")

        unrealized_pnl = d.pop("unrealized_pnl")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        wallet_id = d.pop("wallet_id")

        def _parse_claimed_amount(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        claimed_amount = _parse_claimed_amount(d.pop("claimed_amount", UNSET))

        holding = cls(
            average_cost=average_cost,
            created_at=created_at,
            current_price=current_price,
            current_value=current_value,
            id=id,
            is_claimable=is_claimable,
            market_id=market_id,
            outcome_id=outcome_id,
            position_type=position_type,
            shares=shares,
            status=status,
            total_invested=total_invested,
            unrealized_pnl=unrealized_pnl,
            updated_at=updated_at,
            wallet_id=wallet_id,
            claimed_amount=claimed_amount,
        )

        holding.additional_properties = d
        return holding

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
