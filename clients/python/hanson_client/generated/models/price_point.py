from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="PricePoint")


@_attrs_define
class PricePoint:
    """One price point, or one bucket of them (its last price and summed volume), as price
    history shows it.

        Attributes:
            market_id (str): The market's id.
            outcome_id (str): The outcome's id.
            price (str): The outcome's price at that time (the last in the bucket with an interval), a decimal string in [0,
                1].
            timestamp (datetime.datetime): RFC 3339 time in UTC
            volume (str): An amount in wei, or shares in share units: a decimal integer string
    """

    market_id: str
    outcome_id: str
    price: str
    timestamp: datetime.datetime
    volume: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        market_id = self.market_id

        outcome_id = self.outcome_id

        price = self.price

        timestamp = self.timestamp.isoformat()

        volume = self.volume

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "market_id": market_id,
                "outcome_id": outcome_id,
                "price": price,
                "timestamp": timestamp,
                "volume": volume,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        market_id = d.pop("market_id")

        outcome_id = d.pop("outcome_id")

        price = d.pop("price")

        timestamp = datetime.datetime.fromisoformat(d.pop("timestamp"))

        volume = d.pop("volume")

        price_point = cls(
            market_id=market_id,
            outcome_id=outcome_id,
            price=price,
            timestamp=timestamp,
            volume=volume,
        )

        price_point.additional_properties = d
        return price_point

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
