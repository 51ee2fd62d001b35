from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SellInputByProceeds")


@_attrs_define
class SellInputByProceeds:
    """A sale of the fewest shares whose net proceeds (after the fee) reach `target_proceeds`.

    Attributes:
        outcome_id (str): The outcome's id.
        target_proceeds (str): An amount in wei or share units: a decimal integer string without sign, point, exponent
            or leading zeros, at most 10^36
        max_shares (None | str | Unset): The most shares the sale may sell to reach target_proceeds.
        min_price (None | Unset): Not given with `target_proceeds`.
        min_proceeds (None | Unset): Not given with `target_proceeds`.
        shares_amount (None | Unset): Not given with `target_proceeds`.
    """

    outcome_id: str
    target_proceeds: str
    max_shares: None | str | Unset = UNSET
    min_price: None | Unset = UNSET
    min_proceeds: None | Unset = UNSET
    shares_amount: None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        outcome_id = self.outcome_id

        target_proceeds = self.target_proceeds

        max_shares: None | str | Unset
        if isinstance(self.max_shares, Unset):
            max_shares = UNSET
        else:
            max_shares = self.max_shares

        min_price = self.min_price

        min_proceeds = self.min_proceeds

        shares_amount = self.shares_amount

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "outcome_id": outcome_id,
                "target_proceeds": target_proceeds,
            }
        )
        if max_shares is not UNSET:
            field_dict["max_shares"] = max_shares
        if min_price is not UNSET:
            field_dict["min_price"] = min_price
        if min_proceeds is not UNSET:
            field_dict["min_proceeds"] = min_proceeds
        if shares_amount is not UNSET:
            field_dict["shares_amount"] = shares_amount

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        outcome_id = d.pop("outcome_id")

        target_proceeds = d.pop("target_proceeds")

        def _parse_max_shares(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        max_shares = _parse_max_shares(d.pop("max_shares", UNSET))

        min_price = d.pop("min_price", UNSET)

        min_proceeds = d.pop("min_proceeds", UNSET)

        shares_amount = d.pop("shares_amount", UNSET)

        sell_input_by_proceeds = cls(
            outcome_id=outcome_id,
            target_proceeds=target_proceeds,
            max_shares=max_shares,
            min_price=min_price,
            min_proceeds=min_proceeds,
            shares_amount=shares_amount,
        )

        sell_input_by_proceeds.additional_properties = d
        return sell_input_by_proceeds

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
