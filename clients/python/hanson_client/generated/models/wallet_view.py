from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.balance import Balance


T = TypeVar("T", bound="WalletView")


@_attrs_define
class WalletView:
    """A wallet and its balances, as its provider looks it up.

    Attributes:
        balances (list[Balance]): One balance per token held.
        wallet_address (str): The wallet's address (EVM: 0x + 40 hex digits).
        wallet_id (str): A wallet (one per provider and address).
        wallet_type (str): evm or an alt network.
    """

    balances: list[Balance]
    wallet_address: str
    wallet_id: str
    wallet_type: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        balances = []
        for balances_item_data in self.balances:
            balances_item = balances_item_data.to_dict()
            balances.append(balances_item)

        wallet_address = self.wallet_address

        wallet_id = self.wallet_id

        wallet_type = self.wallet_type

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "balances": balances,
                "wallet_address": wallet_address,
                "wallet_id": wallet_id,
                "wallet_type": wallet_type,
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

        wallet_address = d.pop("wallet_address")

        wallet_id = d.pop("wallet_id")

        wallet_type = d.pop("wallet_type")

        wallet_view = cls(
            balances=balances,
            wallet_address=wallet_address,
            wallet_id=wallet_id,
            wallet_type=wallet_type,
        )

        wallet_view.additional_properties = d
        return wallet_view

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
