from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="LeaderboardRow")


@_attrs_define
class LeaderboardRow:
    """One row of a leaderboard.

    Attributes:
        profit (str): A signed amount in wei: a decimal integer string
        rank (int): 1 for the first; ties are ordered by `wallet_id` and still get distinct ranks.
        trades (int): How many trades the wallet made.
        volume (str): An amount in wei, or shares in share units: a decimal integer string
        wallet_address (str): The wallet's address (EVM: 0x + 40 hex digits).
        wallet_id (str): A wallet (one per provider and address).
    """

    profit: str
    rank: int
    trades: int
    volume: str
    wallet_address: str
    wallet_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        profit = self.profit

        rank = self.rank

        trades = self.trades

        volume = self.volume

        wallet_address = self.wallet_address

        wallet_id = self.wallet_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "profit": profit,
                "rank": rank,
                "trades": trades,
                "volume": volume,
                "wallet_address": wallet_address,
                "wallet_id": wallet_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        profit = d.pop("profit")

        rank = d.pop("rank")

        trades = d.pop("trades")

        volume = d.pop("volume")

        wallet_address = d.pop("wallet_address")

        wallet_id = d.pop("wallet_id")

        leaderboard_row = cls(
            profit=profit,
            rank=rank,
            trades=trades,
            volume=volume,
            wallet_address=wallet_address,
            wallet_id=wallet_id,
        )

        leaderboard_row.additional_properties = d
        return leaderboard_row

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
