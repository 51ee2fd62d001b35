from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.outcome_candles import OutcomeCandles


T = TypeVar("T", bound="Candles")


@_attrs_define
class Candles:
    """
    Attributes:
        interval (str): The interval asked for.
        market_id (str): The market's id.
        outcomes (list[OutcomeCandles]): Every outcome of the market in outcome order, or the one named.
    """

    interval: str
    market_id: str
    outcomes: list[OutcomeCandles]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        interval = self.interval

        market_id = self.market_id

        outcomes = []
        for outcomes_item_data in self.outcomes:
            outcomes_item = outcomes_item_data.to_dict()
            outcomes.append(outcomes_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "interval": interval,
                "market_id": market_id,
                "outcomes": outcomes,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.outcome_candles import OutcomeCandles

        d = dict(src_dict)
        interval = d.pop("interval")

        market_id = d.pop("market_id")

        outcomes = []
        _outcomes = d.pop("outcomes")
        for outcomes_item_data in _outcomes:
            outcomes_item = OutcomeCandles.from_dict(outcomes_item_data)

            outcomes.append(outcomes_item)

        candles = cls(
            interval=interval,
            market_id=market_id,
            outcomes=outcomes,
        )

        candles.additional_properties = d
        return candles

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
