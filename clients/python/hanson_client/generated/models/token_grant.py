from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="TokenGrant")


@_attrs_define
class TokenGrant:
    """What login and refresh answer.

    Attributes:
        access_token (str): A JWT for the user routes: `Authorization: Bearer <access_token>`.
        expires_in (int): Seconds until the access token expires.
        refresh_token (str): The token that gets a new access token from POST /v1/auth/refresh while the session lasts.
        session_id (str): The login session's id; trades must name the session of their access token.
        token_type (str): Always `Bearer`.
    """

    access_token: str
    expires_in: int
    refresh_token: str
    session_id: str
    token_type: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        access_token = self.access_token

        expires_in = self.expires_in

        refresh_token = self.refresh_token

        session_id = self.session_id

        token_type = self.token_type

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "access_token": access_token,
                "expires_in": expires_in,
                "refresh_token": refresh_token,
                "session_id": session_id,
                "token_type": token_type,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        access_token = d.pop("access_token")

        expires_in = d.pop("expires_in")

        refresh_token = d.pop("refresh_token")

        session_id = d.pop("session_id")

        token_type = d.pop("token_type")

        token_grant = cls(
            access_token=access_token,
            expires_in=expires_in,
            refresh_token=refresh_token,
            session_id=session_id,
            token_type=token_type,
        )

        token_grant.additional_properties = d
        return token_grant

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
