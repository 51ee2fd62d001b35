from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ServerSentEvent")


@_attrs_define
class ServerSentEvent:
    """One event of a stream as a Server-Sent Events parser reads it: the `schema` of a
    `text/event-stream` response describes each event (as OpenAPI 3.2's `itemSchema` does).

        Attributes:
            data (str): The snapshot or the event's envelope, as JSON.
            event (str): `snapshot`, then the event's type, e.g. `trade.created`.
            id (str | Unset): The market's seq (market streams only).
    """

    data: str
    event: str
    id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = self.data

        event = self.event

        id = self.id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "data": data,
                "event": event,
            }
        )
        if id is not UNSET:
            field_dict["id"] = id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        data = d.pop("data")

        event = d.pop("event")

        id = d.pop("id", UNSET)

        server_sent_event = cls(
            data=data,
            event=event,
            id=id,
        )

        server_sent_event.additional_properties = d
        return server_sent_event

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
