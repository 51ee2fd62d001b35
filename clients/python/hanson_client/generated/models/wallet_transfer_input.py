from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="WalletTransferInput")


@_attrs_define
class WalletTransferInput:
    """A deposit into, or a withdrawal from, a wallet.

    Attributes:
        amount (str): An amount in wei greater than 0: a decimal integer string without sign, point, exponent or leading
            zeros, at most 10^36
        reference (str): The external transfer's id: a repeat with the same reference answers the first result.
        token_id (str): The token's id.
        wallet_address (str): EVM address (0x + 40 hex, EIP-55 checked when mixed-case) or alt account address (0x + 16
            hex).
    """

    amount: str
    reference: str
    token_id: str
    wallet_address: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        reference = self.reference

        token_id = self.token_id

        wallet_address = self.wallet_address

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "amount": amount,
                "reference": reference,
                "token_id": token_id,
                "wallet_address": wallet_address,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        amount = d.pop("amount")

        reference = d.pop("reference")

        token_id = d.pop("token_id")

        wallet_address = d.pop("wallet_address")

        wallet_transfer_input = cls(
            amount=amount,
            reference=reference,
            token_id=token_id,
            wallet_address=wallet_address,
        )

        wallet_transfer_input.additional_properties = d
        return wallet_transfer_input

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
