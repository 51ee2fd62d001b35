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


T = TypeVar("T", bound="UpdateMarketInput")


@_attrs_define
class UpdateMarketInput:
    """
    Attributes:
        creator_fee_percentage (float | None | Unset): The creator's fee, percent of each trade's gross amount (at most
            4 decimals; with the platform fee at most 50).
        description (None | str | Unset): A new description (absent: unchanged).
        ends_at (datetime.datetime | None | Unset): When trading closes.
        images (Images | None | Unset): Image URLs by name.
        max_bet_amount (None | str | Unset): The largest gross bet amount accepted, in wei (inclusive).
        metadata (Metadata | None | Unset): Free-form strings: category, resolution_source and any of the provider's
            own.
        min_bet_amount (None | str | Unset): The smallest gross bet amount accepted, in wei (inclusive).
        question (None | str | Unset): Not blank.
        tags (list[str] | None | Unset): At most 50 tags of at most 100 characters each.
    """

    creator_fee_percentage: float | None | Unset = UNSET
    description: None | str | Unset = UNSET
    ends_at: datetime.datetime | None | Unset = UNSET
    images: Images | None | Unset = UNSET
    max_bet_amount: None | str | Unset = UNSET
    metadata: Metadata | None | Unset = UNSET
    min_bet_amount: None | str | Unset = UNSET
    question: None | str | Unset = UNSET
    tags: list[str] | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.images import Images
        from ..models.metadata import Metadata

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

        ends_at: None | str | Unset
        if isinstance(self.ends_at, Unset):
            ends_at = UNSET
        elif isinstance(self.ends_at, datetime.datetime):
            ends_at = self.ends_at.isoformat()
        else:
            ends_at = self.ends_at

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

        question: None | str | Unset
        if isinstance(self.question, Unset):
            question = UNSET
        else:
            question = self.question

        tags: list[str] | None | Unset
        if isinstance(self.tags, Unset):
            tags = UNSET
        elif isinstance(self.tags, list):
            tags = self.tags

        else:
            tags = self.tags

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if creator_fee_percentage is not UNSET:
            field_dict["creator_fee_percentage"] = creator_fee_percentage
        if description is not UNSET:
            field_dict["description"] = description
        if ends_at is not UNSET:
            field_dict["ends_at"] = ends_at
        if images is not UNSET:
            field_dict["images"] = images
        if max_bet_amount is not UNSET:
            field_dict["max_bet_amount"] = max_bet_amount
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if min_bet_amount is not UNSET:
            field_dict["min_bet_amount"] = min_bet_amount
        if question is not UNSET:
            field_dict["question"] = question
        if tags is not UNSET:
            field_dict["tags"] = tags

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.images import Images
        from ..models.metadata import Metadata

        d = dict(src_dict)

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

        def _parse_ends_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ends_at_type_1 = datetime.datetime.fromisoformat(data)

                return ends_at_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        ends_at = _parse_ends_at(d.pop("ends_at", UNSET))

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

        def _parse_question(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        question = _parse_question(d.pop("question", UNSET))

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

        update_market_input = cls(
            creator_fee_percentage=creator_fee_percentage,
            description=description,
            ends_at=ends_at,
            images=images,
            max_bet_amount=max_bet_amount,
            metadata=metadata,
            min_bet_amount=min_bet_amount,
            question=question,
            tags=tags,
        )

        update_market_input.additional_properties = d
        return update_market_input

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
