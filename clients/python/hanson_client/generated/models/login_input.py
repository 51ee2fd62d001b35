from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="LoginInput")


@_attrs_define
class LoginInput:
    """A login as sent: an EIP-191 signature of the nonce's message, or an alt-network
    account key's signature (`wallet_type` alt).

        Attributes:
            nonce (str): The single-use login nonce from POST /v1/auth/nonce (valid five minutes).
            provider_id (str): The provider's (tenant's) id.
            signature (str): EVM: 0x + 65 bytes hex (v in 0, 1, 27, 28; high-s rejected). Alt: 64 bytes r||s hex without 0x.
            wallet_address (str): EVM address (0x + 40 hex, EIP-55 checked when mixed-case), or for `wallet_type` alt an
                alt account address (0x + 16 hex).
            alt_evm_address (None | str | Unset): Alt wallets: the EVM address the account maps to.
            key_id (int | None | Unset): Alt wallets: the account key that signed.
            message (None | str | Unset): Optional: the message the wallet signed, as the nonce's `message` gave it. When
                sent,
                it must be that message; for a Sign-In with Ethereum nonce a differing or expired field
                is a 401 `invalid_message` naming the field.
            wallet_type (None | str | Unset): `evm` (default) or `alt`.
    """

    nonce: str
    provider_id: str
    signature: str
    wallet_address: str
    alt_evm_address: None | str | Unset = UNSET
    key_id: int | None | Unset = UNSET
    message: None | str | Unset = UNSET
    wallet_type: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        nonce = self.nonce

        provider_id = self.provider_id

        signature = self.signature

        wallet_address = self.wallet_address

        alt_evm_address: None | str | Unset
        if isinstance(self.alt_evm_address, Unset):
            alt_evm_address = UNSET
        else:
            alt_evm_address = self.alt_evm_address

        key_id: int | None | Unset
        if isinstance(self.key_id, Unset):
            key_id = UNSET
        else:
            key_id = self.key_id

        message: None | str | Unset
        if isinstance(self.message, Unset):
            message = UNSET
        else:
            message = self.message

        wallet_type: None | str | Unset
        if isinstance(self.wallet_type, Unset):
            wallet_type = UNSET
        else:
            wallet_type = self.wallet_type

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "nonce": nonce,
                "provider_id": provider_id,
                "signature": signature,
                "wallet_address": wallet_address,
            }
        )
        if alt_evm_address is not UNSET:
            field_dict["alt_evm_address"] = alt_evm_address
        if key_id is not UNSET:
            field_dict["key_id"] = key_id
        if message is not UNSET:
            field_dict["message"] = message
        if wallet_type is not UNSET:
            field_dict["wallet_type"] = wallet_type

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        nonce = d.pop("nonce")

        provider_id = d.pop("provider_id")

        signature = d.pop("signature")

        wallet_address = d.pop("wallet_address")

        def _parse_alt_evm_address(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        alt_evm_address = _parse_alt_evm_address(d.pop("alt_evm_address", UNSET))

        def _parse_key_id(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        key_id = _parse_key_id(d.pop("key_id", UNSET))

        def _parse_message(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        message = _parse_message(d.pop("message", UNSET))

        def _parse_wallet_type(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        wallet_type = _parse_wallet_type(d.pop("wallet_type", UNSET))

        login_input = cls(
            nonce=nonce,
            provider_id=provider_id,
            signature=signature,
            wallet_address=wallet_address,
            alt_evm_address=alt_evm_address,
            key_id=key_id,
            message=message,
            wallet_type=wallet_type,
        )

        login_input.additional_properties = d
        return login_input

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
