from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.market_header import MarketHeader
    from ..models.outcome_view import OutcomeView


T = TypeVar("T", bound="MarketCreated")


@_attrs_define
class MarketCreated:
    """
    Attributes:
        market (MarketHeader): The market fields a provider operation answers with.
        message (str): A confirmation for people.
        outcomes (list[OutcomeView]): The market's outcomes, in outcome_index order.
    """

    market: MarketHeader
    message: str
    outcomes: list[OutcomeView]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        market = self.market.to_dict()

        message = self.message

        outcomes = []
        for outcomes_item_data in self.outcomes:
            outcomes_item = outcomes_item_data.to_dict()
            outcomes.append(outcomes_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "market": market,
                "message": message,
                "outcomes": outcomes,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.market_header import MarketHeader
        from ..models.outcome_view import OutcomeView

        d = dict(src_dict)
        market = MarketHeader.from_dict(d.pop("market"))

        message = d.pop("message")

        outcomes = []
        _outcomes = d.pop("outcomes")
        for outcomes_item_data in _outcomes:
            outcomes_item = OutcomeView.from_dict(outcomes_item_data)

            outcomes.append(outcomes_item)

        market_created = cls(
            market=market,
            message=message,
            outcomes=outcomes,
        )

        market_created.additional_properties = d
        return market_created

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
