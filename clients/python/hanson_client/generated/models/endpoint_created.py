from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointCreated")


@_attrs_define
class EndpointCreated:
    """The endpoint with its signing secret: the create response.

    Attributes:
        created_at (datetime.datetime): RFC 3339 time in UTC
        enabled (bool): Whether deliveries are sent (a disabled endpoint queues nothing).
        event_types (list[str]): The event types delivered to it; ["*"] is every type.
        id (str): The webhook endpoint's id.
        updated_at (datetime.datetime): RFC 3339 time in UTC
        url (str): Where the deliveries are POSTed.
        secret (str): `whsec_` + base64 of 32 random bytes. Shown only here and on rotation.
        description (None | str | Unset): The provider's note on the endpoint.
        disabled_reason (None | str | Unset): Why the service disabled it (`gone`: the endpoint answered 410; `failing`:
            five days
            of failures); null when enabled or disabled by the provider.
    """

    created_at: datetime.datetime
    enabled: bool
    event_types: list[str]
    id: str
    updated_at: datetime.datetime
    url: str
    secret: str
    description: None | str | Unset = UNSET
    disabled_reason: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        enabled = self.enabled

        event_types = self.event_types

        id = self.id

        updated_at = self.updated_at.isoformat()

        url = self.url

        secret = self.secret

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        disabled_reason: None | str | Unset
        if isinstance(self.disabled_reason, Unset):
            disabled_reason = UNSET
        else:
            disabled_reason = self.disabled_reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "enabled": enabled,
                "event_types": event_types,
                "id": id,
                "updated_at": updated_at,
                "url": url,
                "secret": secret,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description
        if disabled_reason is not UNSET:
            field_dict["disabled_reason"] = disabled_reason

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        enabled = d.pop("enabled")

        event_types = cast(list[str], d.pop("event_types"))

        id = d.pop("id")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        url = d.pop("url")

        secret = d.pop("secret")

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        def _parse_disabled_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        disabled_reason = _parse_disabled_reason(d.pop("disabled_reason", UNSET))

        endpoint_created = cls(
            created_at=created_at,
            enabled=enabled,
            event_types=event_types,
            id=id,
            updated_at=updated_at,
            url=url,
            secret=secret,
            description=description,
            disabled_reason=disabled_reason,
        )

        endpoint_created.additional_properties = d
        return endpoint_created

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
