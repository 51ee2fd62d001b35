from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.images import Images


T = TypeVar("T", bound="OutcomeUpdateInput")


@_attrs_define
class OutcomeUpdateInput:
    """A partial update of an outcome: only the fields present change.

    Attributes:
        description (None | str | Unset): A new description (absent: unchanged).
        images (Images | None | Unset): Image URLs by name.
        outcome_index (int | None | Unset): Distinct within the market.
        title (None | str | Unset): Not blank.
    """

    description: None | str | Unset = UNSET
    images: Images | None | Unset = UNSET
    outcome_index: int | None | Unset = UNSET
    title: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.images import Images

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        images: dict[str, Any] | None | Unset
        if isinstance(self.images, Unset):
            images = UNSET
        elif isinstance(self.images, Images):
            images = self.images.to_dict()
        else:
            images = self.images

        outcome_index: int | None | Unset
        if isinstance(self.outcome_index, Unset):
            outcome_index = UNSET
        else:
            outcome_index = self.outcome_index

        title: None | str | Unset
        if isinstance(self.title, Unset):
            title = UNSET
        else:
            title = self.title

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if description is not UNSET:
            field_dict["description"] = description
        if images is not UNSET:
            field_dict["images"] = images
        if outcome_index is not UNSET:
            field_dict["outcome_index"] = outcome_index
        if title is not UNSET:
            field_dict["title"] = title

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.images import Images

        d = dict(src_dict)

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

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

        def _parse_outcome_index(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        outcome_index = _parse_outcome_index(d.pop("outcome_index", UNSET))

        def _parse_title(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        title = _parse_title(d.pop("title", UNSET))

        outcome_update_input = cls(
            description=description,
            images=images,
            outcome_index=outcome_index,
            title=title,
        )

        outcome_update_input.additional_properties = d
        return outcome_update_input

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
