from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.balance import Balance


T = TypeVar("T", bound="Treasury")


@_attrs_define
class Treasury:
    """
    Attributes:
        balances (list[Balance]): One balance per token held.
        provider_id (str): A provider (tenant).
    """

    balances: list[Balance]
    provider_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        balances = []
        for balances_item_data in self.balances:
            balances_item = balances_item_data.to_dict()
            balances.append(balances_item)

        provider_id = self.provider_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "balances": balances,
                "provider_id": provider_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.balance import Balance

        d = dict(src_dict)
        balances = []
        _balances = d.pop("balances")
        for balances_item_data in _balances:
            balances_item = Balance.from_dict(balances_item_data)

            balances.append(balances_item)

        provider_id = d.pop("provider_id")

        treasury = cls(
            balances=balances,
            provider_id=provider_id,
        )

        treasury.additional_properties = d
        return treasury

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
