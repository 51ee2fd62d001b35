from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.subscribed_type import SubscribedType
from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointInput")


@_attrs_define
class EndpointInput:
    """`POST /v1/providers/webhooks`.

    Attributes:
        event_types (list[SubscribedType]): Event types to receive, or `["*"]` for all.
        url (str): An `https` URL whose host resolves to public addresses only (`http` and private
            addresses too when the server runs with `--webhook-allow-private`); otherwise 422.
        description (None | str | Unset): A note on the endpoint, for the provider.
    """

    event_types: list[SubscribedType]
    url: str
    description: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        event_types = []
        for event_types_item_data in self.event_types:
            event_types_item = event_types_item_data.value
            event_types.append(event_types_item)

        url = self.url

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "event_types": event_types,
                "url": url,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        event_types = []
        _event_types = d.pop("event_types")
        for event_types_item_data in _event_types:
            event_types_item = SubscribedType(event_types_item_data)

            event_types.append(event_types_item)

        url = d.pop("url")

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        endpoint_input = cls(
            event_types=event_types,
            url=url,
            description=description,
        )

        return endpoint_input
