from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="WalletTransfer")


@_attrs_define
class WalletTransfer:
    """A deposit into, or a withdrawal from, a wallet.

    Attributes:
        amount (str): An amount in wei, or shares in share units: a decimal integer string
        balance_after (str): An amount in wei, or shares in share units: a decimal integer string
        created_at (datetime.datetime): RFC 3339 time in UTC
        reference (str): The provider's reference for the transfer (unique per provider).
        token_id (str): The token's id.
        id (str): The transfer's id.
        wallet_address (str): The wallet's address (EVM: 0x + 40 hex digits).
        wallet_id (str): The wallet's id.
    """

    amount: str
    balance_after: str
    created_at: datetime.datetime
    reference: str
    token_id: str
    id: str
    wallet_address: str
    wallet_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        balance_after = self.balance_after

        created_at = self.created_at.isoformat()

        reference = self.reference

        token_id = self.token_id

        id = self.id

        wallet_address = self.wallet_address

        wallet_id = self.wallet_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "amount": amount,
                "balance_after": balance_after,
                "created_at": created_at,
                "reference": reference,
                "token_id": token_id,
                "id": id,
                "wallet_address": wallet_address,
                "wallet_id": wallet_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        amount = d.pop("amount")

        balance_after = d.pop("balance_after")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        reference = d.pop("reference")

        token_id = d.pop("token_id")

        id = d.pop("id")

        wallet_address = d.pop("wallet_address")

        wallet_id = d.pop("wallet_id")

        wallet_transfer = cls(
            amount=amount,
            balance_after=balance_after,
            created_at=created_at,
            reference=reference,
            token_id=token_id,
            id=id,
            wallet_address=wallet_address,
            wallet_id=wallet_id,
        )

        wallet_transfer.additional_properties = d
        return wallet_transfer

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
