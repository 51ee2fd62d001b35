from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.market_status import MarketStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.images import Images
    from ..models.metadata import Metadata
    from ..models.outcome_detail import OutcomeDetail
    from ..models.provider_ref import ProviderRef
    from ..models.token import Token


T = TypeVar("T", bound="MarketDetail")


@_attrs_define
class MarketDetail:
    """Market detail: every summary field (outcomes with their volume, the token with its
    decimals) plus the kept creation fields.

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
            b (str): An amount in wei, or shares in share units: a decimal integer string
            creator_fee_percentage (float): A percentage with at most 4 decimal places
            creator_wallet_id (str): A wallet (one per provider and address).
            ends_at (datetime.datetime): RFC 3339 time in UTC
            images (Images): Image URLs by name, e.g. {"logo": "https://..."}.
            liquidity (str): An amount in wei, or shares in share units: a decimal integer string
            max_bet_amount (str): An amount in wei, or shares in share units: a decimal integer string
            metadata (Metadata): Free-form JSON. `category` and `resolution_source`, when given, are strings; markets are
                searched by `category`.
            min_bet_amount (str): An amount in wei, or shares in share units: a decimal integer string
            minimum_bet (str): An amount in wei, or shares in share units: a decimal integer string
            outcomes (list[OutcomeDetail]): The market's outcomes, in outcome_index order.
            platform_fee_percentage (float): A percentage with at most 4 decimal places
            pricing_method (str): How prices are made: lmsr, the only one.
            resolution_pending (bool): True while a resolution waits out its dispute window: claims wait until final_at.
            starts_at (datetime.datetime): RFC 3339 time in UTC
            tags (list[str]): The market's tags.
            token (Token):
            updated_at (datetime.datetime): RFC 3339 time in UTC
            category (None | str | Unset): The market's category (metadata.category).
            paused_at (datetime.datetime | None | Unset): When trading was paused; null if it is not paused.
            paused_reason (None | str | Unset): The provider's reason for the pause; null when not paused.
            cancelled_at (datetime.datetime | None | Unset): When the market was cancelled; null if it was not.
            final_at (datetime.datetime | None | Unset): When the market's result became final (after its dispute window);
                null before.
            game_id (None | str | Unset): The provider's own reference for the market (free text).
            resolution_source (None | str | Unset): Where the result comes from (free text, e.g. a URL).
            resolved_at (datetime.datetime | None | Unset): When the market was resolved; null if it was not.
            winning_outcome_id (None | str | Unset): The outcome that won; null until the market is resolved.
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
    b: str
    creator_fee_percentage: float
    creator_wallet_id: str
    ends_at: datetime.datetime
    images: Images
    liquidity: str
    max_bet_amount: str
    metadata: Metadata
    min_bet_amount: str
    minimum_bet: str
    outcomes: list[OutcomeDetail]
    platform_fee_percentage: float
    pricing_method: str
    resolution_pending: bool
    starts_at: datetime.datetime
    tags: list[str]
    token: Token
    updated_at: datetime.datetime
    category: None | str | Unset = UNSET
    paused_at: datetime.datetime | None | Unset = UNSET
    paused_reason: None | str | Unset = UNSET
    cancelled_at: datetime.datetime | None | Unset = UNSET
    final_at: datetime.datetime | None | Unset = UNSET
    game_id: None | str | Unset = UNSET
    resolution_source: None | str | Unset = UNSET
    resolved_at: datetime.datetime | None | Unset = UNSET
    winning_outcome_id: None | str | Unset = UNSET
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

        b = self.b

        creator_fee_percentage = self.creator_fee_percentage

        creator_wallet_id = self.creator_wallet_id

        ends_at = self.ends_at.isoformat()

        images = self.images.to_dict()

        liquidity = self.liquidity

        max_bet_amount = self.max_bet_amount

        metadata = self.metadata.to_dict()

        min_bet_amount = self.min_bet_amount

        minimum_bet = self.minimum_bet

        outcomes = []
        for outcomes_item_data in self.outcomes:
            outcomes_item = outcomes_item_data.to_dict()
            outcomes.append(outcomes_item)

        platform_fee_percentage = self.platform_fee_percentage

        pricing_method = self.pricing_method

        resolution_pending = self.resolution_pending

        starts_at = self.starts_at.isoformat()

        tags = self.tags

        token = self.token.to_dict()

        updated_at = self.updated_at.isoformat()

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

        cancelled_at: None | str | Unset
        if isinstance(self.cancelled_at, Unset):
            cancelled_at = UNSET
        elif isinstance(self.cancelled_at, datetime.datetime):
            cancelled_at = self.cancelled_at.isoformat()
        else:
            cancelled_at = self.cancelled_at

        final_at: None | str | Unset
        if isinstance(self.final_at, Unset):
            final_at = UNSET
        elif isinstance(self.final_at, datetime.datetime):
            final_at = self.final_at.isoformat()
        else:
            final_at = self.final_at

        game_id: None | str | Unset
        if isinstance(self.game_id, Unset):
            game_id = UNSET
        else:
            game_id = self.game_id

        resolution_source: None | str | Unset
        if isinstance(self.resolution_source, Unset):
            resolution_source = UNSET
        else:
            resolution_source = self.resolution_source

        resolved_at: None | str | Unset
        if isinstance(self.resolved_at, Unset):
            resolved_at = UNSET
        elif isinstance(self.resolved_at, datetime.datetime):
            resolved_at = self.resolved_at.isoformat()
        else:
            resolved_at = self.resolved_at

        winning_outcome_id: None | str | Unset
        if isinstance(self.winning_outcome_id, Unset):
            winning_outcome_id = UNSET
        else:
            winning_outcome_id = self.winning_outcome_id

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
                "b": b,
                "creator_fee_percentage": creator_fee_percentage,
                "creator_wallet_id": creator_wallet_id,
                "ends_at": ends_at,
                "images": images,
                "liquidity": liquidity,
                "max_bet_amount": max_bet_amount,
                "metadata": metadata,
                "min_bet_amount": min_bet_amount,
                "minimum_bet": minimum_bet,
                "outcomes": outcomes,
                "platform_fee_percentage": platform_fee_percentage,
                "pricing_method": pricing_method,
                "resolution_pending": resolution_pending,
                "starts_at": starts_at,
                "tags": tags,
                "token": token,
                "updated_at": updated_at,
            }
        )
        if category is not UNSET:
            field_dict["category"] = category
        if paused_at is not UNSET:
            field_dict["paused_at"] = paused_at
        if paused_reason is not UNSET:
            field_dict["paused_reason"] = paused_reason
        if cancelled_at is not UNSET:
            field_dict["cancelled_at"] = cancelled_at
        if final_at is not UNSET:
            field_dict["final_at"] = final_at
        if game_id is not UNSET:
            field_dict["game_id"] = game_id
        if resolution_source is not UNSET:
            field_dict["resolution_source"] = resolution_source
        if resolved_at is not UNSET:
            field_dict["resolved_at"] = resolved_at
        if winning_outcome_id is not UNSET:
            field_dict["winning_outcome_id"] = winning_outcome_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.images import Images
        from ..models.metadata import Metadata
        from ..models.outcome_detail import OutcomeDetail
        from ..models.provider_ref import ProviderRef
        from ..models.token import Token

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

        b = d.pop("b")

        creator_fee_percentage = d.pop("creator_fee_percentage")

        creator_wallet_id = d.pop("creator_wallet_id")

        ends_at = datetime.datetime.fromisoformat(d.pop("ends_at"))

        images = Images.from_dict(d.pop("images"))

        liquidity = d.pop("liquidity")

        max_bet_amount = d.pop("max_bet_amount")

        metadata = Metadata.from_dict(d.pop("metadata"))

        min_bet_amount = d.pop("min_bet_amount")

        minimum_bet = d.pop("minimum_bet")

        outcomes = []
        _outcomes = d.pop("outcomes")
        for outcomes_item_data in _outcomes:
            outcomes_item = OutcomeDetail.from_dict(outcomes_item_data)

            outcomes.append(outcomes_item)

        platform_fee_percentage = d.pop("platform_fee_percentage")

        pricing_method = d.pop("pricing_method")

        resolution_pending = d.pop("resolution_pending")

        starts_at = datetime.datetime.fromisoformat(d.pop("starts_at"))

        tags = cast(list[str], d.pop("tags"))

        token = Token.from_dict(d.pop("token"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

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

        def _parse_cancelled_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                cancelled_at_type_1 = datetime.datetime.fromisoformat(data)

                return cancelled_at_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        cancelled_at = _parse_cancelled_at(d.pop("cancelled_at", UNSET))

        def _parse_final_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                final_at_type_1 = datetime.datetime.fromisoformat(data)

                return final_at_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        final_at = _parse_final_at(d.pop("final_at", UNSET))

        def _parse_game_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        game_id = _parse_game_id(d.pop("game_id", UNSET))

        def _parse_resolution_source(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        resolution_source = _parse_resolution_source(d.pop("resolution_source", UNSET))

        def _parse_resolved_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                resolved_at_type_1 = datetime.datetime.fromisoformat(data)

                return resolved_at_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        resolved_at = _parse_resolved_at(d.pop("resolved_at", UNSET))

        def _parse_winning_outcome_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        winning_outcome_id = _parse_winning_outcome_id(
            d.pop("winning_outcome_id", UNSET)
        )

        market_detail = cls(
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
            b=b,
            creator_fee_percentage=creator_fee_percentage,
            creator_wallet_id=creator_wallet_id,
            ends_at=ends_at,
            images=images,
            liquidity=liquidity,
            max_bet_amount=max_bet_amount,
            metadata=metadata,
            min_bet_amount=min_bet_amount,
            minimum_bet=minimum_bet,
            outcomes=outcomes,
            platform_fee_percentage=platform_fee_percentage,
            pricing_method=pricing_method,
            resolution_pending=resolution_pending,
            starts_at=starts_at,
            tags=tags,
            token=token,
            updated_at=updated_at,
            category=category,
            paused_at=paused_at,
            paused_reason=paused_reason,
            cancelled_at=cancelled_at,
            final_at=final_at,
            game_id=game_id,
            resolution_source=resolution_source,
            resolved_at=resolved_at,
            winning_outcome_id=winning_outcome_id,
        )

        market_detail.additional_properties = d
        return market_detail

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
