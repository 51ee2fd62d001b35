from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.trade_kind import TradeKind
from ..types import UNSET, Unset

T = TypeVar("T", bound="TradeFilters")


@_attrs_define
class TradeFilters:
    """
    Attributes:
        from_date (datetime.datetime | None | Unset): From this time, inclusive.
        market_id (None | str | Unset): The market's id.
        outcome_id (None | str | Unset): The outcome's id.
        to_date (datetime.datetime | None | Unset): Up to this time, inclusive.
        transaction_type (None | TradeKind | Unset): buy or sell.
        wallet_address (None | str | Unset): The wallet's address (EVM: 0x + 40 hex digits).
    """

    from_date: datetime.datetime | None | Unset = UNSET
    market_id: None | str | Unset = UNSET
    outcome_id: None | str | Unset = UNSET
    to_date: datetime.datetime | None | Unset = UNSET
    transaction_type: None | TradeKind | Unset = UNSET
    wallet_address: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from_date: None | str | Unset
        if isinstance(self.from_date, Unset):
            from_date = UNSET
        elif isinstance(self.from_date, datetime.datetime):
            from_date = self.from_date.isoformat()
        else:
            from_date = self.from_date

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

        to_date: None | str | Unset
        if isinstance(self.to_date, Unset):
            to_date = UNSET
        elif isinstance(self.to_date, datetime.datetime):
            to_date = self.to_date.isoformat()
        else:
            to_date = self.to_date

        transaction_type: None | str | Unset
        if isinstance(self.transaction_type, Unset):
            transaction_type = UNSET
        elif isinstance(self.transaction_type, TradeKind):
            transaction_type = self.transaction_type.value
        else:
            transaction_type = self.transaction_type

        wallet_address: None | str | Unset
        if isinstance(self.wallet_address, Unset):
            wallet_address = UNSET
        else:
            wallet_address = self.wallet_address

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if from_date is not UNSET:
            field_dict["from_date"] = from_date
        if market_id is not UNSET:
            field_dict["market_id"] = market_id
        if outcome_id is not UNSET:
            field_dict["outcome_id"] = outcome_id
        if to_date is not UNSET:
            field_dict["to_date"] = to_date
        if transaction_type is not UNSET:
            field_dict["transaction_type"] = transaction_type
        if wallet_address is not UNSET:
            field_dict["wallet_address"] = wallet_address

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

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

        def _parse_transaction_type(data: object) -> None | TradeKind | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                transaction_type_type_1 = TradeKind(data)

                return transaction_type_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TradeKind | Unset, data)

        transaction_type = _parse_transaction_type(d.pop("transaction_type", UNSET))

        def _parse_wallet_address(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        wallet_address = _parse_wallet_address(d.pop("wallet_address", UNSET))

        trade_filters = cls(
            from_date=from_date,
            market_id=market_id,
            outcome_id=outcome_id,
            to_date=to_date,
            transaction_type=transaction_type,
            wallet_address=wallet_address,
        )

        trade_filters.additional_properties = d
        return trade_filters

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
