from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="NonceGrant")


@_attrs_define
class NonceGrant:
    """A login nonce and the message to sign with it.

    Attributes:
        expires_at (datetime.datetime): RFC 3339 time in UTC
        message (str): The exact text the wallet signs (EIP-191 personal_sign) to log in with this nonce.
        nonce (str): The single-use login nonce from POST /v1/auth/nonce (valid five minutes).
    """

    expires_at: datetime.datetime
    message: str
    nonce: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        expires_at = self.expires_at.isoformat()

        message = self.message

        nonce = self.nonce

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "expires_at": expires_at,
                "message": message,
                "nonce": nonce,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))

        message = d.pop("message")

        nonce = d.pop("nonce")

        nonce_grant = cls(
            expires_at=expires_at,
            message=message,
            nonce=nonce,
        )

        nonce_grant.additional_properties = d
        return nonce_grant

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
