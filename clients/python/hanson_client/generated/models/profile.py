from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.balance import Balance


T = TypeVar("T", bound="Profile")


@_attrs_define
class Profile:
    """The logged-in wallet, its session and balances.

    Attributes:
        balances (list[Balance]): One balance per token held.
        created_at (datetime.datetime): RFC 3339 time in UTC
        provider_id (str): A provider (tenant).
        session_id (str): A login session.
        wallet_address (str): The wallet's address (EVM: 0x + 40 hex digits).
        wallet_id (str): A wallet (one per provider and address).
        wallet_type (str): evm or an alt network.
        alt_evm_address (None | str | Unset): For an alt-network login: the EVM address the account is linked to;
            otherwise null.
    """

    balances: list[Balance]
    created_at: datetime.datetime
    provider_id: str
    session_id: str
    wallet_address: str
    wallet_id: str
    wallet_type: str
    alt_evm_address: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        balances = []
        for balances_item_data in self.balances:
            balances_item = balances_item_data.to_dict()
            balances.append(balances_item)

        created_at = self.created_at.isoformat()

        provider_id = self.provider_id

        session_id = self.session_id

        wallet_address = self.wallet_address

        wallet_id = self.wallet_id

        wallet_type = self.wallet_type

        alt_evm_address: None | str | Unset
        if isinstance(self.alt_evm_address, Unset):
            alt_evm_address = UNSET
        else:
            alt_evm_address = self.alt_evm_address

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "balances": balances,
                "created_at": created_at,
                "provider_id": provider_id,
                "session_id": session_id,
                "wallet_address": wallet_address,
                "wallet_id": wallet_id,
                "wallet_type": wallet_type,
            }
        )
        if alt_evm_address is not UNSET:
            field_dict["alt_evm_address"] = alt_evm_address

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

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        provider_id = d.pop("provider_id")

        session_id = d.pop("session_id")

        wallet_address = d.pop("wallet_address")

        wallet_id = d.pop("wallet_id")

        wallet_type = d.pop("wallet_type")

        def _parse_alt_evm_address(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        alt_evm_address = _parse_alt_evm_address(d.pop("alt_evm_address", UNSET))

        profile = cls(
            balances=balances,
            created_at=created_at,
            provider_id=provider_id,
            session_id=session_id,
            wallet_address=wallet_address,
            wallet_id=wallet_id,
            wallet_type=wallet_type,
            alt_evm_address=alt_evm_address,
        )

        profile.additional_properties = d
        return profile

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
