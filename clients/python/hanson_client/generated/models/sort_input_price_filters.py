from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.sort_field_price_filters import SortFieldPriceFilters
from ..types import UNSET, Unset

T = TypeVar("T", bound="SortInputPriceFilters")


@_attrs_define
class SortInputPriceFilters:
    """
    Attributes:
        direction (None | str | Unset): asc or desc (default desc). Default: 'desc'.
        field (None | SortFieldPriceFilters | Unset): The field to sort by (a documented whitelist per search).
    """

    direction: None | str | Unset = "desc"
    field: None | SortFieldPriceFilters | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        direction: None | str | Unset
        if isinstance(self.direction, Unset):
            direction = UNSET
        else:
            direction = self.direction

        field: None | str | Unset
        if isinstance(self.field, Unset):
            field = UNSET
        elif isinstance(self.field, SortFieldPriceFilters):
            field = self.field.value
        else:
            field = self.field

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if direction is not UNSET:
            field_dict["direction"] = direction
        if field is not UNSET:
            field_dict["field"] = field

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_direction(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        direction = _parse_direction(d.pop("direction", UNSET))

        def _parse_field(data: object) -> None | SortFieldPriceFilters | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                field_type_1 = SortFieldPriceFilters(data)

                return field_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SortFieldPriceFilters | Unset, data)

        field = _parse_field(d.pop("field", UNSET))

        sort_input_price_filters = cls(
            direction=direction,
            field=field,
        )

        sort_input_price_filters.additional_properties = d
        return sort_input_price_filters

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
