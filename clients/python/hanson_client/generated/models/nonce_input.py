from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="NonceInput")


@_attrs_define
class NonceInput:
    """
    Attributes:
        provider_id (str): The provider's (tenant's) id.
        wallet_address (str): EVM address (0x + 40 hex, EIP-55 checked when mixed-case) or alt account address (0x + 16
            hex).
        chain_id (int | None | Unset): `siwe` only: the EIP-155 chain id the wallet is on (default 1).
        message_format (None | str | Unset): `spec` (default): the spec's one-line message. `siwe`: an EIP-4361 Sign-In
            with
            Ethereum message naming this service's domain and URI (its `--public-url`), the chain
            id, the nonce, and when it was issued and expires; EVM wallets only, and only when the
            server has a public URL.
    """

    provider_id: str
    wallet_address: str
    chain_id: int | None | Unset = UNSET
    message_format: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        provider_id = self.provider_id

        wallet_address = self.wallet_address

        chain_id: int | None | Unset
        if isinstance(self.chain_id, Unset):
            chain_id = UNSET
        else:
            chain_id = self.chain_id

        message_format: None | str | Unset
        if isinstance(self.message_format, Unset):
            message_format = UNSET
        else:
            message_format = self.message_format

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "provider_id": provider_id,
                "wallet_address": wallet_address,
            }
        )
        if chain_id is not UNSET:
            field_dict["chain_id"] = chain_id
        if message_format is not UNSET:
            field_dict["message_format"] = message_format

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        provider_id = d.pop("provider_id")

        wallet_address = d.pop("wallet_address")

        def _parse_chain_id(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        chain_id = _parse_chain_id(d.pop("chain_id", UNSET))

        def _parse_message_format(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        message_format = _parse_message_format(d.pop("message_format", UNSET))

        nonce_input = cls(
            provider_id=provider_id,
            wallet_address=wallet_address,
            chain_id=chain_id,
            message_format=message_format,
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
