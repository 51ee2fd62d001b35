from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Balance")


@_attrs_define
class Balance:
    """
    Attributes:
        balance (str): An amount in wei, or shares in share units: a decimal integer string
        decimals (int): Digits after the point in token units: 1 token = 10^decimals wei.
        symbol (str): The token's symbol, e.g. USDC.
        token_id (str): The token's id.
    """

    balance: str
    decimals: int
    symbol: str
    token_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        balance = self.balance

        decimals = self.decimals

        symbol = self.symbol

        token_id = self.token_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "balance": balance,
                "decimals": decimals,
                "symbol": symbol,
                "token_id": token_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        balance = d.pop("balance")

        decimals = d.pop("decimals")

        symbol = d.pop("symbol")

        token_id = d.pop("token_id")

        balance = cls(
            balance=balance,
            decimals=decimals,
            symbol=symbol,
            token_id=token_id,
        )

        balance.additional_properties = d
        return balance

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
