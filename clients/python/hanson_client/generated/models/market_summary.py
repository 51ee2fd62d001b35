from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.market_status import MarketStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.outcome_view import OutcomeView
    from ..models.provider_ref import ProviderRef
    from ..models.token_ref import TokenRef


T = TypeVar("T", bound="MarketSummary")


@_attrs_define
class MarketSummary:
    """A market as search results show it.

    Attributes:
        closes_at (datetime.datetime): RFC 3339 time in UTC
        created_at (datetime.datetime): RFC 3339 time in UTC
        description (str): The market's description: what it is about and how it resolves.
        id (str): A market.
        provider (ProviderRef):
        question (str): The market's question.
        status (MarketStatus): A market's status. `Closed` is never stored: it is an active market whose end has passed.
        total_pool (str): An amount in wei, or shares in share units: a decimal integer string
        total_volume (str): An amount in wei, or shares in share units: a decimal integer string
        trading_paused (bool): Whether the provider has paused trading: bets, sells and their previews answer 409
            market_paused until it resumes (or settles the market).
        outcomes (list[OutcomeView]): The market's outcomes, in outcome_index order.
        token (TokenRef):
        category (None | str | Unset): The market's category (metadata.category).
        paused_at (datetime.datetime | None | Unset): When trading was paused; null if it is not paused.
        paused_reason (None | str | Unset): The provider's reason for the pause; null when not paused.
    """

    closes_at: datetime.datetime
    created_at: datetime.datetime
    description: str
    id: str
    provider: ProviderRef
    question: str
    status: MarketStatus
    total_pool: str
    total_volume: str
    trading_paused: bool
    outcomes: list[OutcomeView]
    token: TokenRef
    category: None | str | Unset = UNSET
    paused_at: datetime.datetime | None | Unset = UNSET
    paused_reason: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        closes_at = self.closes_at.isoformat()

        created_at = self.created_at.isoformat()

        description = self.description

        id = self.id

        provider = self.provider.to_dict()

        question = self.question

        status = self.status.value

        total_pool = self.total_pool

        total_volume = self.total_volume

        trading_paused = self.trading_paused

        outcomes = []
        for outcomes_item_data in self.outcomes:
            outcomes_item = outcomes_item_data.to_dict()
            outcomes.append(outcomes_item)

        token = self.token.to_dict()

        category: None | str | Unset
        if isinstance(self.category, Unset):
            category = UNSET
        else:
            category = self.category

        paused_at: None | str | Unset
        if isinstance(self.paused_at, Unset):
            paused_at = UNSET
        elif isinstance(self.paused_at, datetime.datetime):
            paused_at = self.paused_at.isoformat()
        else:
            paused_at = self.paused_at

        paused_reason: None | str | Unset
        if isinstance(self.paused_reason, Unset):
            paused_reason = UNSET
        else:
            paused_reason = self.paused_reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "closes_at": closes_at,
                "created_at": created_at,
                "description": description,
                "id": id,
                "provider": provider,
                "question": question,
                "status": status,
                "total_pool": total_pool,
                "total_volume": total_volume,
                "trading_paused": trading_paused,
                "outcomes": outcomes,
                "token": token,
            }
        )
        if category is not UNSET:
            field_dict["category"] = category
        if paused_at is not UNSET:
            field_dict["paused_at"] = paused_at
        if paused_reason is not UNSET:
            field_dict["paused_reason"] = paused_reason

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.outcome_view import OutcomeView
        from ..models.provider_ref import ProviderRef
        from ..models.token_ref import TokenRef

        d = dict(src_dict)
        closes_at = datetime.datetime.fromisoformat(d.pop("closes_at"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        description = d.pop("description")

        id = d.pop("id")

        provider = ProviderRef.from_dict(d.pop("provider"))

        question = d.pop("question")

        status = MarketStatus(d.pop("status"))

        total_pool = d.pop("total_pool")

        total_volume = d.pop("total_volume")

        trading_paused = d.pop("trading_paused")

        outcomes = []
        _outcomes = d.pop("outcomes")
        for outcomes_item_data in _outcomes:
            outcomes_item = OutcomeView.from_dict(outcomes_item_data)

            outcomes.append(outcomes_item)

        token = TokenRef.from_dict(d.pop("token"))

        def _parse_category(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        category = _parse_category(d.pop("category", UNSET))

        def _parse_paused_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                paused_at_type_1 = datetime.datetime.fromisoformat(data)

                return paused_at_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        paused_at = _parse_paused_at(d.pop("paused_at", UNSET))

        def _parse_paused_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        paused_reason = _parse_paused_reason(d.pop("paused_reason", UNSET))

        market_summary = cls(
            closes_at=closes_at,
            created_at=created_at,
            description=description,
            id=id,
            provider=provider,
            question=question,
            status=status,
            total_pool=total_pool,
            total_volume=total_volume,
            trading_paused=trading_paused,
            outcomes=outcomes,
            token=token,
            category=category,
            paused_at=paused_at,
            paused_reason=paused_reason,
        )

        market_summary.additional_properties = d
        return market_summary

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
