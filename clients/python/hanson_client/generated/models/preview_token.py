from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="PreviewToken")


@_attrs_define
class PreviewToken:
    """The token a preview is denominated in.

    Attributes:
        decimals (int): Digits after the point in token units: 1 token = 10^decimals wei.
        id (str): The token's id.
        symbol (str): The token's symbol, e.g. USDC.
    """

    decimals: int
    id: str
    symbol: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        decimals = self.decimals

        id = self.id

        symbol = self.symbol

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "decimals": decimals,
                "id": id,
                "symbol": symbol,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        decimals = d.pop("decimals")

        id = d.pop("id")

        symbol = d.pop("symbol")

        preview_token = cls(
            decimals=decimals,
            id=id,
            symbol=symbol,
        )

        preview_token.additional_properties = d
        return preview_token

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
