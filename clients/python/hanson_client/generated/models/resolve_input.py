from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.string_map import StringMap


T = TypeVar("T", bound="ResolveInput")


@_attrs_define
class ResolveInput:
    """
    Attributes:
        resolver_wallet_id (str): Not blank.
        winning_outcome_id (str): Not blank.
        dispute_window_seconds (int | None | Unset): Seconds (0 to 604800, default 0) during which the resolution may
            still be replaced or
            cancelled: claims wait until final_at and the surplus stays in the pool until then.
        resolution_data (None | StringMap | Unset): Free-form strings the provider records with the result.
        resolution_source (None | str | Unset): Where the result comes from (free text, e.g. a URL).
    """

    resolver_wallet_id: str
    winning_outcome_id: str
    dispute_window_seconds: int | None | Unset = UNSET
    resolution_data: None | StringMap | Unset = UNSET
    resolution_source: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.string_map import StringMap

        resolver_wallet_id = self.resolver_wallet_id

        winning_outcome_id = self.winning_outcome_id

        dispute_window_seconds: int | None | Unset
        if isinstance(self.dispute_window_seconds, Unset):
            dispute_window_seconds = UNSET
        else:
            dispute_window_seconds = self.dispute_window_seconds

        resolution_data: dict[str, Any] | None | Unset
        if isinstance(self.resolution_data, Unset):
            resolution_data = UNSET
        elif isinstance(self.resolution_data, StringMap):
            resolution_data = self.resolution_data.to_dict()
        else:
            resolution_data = self.resolution_data

        resolution_source: None | str | Unset
        if isinstance(self.resolution_source, Unset):
            resolution_source = UNSET
        else:
            resolution_source = self.resolution_source

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "resolver_wallet_id": resolver_wallet_id,
                "winning_outcome_id": winning_outcome_id,
            }
        )
        if dispute_window_seconds is not UNSET:
            field_dict["dispute_window_seconds"] = dispute_window_seconds
        if resolution_data is not UNSET:
            field_dict["resolution_data"] = resolution_data
        if resolution_source is not UNSET:
            field_dict["resolution_source"] = resolution_source

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.string_map import StringMap

        d = dict(src_dict)
        resolver_wallet_id = d.pop("resolver_wallet_id")

        winning_outcome_id = d.pop("winning_outcome_id")

        def _parse_dispute_window_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        dispute_window_seconds = _parse_dispute_window_seconds(
            d.pop("dispute_window_seconds", UNSET)
        )

        def _parse_resolution_data(data: object) -> None | StringMap | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                resolution_data_type_1 = StringMap.from_dict(data)

                return resolution_data_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | StringMap | Unset, data)

        resolution_data = _parse_resolution_data(d.pop("resolution_data", UNSET))

        def _parse_resolution_source(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        resolution_source = _parse_resolution_source(d.pop("resolution_source", UNSET))

        resolve_input = cls(
            resolver_wallet_id=resolver_wallet_id,
            winning_outcome_id=winning_outcome_id,
            dispute_window_seconds=dispute_window_seconds,
            resolution_data=resolution_data,
            resolution_source=resolution_source,
        )

        resolve_input.additional_properties = d
        return resolve_input

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
