from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.market_status import MarketStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="MarketFilters")


@_attrs_define
class MarketFilters:
    """
    Attributes:
        category (None | str | Unset): The market's category (metadata.category).
        provider_id (None | str | Unset): The provider's (tenant's) id.
        search_query (None | str | Unset): Case-insensitive match on question and description.
        status (MarketStatus | None | Unset): Only markets in this status.
        token_id (None | str | Unset): The token's id.
    """

    category: None | str | Unset = UNSET
    provider_id: None | str | Unset = UNSET
    search_query: None | str | Unset = UNSET
    status: MarketStatus | None | Unset = UNSET
    token_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        category: None | str | Unset
        if isinstance(self.category, Unset):
            category = UNSET
        else:
            category = self.category

        provider_id: None | str | Unset
        if isinstance(self.provider_id, Unset):
            provider_id = UNSET
        else:
            provider_id = self.provider_id

        search_query: None | str | Unset
        if isinstance(self.search_query, Unset):
            search_query = UNSET
        else:
            search_query = self.search_query

        status: None | str | Unset
        if isinstance(self.status, Unset):
            status = UNSET
        elif isinstance(self.status, MarketStatus):
            status = self.status.value
        else:
            status = self.status

        token_id: None | str | Unset
        if isinstance(self.token_id, Unset):
            token_id = UNSET
        else:
            token_id = self.token_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if category is not UNSET:
            field_dict["category"] = category
        if provider_id is not UNSET:
            field_dict["provider_id"] = provider_id
        if search_query is not UNSET:
            field_dict["search_query"] = search_query
        if status is not UNSET:
            field_dict["status"] = status
        if token_id is not UNSET:
            field_dict["token_id"] = token_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_category(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        category = _parse_category(d.pop("category", UNSET))

        def _parse_provider_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider_id = _parse_provider_id(d.pop("provider_id", UNSET))

        def _parse_search_query(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        search_query = _parse_search_query(d.pop("search_query", UNSET))

        def _parse_status(data: object) -> MarketStatus | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                status_type_1 = MarketStatus(data)

                return status_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(MarketStatus | None | Unset, data)

        status = _parse_status(d.pop("status", UNSET))

        def _parse_token_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        token_id = _parse_token_id(d.pop("token_id", UNSET))

        market_filters = cls(
            category=category,
            provider_id=provider_id,
            search_query=search_query,
            status=status,
            token_id=token_id,
        )

        market_filters.additional_properties = d
        return market_filters

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
