from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.position_status import PositionStatus
from ..models.position_type import PositionType
from ..types import UNSET, Unset

T = TypeVar("T", bound="HoldingsFilters")


@_attrs_define
class HoldingsFilters:
    """
    Attributes:
        market_id (None | str | Unset): The market's id.
        outcome_id (None | str | Unset): The outcome's id.
        position_type (None | PositionType | Unset): Only positions of this kind.
        status (None | PositionStatus | Unset): Only positions in this status.
    """

    market_id: None | str | Unset = UNSET
    outcome_id: None | str | Unset = UNSET
    position_type: None | PositionType | Unset = UNSET
    status: None | PositionStatus | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        market_id: None | str | Unset
        if isinstance(self.market_id, Unset):
            market_id = UNSET
        else:
            market_id = self.market_id

        outcome_id: None | str | Unset
        if isinstance(self.outcome_id, Unset):
            outcome_id = UNSET
        else:
            outcome_id = self.outcome_id

        position_type: None | str | Unset
        if isinstance(self.position_type, Unset):
            position_type = UNSET
        elif isinstance(self.position_type, PositionType):
            position_type = self.position_type.value
        else:
            position_type = self.position_type

        status: None | str | Unset
        if isinstance(self.status, Unset):
            status = UNSET
        elif isinstance(self.status, PositionStatus):
            status = self.status.value
        else:
            status = self.status

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if market_id is not UNSET:
            field_dict["market_id"] = market_id
        if outcome_id is not UNSET:
            field_dict["outcome_id"] = outcome_id
        if position_type is not UNSET:
            field_dict["position_type"] = position_type
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_market_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        market_id = _parse_market_id(d.pop("market_id", UNSET))

        def _parse_outcome_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        outcome_id = _parse_outcome_id(d.pop("outcome_id", UNSET))

        def _parse_position_type(data: object) -> None | PositionType | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                position_type_type_1 = PositionType(data)

                return position_type_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PositionType | Unset, data)

        position_type = _parse_position_type(d.pop("position_type", UNSET))

        def _parse_status(data: object) -> None | PositionStatus | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                status_type_1 = PositionStatus(data)

                return status_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PositionStatus | Unset, data)

        status = _parse_status(d.pop("status", UNSET))

        holdings_filters = cls(
            market_id=market_id,
            outcome_id=outcome_id,
            position_type=position_type,
            status=status,
        )

        holdings_filters.additional_properties = d
        return holdings_filters

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
