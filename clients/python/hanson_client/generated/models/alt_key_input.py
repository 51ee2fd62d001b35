from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="AltKeyInput")


@_attrs_define
class AltKeyInput:
    """
    Attributes:
        hash_algo (str): The hash the alt key signs with.
        public_key (str): 64 bytes X||Y hex without 0x.
        sign_algo (str): The signature algorithm of the alt key.
        revoked (bool | None | Unset): Whether the alt key is revoked (a revoked key cannot log in). Default: False.
    """

    hash_algo: str
    public_key: str
    sign_algo: str
    revoked: bool | None | Unset = False
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        hash_algo = self.hash_algo

        public_key = self.public_key

        sign_algo = self.sign_algo

        revoked: bool | None | Unset
        if isinstance(self.revoked, Unset):
            revoked = UNSET
        else:
            revoked = self.revoked

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "hash_algo": hash_algo,
                "public_key": public_key,
                "sign_algo": sign_algo,
            }
        )
        if revoked is not UNSET:
            field_dict["revoked"] = revoked

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        hash_algo = d.pop("hash_algo")

        public_key = d.pop("public_key")

        sign_algo = d.pop("sign_algo")

        def _parse_revoked(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        revoked = _parse_revoked(d.pop("revoked", UNSET))

        alt_key_input = cls(
            hash_algo=hash_algo,
            public_key=public_key,
            sign_algo=sign_algo,
            revoked=revoked,
        )

        alt_key_input.additional_properties = d
        return alt_key_input

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
