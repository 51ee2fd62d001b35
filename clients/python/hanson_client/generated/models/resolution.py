from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.market_status import MarketStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="Resolution")


@_attrs_define
class Resolution:
    """A resolved market.

    Attributes:
        dispute_window_seconds (int): The dispute window asked for, in seconds (0: final at once).
        final_at (datetime.datetime): RFC 3339 time in UTC
        market_id (str): A market.
        payout_ratio (str): What one winning share pays, a decimal string (1 unless the pool fell short).
        positions_updated (int): How many positions were settled.
        resolution_data (Any): Free-form strings the provider records with the result.
        resolved_at (datetime.datetime): RFC 3339 time in UTC
        resolver_wallet_id (str): Who resolved, as the provider names them (free text).
        status (MarketStatus): A market's status. `Closed` is never stored: it is an active market whose end has passed.
        total_pool (str): An amount in wei, or shares in share units: a decimal integer string
        winning_outcome_id (str): An outcome of a market.
        winning_pool (str): An amount in wei, or shares in share units: a decimal integer string
        resolution_source (None | str | Unset): Where the result comes from (free text, e.g. a URL).
    """

    dispute_window_seconds: int
    final_at: datetime.datetime
    market_id: str
    payout_ratio: str
    positions_updated: int
    resolution_data: Any
    resolved_at: datetime.datetime
    resolver_wallet_id: str
    status: MarketStatus
    total_pool: str
    winning_outcome_id: str
    winning_pool: str
    resolution_source: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        dispute_window_seconds = self.dispute_window_seconds

        final_at = self.final_at.isoformat()

        market_id = self.market_id

        payout_ratio = self.payout_ratio

        positions_updated = self.positions_updated

        resolution_data = self.resolution_data

        resolved_at = self.resolved_at.isoformat()

        resolver_wallet_id = self.resolver_wallet_id

        status = self.status.value

        total_pool = self.total_pool

        winning_outcome_id = self.winning_outcome_id

        winning_pool = self.winning_pool

        resolution_source: None | str | Unset
        if isinstance(self.resolution_source, Unset):
            resolution_source = UNSET
        else:
            resolution_source = self.resolution_source

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "dispute_window_seconds": dispute_window_seconds,
                "final_at": final_at,
                "market_id": market_id,
                "payout_ratio": payout_ratio,
                "positions_updated": positions_updated,
                "resolution_data": resolution_data,
                "resolved_at": resolved_at,
                "resolver_wallet_id": resolver_wallet_id,
                "status": status,
                "total_pool": total_pool,
                "winning_outcome_id": winning_outcome_id,
                "winning_pool": winning_pool,
            }
        )
        if resolution_source is not UNSET:
            field_dict["resolution_source"] = resolution_source

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        dispute_window_seconds = d.pop("dispute_window_seconds")

        final_at = datetime.datetime.fromisoformat(d.pop("final_at"))

        market_id = d.pop("market_id")

        payout_ratio = d.pop("payout_ratio")

        positions_updated = d.pop("positions_updated")

        resolution_data = d.pop("resolution_data")

        resolved_at = datetime.datetime.fromisoformat(d.pop("resolved_at"))

        resolver_wallet_id = d.pop("resolver_wallet_id")

        status = MarketStatus(d.pop("status"))

        total_pool = d.pop("total_pool")

        winning_outcome_id = d.pop("winning_outcome_id")

        winning_pool = d.pop("winning_pool")

        def _parse_resolution_source(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        resolution_source = _parse_resolution_source(d.pop("resolution_source", UNSET))

        resolution = cls(
            dispute_window_seconds=dispute_window_seconds,
            final_at=final_at,
            market_id=market_id,
            payout_ratio=payout_ratio,
            positions_updated=positions_updated,
            resolution_data=resolution_data,
            resolved_at=resolved_at,
            resolver_wallet_id=resolver_wallet_id,
            status=status,
            total_pool=total_pool,
            winning_outcome_id=winning_outcome_id,
            winning_pool=winning_pool,
            resolution_source=resolution_source,
        )

        resolution.additional_properties = d
        return resolution

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
