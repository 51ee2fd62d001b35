from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.candle import Candle


T = TypeVar("T", bound="OutcomeCandles")


@_attrs_define
class OutcomeCandles:
    """
    Attributes:
        candles (list[Candle]): Every bucket from the first (the one holding `start`, or the outcome's first price if
            later) to the one holding `end` (or now), ascending, none skipped.
        outcome_id (str): The outcome's id.
    """

    candles: list[Candle]
    outcome_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        candles = []
        for candles_item_data in self.candles:
            candles_item = candles_item_data.to_dict()
            candles.append(candles_item)

        outcome_id = self.outcome_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "candles": candles,
                "outcome_id": outcome_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.candle import Candle

        d = dict(src_dict)
        candles = []
        _candles = d.pop("candles")
        for candles_item_data in _candles:
            candles_item = Candle.from_dict(candles_item_data)

            candles.append(candles_item)

        outcome_id = d.pop("outcome_id")

        outcome_candles = cls(
            candles=candles,
            outcome_id=outcome_id,
        )

        outcome_candles.additional_properties = d
        return outcome_candles

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
