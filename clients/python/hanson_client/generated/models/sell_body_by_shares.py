from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SellBodyByShares")


@_attrs_define
class SellBodyByShares:
    """A sale of `shares_amount` shares.

    Attributes:
        outcome_id (str): The outcome's id.
        session_id (str): The access token's session.
        shares_amount (str): An amount in wei or share units: a decimal integer string without sign, point, exponent or
            leading zeros, at most 10^36
        max_shares (None | Unset): Not given with `shares_amount`.
        min_price (None | str | Unset): A limit: the outcome's price after the sale may not fall below it.
        min_proceeds (None | str | Unset): The least net proceeds accepted: less is 409 price_moved and nothing changes.
        target_proceeds (None | Unset): Not given with `shares_amount`.
    """

    outcome_id: str
    session_id: str
    shares_amount: str
    max_shares: None | Unset = UNSET
    min_price: None | str | Unset = UNSET
    min_proceeds: None | str | Unset = UNSET
    target_proceeds: None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        outcome_id = self.outcome_id

        session_id = self.session_id

        shares_amount = self.shares_amount

        max_shares = self.max_shares

        min_price: None | str | Unset
        if isinstance(self.min_price, Unset):
            min_price = UNSET
        else:
            min_price = self.min_price

        min_proceeds: None | str | Unset
        if isinstance(self.min_proceeds, Unset):
            min_proceeds = UNSET
        else:
            min_proceeds = self.min_proceeds

        target_proceeds = self.target_proceeds

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "outcome_id": outcome_id,
                "session_id": session_id,
                "shares_amount": shares_amount,
            }
        )
        if max_shares is not UNSET:
            field_dict["max_shares"] = max_shares
        if min_price is not UNSET:
            field_dict["min_price"] = min_price
        if min_proceeds is not UNSET:
            field_dict["min_proceeds"] = min_proceeds
        if target_proceeds is not UNSET:
            field_dict["target_proceeds"] = target_proceeds

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        outcome_id = d.pop("outcome_id")

        session_id = d.pop("session_id")

        shares_amount = d.pop("shares_amount")

        max_shares = d.pop("max_shares", UNSET)

        def _parse_min_price(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        min_price = _parse_min_price(d.pop("min_price", UNSET))

        def _parse_min_proceeds(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        min_proceeds = _parse_min_proceeds(d.pop("min_proceeds", UNSET))

        target_proceeds = d.pop("target_proceeds", UNSET)

        sell_body_by_shares = cls(
            outcome_id=outcome_id,
            session_id=session_id,
            shares_amount=shares_amount,
            max_shares=max_shares,
            min_price=min_price,
            min_proceeds=min_proceeds,
            target_proceeds=target_proceeds,
        )

        sell_body_by_shares.additional_properties = d
        return sell_body_by_shares

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
