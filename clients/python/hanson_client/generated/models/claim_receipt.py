from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.claim_status import ClaimStatus

T = TypeVar("T", bound="ClaimReceipt")


@_attrs_define
class ClaimReceipt:
    """A claimed payout.

    Attributes:
        balance_after (str): An amount in wei, or shares in share units: a decimal integer string
        balance_before (str): An amount in wei, or shares in share units: a decimal integer string
        claim_id (str): A bet, sale or claim.
        claimed_amount (str): An amount in wei, or shares in share units: a decimal integer string
        claimed_at (datetime.datetime): RFC 3339 time in UTC
        market_id (str): A market.
        outcome_id (str): An outcome of a market.
        payout_ratio (str): What one winning share pays, a decimal string (1 unless the pool fell short).
        position_id (str): A wallet's position in one outcome.
        session_id (str): A login session.
        shares_claimed (str): An amount in wei, or shares in share units: a decimal integer string
        status (ClaimStatus): Always `completed`: a claim is recorded whole or not at all.
    """

    balance_after: str
    balance_before: str
    claim_id: str
    claimed_amount: str
    claimed_at: datetime.datetime
    market_id: str
    outcome_id: str
    payout_ratio: str
    position_id: str
    session_id: str
    shares_claimed: str
    status: ClaimStatus
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        balance_after = self.balance_after

        balance_before = self.balance_before

        claim_id = self.claim_id

        claimed_amount = self.claimed_amount

        claimed_at = self.claimed_at.isoformat()

        market_id = self.market_id

        outcome_id = self.outcome_id

        payout_ratio = self.payout_ratio

        position_id = self.position_id

        session_id = self.session_id

        shares_claimed = self.shares_claimed

        status = self.status.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "balance_after": balance_after,
                "balance_before": balance_before,
                "claim_id": claim_id,
                "claimed_amount": claimed_amount,
                "claimed_at": claimed_at,
                "market_id": market_id,
                "outcome_id": outcome_id,
                "payout_ratio": payout_ratio,
                "position_id": position_id,
                "session_id": session_id,
                "shares_claimed": shares_claimed,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        balance_after = d.pop("balance_after")

        balance_before = d.pop("balance_before")

        claim_id = d.pop("claim_id")

        claimed_amount = d.pop("claimed_amount")

        claimed_at = datetime.datetime.fromisoformat(d.pop("claimed_at"))

        market_id = d.pop("market_id")

        outcome_id = d.pop("outcome_id")

        payout_ratio = d.pop("payout_ratio")

        position_id = d.pop("position_id")

        session_id = d.pop("session_id")

        shares_claimed = d.pop("shares_claimed")

        status = ClaimStatus(d.pop("status"))

        claim_receipt = cls(
            balance_after=balance_after,
            balance_before=balance_before,
            claim_id=claim_id,
            claimed_amount=claimed_amount,
            claimed_at=claimed_at,
            market_id=market_id,
            outcome_id=outcome_id,
            payout_ratio=payout_ratio,
            position_id=position_id,
            session_id=session_id,
            shares_claimed=shares_claimed,
            status=status,
        )

        claim_receipt.additional_properties = d
        return claim_receipt

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
