from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.images import Images
    from ..models.metadata import Metadata
    from ..models.outcome_input import OutcomeInput


T = TypeVar("T", bound="CreateMarketInput")


@_attrs_define
class CreateMarketInput:
    """
    Attributes:
        creator_wallet_id (str): The wallet that earns the creator fee.
        ends_at (datetime.datetime): RFC 3339 time in UTC
        liquidity (str): An amount in wei greater than 0: a decimal integer string without sign, point, exponent or
            leading zeros, at most 10^36
        outcomes (list[OutcomeInput] | None): The market's outcomes, in outcome_index order.
        question (str): Not blank.
        token_id (str): The token's id.
        creator_fee_percentage (float | None | Unset): The creator's fee, percent of each trade's gross amount (at most
            4 decimals; with the platform fee at most 50).
        description (None | str | Unset): What the market is about and how it resolves.
        game_id (None | str | Unset): The provider's own reference for the market (free text).
        images (Images | None | Unset): Image URLs by name.
        max_bet_amount (None | str | Unset): The largest gross bet amount accepted, in wei (inclusive).
        metadata (Metadata | None | Unset): Free-form strings: category, resolution_source and any of the provider's
            own.
        min_bet_amount (None | str | Unset): The smallest gross bet amount accepted, in wei (inclusive).
        platform_fee_percentage (float | None | Unset): The platform's fee, percent of each trade's gross amount (at
            most 4 decimals).
        pricing_method (None | str | Unset): `lmsr`, the only method.
        starts_at (datetime.datetime | None | Unset): When trading opens.
        tags (list[str] | None | Unset): At most 50 tags of at most 100 characters each.
    """

    creator_wallet_id: str
    ends_at: datetime.datetime
    liquidity: str
    outcomes: list[OutcomeInput] | None
    question: str
    token_id: str
    creator_fee_percentage: float | None | Unset = UNSET
    description: None | str | Unset = UNSET
    game_id: None | str | Unset = UNSET
    images: Images | None | Unset = UNSET
    max_bet_amount: None | str | Unset = UNSET
    metadata: Metadata | None | Unset = UNSET
    min_bet_amount: None | str | Unset = UNSET
    platform_fee_percentage: float | None | Unset = UNSET
    pricing_method: None | str | Unset = UNSET
    starts_at: datetime.datetime | None | Unset = UNSET
    tags: list[str] | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.images import Images
        from ..models.metadata import Metadata

        creator_wallet_id = self.creator_wallet_id

        ends_at = self.ends_at.isoformat()

        liquidity = self.liquidity

        outcomes: list[dict[str, Any]] | None
        if isinstance(self.outcomes, list):
            outcomes = []
            for outcomes_type_0_item_data in self.outcomes:
                outcomes_type_0_item = outcomes_type_0_item_data.to_dict()
                outcomes.append(outcomes_type_0_item)

        else:
            outcomes = self.outcomes

        question = self.question

        token_id = self.token_id

        creator_fee_percentage: float | None | Unset
        if isinstance(self.creator_fee_percentage, Unset):
            creator_fee_percentage = UNSET
        else:
            creator_fee_percentage = self.creator_fee_percentage

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        game_id: None | str | Unset
        if isinstance(self.game_id, Unset):
            game_id = UNSET
        else:
            game_id = self.game_id

        images: dict[str, Any] | None | Unset
        if isinstance(self.images, Unset):
            images = UNSET
        elif isinstance(self.images, Images):
            images = self.images.to_dict()
        else:
            images = self.images

        max_bet_amount: None | str | Unset
        if isinstance(self.max_bet_amount, Unset):
            max_bet_amount = UNSET
        else:
            max_bet_amount = self.max_bet_amount

        metadata: dict[str, Any] | None | Unset
        if isinstance(self.metadata, Unset):
            metadata = UNSET
        elif isinstance(self.metadata, Metadata):
            metadata = self.metadata.to_dict()
        else:
            metadata = self.metadata

        min_bet_amount: None | str | Unset
        if isinstance(self.min_bet_amount, Unset):
            min_bet_amount = UNSET
        else:
            min_bet_amount = self.min_bet_amount

        platform_fee_percentage: float | None | Unset
        if isinstance(self.platform_fee_percentage, Unset):
            platform_fee_percentage = UNSET
        else:
            platform_fee_percentage = self.platform_fee_percentage

        pricing_method: None | str | Unset
        if isinstance(self.pricing_method, Unset):
            pricing_method = UNSET
        else:
            pricing_method = self.pricing_method

        starts_at: None | str | Unset
        if isinstance(self.starts_at, Unset):
            starts_at = UNSET
        elif isinstance(self.starts_at, datetime.datetime):
            starts_at = self.starts_at.isoformat()
        else:
            starts_at = self.starts_at

        tags: list[str] | None | Unset
        if isinstance(self.tags, Unset):
            tags = UNSET
        elif isinstance(self.tags, list):
            tags = self.tags

        else:
            tags = self.tags

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "creator_wallet_id": creator_wallet_id,
                "ends_at": ends_at,
                "liquidity": liquidity,
                "outcomes": outcomes,
                "question": question,
                "token_id": token_id,
            }
        )
        if creator_fee_percentage is not UNSET:
            field_dict["creator_fee_percentage"] = creator_fee_percentage
        if description is not UNSET:
            field_dict["description"] = description
        if game_id is not UNSET:
            field_dict["game_id"] = game_id
        if images is not UNSET:
            field_dict["images"] = images
        if max_bet_amount is not UNSET:
            field_dict["max_bet_amount"] = max_bet_amount
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if min_bet_amount is not UNSET:
            field_dict["min_bet_amount"] = min_bet_amount
        if platform_fee_percentage is not UNSET:
            field_dict["platform_fee_percentage"] = platform_fee_percentage
        if pricing_method is not UNSET:
            field_dict["pricing_method"] = pricing_method
        if starts_at is not UNSET:
            field_dict["starts_at"] = starts_at
        if tags is not UNSET:
            field_dict["tags"] = tags

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.images import Images
        from ..models.metadata import Metadata
        from ..models.outcome_input import OutcomeInput

        d = dict(src_dict)
        creator_wallet_id = d.pop("creator_wallet_id")

        ends_at = datetime.datetime.fromisoformat(d.pop("ends_at"))

        liquidity = d.pop("liquidity")

        def _parse_outcomes(data: object) -> list[OutcomeInput] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                outcomes_type_0 = []
                _outcomes_type_0 = data
                for outcomes_type_0_item_data in _outcomes_type_0:
                    outcomes_type_0_item = OutcomeInput.from_dict(
                        outcomes_type_0_item_data
                    )

                    outcomes_type_0.append(outcomes_type_0_item)

                return outcomes_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[OutcomeInput] | None, data)

        outcomes = _parse_outcomes(d.pop("outcomes"))

        question = d.pop("question")

        token_id = d.pop("token_id")

        def _parse_creator_fee_percentage(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        creator_fee_percentage = _parse_creator_fee_percentage(
            d.pop("creator_fee_percentage", UNSET)
        )

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        def _parse_game_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        game_id = _parse_game_id(d.pop("game_id", UNSET))

        def _parse_images(data: object) -> Images | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                images_type_1 = Images.from_dict(data)

                return images_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Images | None | Unset, data)

        images = _parse_images(d.pop("images", UNSET))

        def _parse_max_bet_amount(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        max_bet_amount = _parse_max_bet_amount(d.pop("max_bet_amount", UNSET))

        def _parse_metadata(data: object) -> Metadata | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                metadata_type_1 = Metadata.from_dict(data)

                return metadata_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Metadata | None | Unset, data)

        metadata = _parse_metadata(d.pop("metadata", UNSET))

        def _parse_min_bet_amount(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        min_bet_amount = _parse_min_bet_amount(d.pop("min_bet_amount", UNSET))

        def _parse_platform_fee_percentage(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        platform_fee_percentage = _parse_platform_fee_percentage(
            d.pop("platform_fee_percentage", UNSET)
        )

        def _parse_pricing_method(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        pricing_method = _parse_pricing_method(d.pop("pricing_method", UNSET))

        def _parse_starts_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                starts_at_type_1 = datetime.datetime.fromisoformat(data)

                return starts_at_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        starts_at = _parse_starts_at(d.pop("starts_at", UNSET))

        def _parse_tags(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                tags_type_0 = cast(list[str], data)

                return tags_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        tags = _parse_tags(d.pop("tags", UNSET))

        create_market_input = cls(
            creator_wallet_id=creator_wallet_id,
            ends_at=ends_at,
            liquidity=liquidity,
            outcomes=outcomes,
            question=question,
            token_id=token_id,
            creator_fee_percentage=creator_fee_percentage,
            description=description,
            game_id=game_id,
            images=images,
            max_bet_amount=max_bet_amount,
            metadata=metadata,
            min_bet_amount=min_bet_amount,
            platform_fee_percentage=platform_fee_percentage,
            pricing_method=pricing_method,
            starts_at=starts_at,
            tags=tags,
        )

        create_market_input.additional_properties = d
        return create_market_input

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
