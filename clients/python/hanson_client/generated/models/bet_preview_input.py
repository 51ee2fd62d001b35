from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="BetPreviewInput")


@_attrs_define
class BetPreviewInput:
    """
    Attributes:
        amount (str): An amount in wei or share units: a decimal integer string without sign, point, exponent or leading
            zeros, at most 10^36
        outcome_id (str): The outcome's id.
        max_price (None | str | Unset): A limit: the outcome's price after the bet may not exceed it.
        min_shares (None | str | Unset): The fewest shares accepted: fewer is 409 price_moved and nothing changes.
    """

    amount: str
    outcome_id: str
    max_price: None | str | Unset = UNSET
    min_shares: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        outcome_id = self.outcome_id

        max_price: None | str | Unset
        if isinstance(self.max_price, Unset):
            max_price = UNSET
        else:
            max_price = self.max_price

        min_shares: None | str | Unset
        if isinstance(self.min_shares, Unset):
            min_shares = UNSET
        else:
            min_shares = self.min_shares

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "amount": amount,
                "outcome_id": outcome_id,
            }
        )
        if max_price is not UNSET:
            field_dict["max_price"] = max_price
        if min_shares is not UNSET:
            field_dict["min_shares"] = min_shares

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        amount = d.pop("amount")

        outcome_id = d.pop("outcome_id")

        def _parse_max_price(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        max_price = _parse_max_price(d.pop("max_price", UNSET))

        def _parse_min_shares(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        min_shares = _parse_min_shares(d.pop("min_shares", UNSET))

        bet_preview_input = cls(
            amount=amount,
            outcome_id=outcome_id,
            max_price=max_price,
            min_shares=min_shares,
        )

        bet_preview_input.additional_properties = d
        return bet_preview_input

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
