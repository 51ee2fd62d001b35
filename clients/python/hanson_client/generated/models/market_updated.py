from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.market_header import MarketHeader


T = TypeVar("T", bound="MarketUpdated")


@_attrs_define
class MarketUpdated:
    """
    Attributes:
        market (MarketHeader): The market fields a provider operation answers with.
        message (str): A confirmation for people.
    """

    market: MarketHeader
    message: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        market = self.market.to_dict()

        message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "market": market,
                "message": message,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.market_header import MarketHeader

        d = dict(src_dict)
        market = MarketHeader.from_dict(d.pop("market"))

        message = d.pop("message")

        market_updated = cls(
            market=market,
            message=message,
        )

        market_updated.additional_properties = d
        return market_updated

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
