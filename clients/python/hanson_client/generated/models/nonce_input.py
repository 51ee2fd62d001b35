from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="NonceInput")


@_attrs_define
class NonceInput:
    """
    Attributes:
        provider_id (str): The provider's (tenant's) id.
        wallet_address (str): EVM address (0x + 40 hex, EIP-55 checked when mixed-case) or alt account address (0x + 16
            hex).
    """

    provider_id: str
    wallet_address: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        provider_id = self.provider_id

        wallet_address = self.wallet_address

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "provider_id": provider_id,
                "wallet_address": wallet_address,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        provider_id = d.pop("provider_id")

        wallet_address = d.pop("wallet_address")

        nonce_input = cls(
            provider_id=provider_id,
            wallet_address=wallet_address,
        )

        nonce_input.additional_properties = d
        return nonce_input

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
