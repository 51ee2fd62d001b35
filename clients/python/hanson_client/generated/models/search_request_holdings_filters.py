from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.holdings_filters import HoldingsFilters
    from ..models.pagination_input import PaginationInput
    from ..models.sort_input_holdings_filters import SortInputHoldingsFilters


T = TypeVar("T", bound="SearchRequestHoldingsFilters")


@_attrs_define
class SearchRequestHoldingsFilters:
    """The common search request: `{filters, pagination: {page, per_page}, sort: {field, direction}}`.

    Attributes:
        filters (HoldingsFilters | None | Unset): Filters, all of which must match (absent: none).
        pagination (None | PaginationInput | Unset): Which page, and how large (absent: page 1 of 20).
        sort (None | SortInputHoldingsFilters | Unset): The order of the results (absent: newest first).
    """

    filters: HoldingsFilters | None | Unset = UNSET
    pagination: None | PaginationInput | Unset = UNSET
    sort: None | SortInputHoldingsFilters | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.holdings_filters import HoldingsFilters
        from ..models.pagination_input import PaginationInput
        from ..models.sort_input_holdings_filters import SortInputHoldingsFilters

        filters: dict[str, Any] | None | Unset
        if isinstance(self.filters, Unset):
            filters = UNSET
        elif isinstance(self.filters, HoldingsFilters):
            filters = self.filters.to_dict()
        else:
            filters = self.filters

        pagination: dict[str, Any] | None | Unset
        if isinstance(self.pagination, Unset):
            pagination = UNSET
        elif isinstance(self.pagination, PaginationInput):
            pagination = self.pagination.to_dict()
        else:
            pagination = self.pagination

        sort: dict[str, Any] | None | Unset
        if isinstance(self.sort, Unset):
            sort = UNSET
        elif isinstance(self.sort, SortInputHoldingsFilters):
            sort = self.sort.to_dict()
        else:
            sort = self.sort

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if filters is not UNSET:
            field_dict["filters"] = filters
        if pagination is not UNSET:
            field_dict["pagination"] = pagination
        if sort is not UNSET:
            field_dict["sort"] = sort

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.holdings_filters import HoldingsFilters
        from ..models.pagination_input import PaginationInput
        from ..models.sort_input_holdings_filters import SortInputHoldingsFilters

        d = dict(src_dict)

        def _parse_filters(data: object) -> HoldingsFilters | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                filters_type_1 = HoldingsFilters.from_dict(data)

                return filters_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(HoldingsFilters | None | Unset, data)

        filters = _parse_filters(d.pop("filters", UNSET))

        def _parse_pagination(data: object) -> None | PaginationInput | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                pagination_type_1 = PaginationInput.from_dict(data)

                return pagination_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PaginationInput | Unset, data)

        pagination = _parse_pagination(d.pop("pagination", UNSET))

        def _parse_sort(data: object) -> None | SortInputHoldingsFilters | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                sort_type_1 = SortInputHoldingsFilters.from_dict(data)

                return sort_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SortInputHoldingsFilters | Unset, data)

        sort = _parse_sort(d.pop("sort", UNSET))

        search_request_holdings_filters = cls(
            filters=filters,
            pagination=pagination,
            sort=sort,
        )

        search_request_holdings_filters.additional_properties = d
        return search_request_holdings_filters

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
