from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.string_map import StringMap


T = TypeVar("T", bound="CancelInput")


@_attrs_define
class CancelInput:
    """
    Attributes:
        canceller_wallet_id (str): Not blank.
        reason (str): Not blank.
        cancellation_data (None | StringMap | Unset): Free-form strings the provider records with the cancellation.
        cancellation_source (None | str | Unset): Where the reason for cancelling comes from (free text).
    """

    canceller_wallet_id: str
    reason: str
    cancellation_data: None | StringMap | Unset = UNSET
    cancellation_source: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.string_map import StringMap

        canceller_wallet_id = self.canceller_wallet_id

        reason = self.reason

        cancellation_data: dict[str, Any] | None | Unset
        if isinstance(self.cancellation_data, Unset):
            cancellation_data = UNSET
        elif isinstance(self.cancellation_data, StringMap):
            cancellation_data = self.cancellation_data.to_dict()
        else:
            cancellation_data = self.cancellation_data

        cancellation_source: None | str | Unset
        if isinstance(self.cancellation_source, Unset):
            cancellation_source = UNSET
        else:
            cancellation_source = self.cancellation_source

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "canceller_wallet_id": canceller_wallet_id,
                "reason": reason,
            }
        )
        if cancellation_data is not UNSET:
            field_dict["cancellation_data"] = cancellation_data
        if cancellation_source is not UNSET:
            field_dict["cancellation_source"] = cancellation_source

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.string_map import StringMap

        d = dict(src_dict)
        canceller_wallet_id = d.pop("canceller_wallet_id")

        reason = d.pop("reason")

        def _parse_cancellation_data(data: object) -> None | StringMap | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                cancellation_data_type_1 = StringMap.from_dict(data)

                return cancellation_data_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | StringMap | Unset, data)

        cancellation_data = _parse_cancellation_data(d.pop("cancellation_data", UNSET))

        def _parse_cancellation_source(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cancellation_source = _parse_cancellation_source(
            d.pop("cancellation_source", UNSET)
        )

        cancel_input = cls(
            canceller_wallet_id=canceller_wallet_id,
            reason=reason,
            cancellation_data=cancellation_data,
            cancellation_source=cancellation_source,
        )

        cancel_input.additional_properties = d
        return cancel_input

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
