from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Candle")


@_attrs_define
class Candle:
    """One bucket of an outcome's prices.

    Attributes:
        close (str): The last price at or before the bucket's end.
        high (str): The highest of `open` and every price in the bucket.
        low (str): The lowest of `open` and every price in the bucket.
        open_ (str): The last price before the bucket (in the bucket where the series starts, its first price).
        start (datetime.datetime): RFC 3339 time in UTC
        trades (int): How many of the outcome's own trades the bucket holds.
        volume (str): An amount in wei, or shares in share units: a decimal integer string
    """

    close: str
    high: str
    low: str
    open_: str
    start: datetime.datetime
    trades: int
    volume: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        close = self.close

        high = self.high

        low = self.low

        open_ = self.open_

        start = self.start.isoformat()

        trades = self.trades

        volume = self.volume

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "close": close,
                "high": high,
                "low": low,
                "open": open_,
                "start": start,
                "trades": trades,
                "volume": volume,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        close = d.pop("close")

        high = d.pop("high")

        low = d.pop("low")

        open_ = d.pop("open")

        start = datetime.datetime.fromisoformat(d.pop("start"))

        trades = d.pop("trades")

        volume = d.pop("volume")

        candle = cls(
            close=close,
            high=high,
            low=low,
            open_=open_,
            start=start,
            trades=trades,
            volume=volume,
        )

        candle.additional_properties = d
        return candle

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
