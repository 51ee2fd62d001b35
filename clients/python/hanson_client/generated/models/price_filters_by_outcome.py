from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="PriceFiltersByOutcome")


@_attrs_define
class PriceFiltersByOutcome:
    """An outcome's price history.

    Attributes:
        outcome_id (str): The outcome's id.
        from_date (datetime.datetime | None | Unset): From this time, inclusive.
        interval (None | str | Unset): 1m, 5m, 15m, 1h, 4h or 1d: one point per bucket; absent: raw points.
        market_id (None | str | Unset): The market's id.
        to_date (datetime.datetime | None | Unset): Up to this time, inclusive.
    """

    outcome_id: str
    from_date: datetime.datetime | None | Unset = UNSET
    interval: None | str | Unset = UNSET
    market_id: None | str | Unset = UNSET
    to_date: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        outcome_id = self.outcome_id

        from_date: None | str | Unset
        if isinstance(self.from_date, Unset):
            from_date = UNSET
        elif isinstance(self.from_date, datetime.datetime):
            from_date = self.from_date.isoformat()
        else:
            from_date = self.from_date

        interval: None | str | Unset
        if isinstance(self.interval, Unset):
            interval = UNSET
        else:
            interval = self.interval

        market_id: None | str | Unset
        if isinstance(self.market_id, Unset):
            market_id = UNSET
        else:
            market_id = self.market_id

        to_date: None | str | Unset
        if isinstance(self.to_date, Unset):
            to_date = UNSET
        elif isinstance(self.to_date, datetime.datetime):
            to_date = self.to_date.isoformat()
        else:
            to_date = self.to_date

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "outcome_id": outcome_id,
            }
        )
        if from_date is not UNSET:
            field_dict["from_date"] = from_date
        if interval is not UNSET:
            field_dict["interval"] = interval
        if market_id is not UNSET:
            field_dict["market_id"] = market_id
        if to_date is not UNSET:
            field_dict["to_date"] = to_date

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        outcome_id = d.pop("outcome_id")

        def _parse_from_date(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                from_date_type_1 = datetime.datetime.fromisoformat(data)

                return from_date_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        from_date = _parse_from_date(d.pop("from_date", UNSET))

        def _parse_interval(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        interval = _parse_interval(d.pop("interval", UNSET))

        def _parse_market_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        market_id = _parse_market_id(d.pop("market_id", UNSET))

        def _parse_to_date(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                to_date_type_1 = datetime.datetime.fromisoformat(data)

                return to_date_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        to_date = _parse_to_date(d.pop("to_date", UNSET))

        price_filters_by_outcome = cls(
            outcome_id=outcome_id,
            from_date=from_date,
            interval=interval,
            market_id=market_id,
            to_date=to_date,
        )

        price_filters_by_outcome.additional_properties = d
        return price_filters_by_outcome

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
