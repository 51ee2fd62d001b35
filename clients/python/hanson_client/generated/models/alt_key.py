from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AltKey")


@_attrs_define
class AltKey:
    """An alt-network account key a provider registered for a wallet address.

    Attributes:
        hash_algo (str): The hash the alt key signs with.
        key_id (int): The alt key's index on its account.
        public_key (str): The alt key's public key, hex.
        revoked (bool): Whether the alt key is revoked (a revoked key cannot log in).
        sign_algo (str): The signature algorithm of the alt key.
        wallet_address (str): The wallet's address (EVM: 0x + 40 hex digits).
    """

    hash_algo: str
    key_id: int
    public_key: str
    revoked: bool
    sign_algo: str
    wallet_address: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        hash_algo = self.hash_algo

        key_id = self.key_id

        public_key = self.public_key

        revoked = self.revoked

        sign_algo = self.sign_algo

        wallet_address = self.wallet_address

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "hash_algo": hash_algo,
                "key_id": key_id,
                "public_key": public_key,
                "revoked": revoked,
                "sign_algo": sign_algo,
                "wallet_address": wallet_address,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        hash_algo = d.pop("hash_algo")

        key_id = d.pop("key_id")

        public_key = d.pop("public_key")

        revoked = d.pop("revoked")

        sign_algo = d.pop("sign_algo")

        wallet_address = d.pop("wallet_address")

        alt_key = cls(
            hash_algo=hash_algo,
            key_id=key_id,
            public_key=public_key,
            revoked=revoked,
            sign_algo=sign_algo,
            wallet_address=wallet_address,
        )

        alt_key.additional_properties = d
        return alt_key

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
