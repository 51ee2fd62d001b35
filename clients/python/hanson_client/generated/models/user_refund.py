from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="UserRefund")


@_attrs_define
class UserRefund:
    """What one wallet got back from a cancellation.

    Attributes:
        original_positions (int): The positions refunded.
        refund_amount (str): An amount in wei, or shares in share units: a decimal integer string
        wallet_id (str): A wallet (one per provider and address).
    """

    original_positions: int
    refund_amount: str
    wallet_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        original_positions = self.original_positions

        refund_amount = self.refund_amount

        wallet_id = self.wallet_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "original_positions": original_positions,
                "refund_amount": refund_amount,
                "wallet_id": wallet_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        original_positions = d.pop("original_positions")

        refund_amount = d.pop("refund_amount")

        wallet_id = d.pop("wallet_id")

        user_refund = cls(
            original_positions=original_positions,
            refund_amount=refund_amount,
            wallet_id=wallet_id,
        )

        user_refund.additional_properties = d
        return user_refund

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
