from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.images import Images


T = TypeVar("T", bound="OutcomeView")


@_attrs_define
class OutcomeView:
    """An outcome as search results and provider operations show it.

    Attributes:
        current_price (str): Price as a decimal in [0, 1] with 18 places.
        description (str): The outcome's description, if any.
        id (str): An outcome of a market.
        images (Images): Image URLs by name, e.g. {"logo": "https://..."}.
        outcome_index (int): The outcome's place in its market, from 0.
        title (str): The outcome's title.
        total_shares (str): An amount in wei, or shares in share units: a decimal integer string
    """

    current_price: str
    description: str
    id: str
    images: Images
    outcome_index: int
    title: str
    total_shares: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        current_price = self.current_price

        description = self.description

        id = self.id

        images = self.images.to_dict()

        outcome_index = self.outcome_index

        title = self.title

        total_shares = self.total_shares

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "current_price": current_price,
                "description": description,
                "id": id,
                "images": images,
                "outcome_index": outcome_index,
                "title": title,
                "total_shares": total_shares,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.images import Images

        d = dict(src_dict)
        current_price = d.pop("current_price")

        description = d.pop("description")

        id = d.pop("id")

        images = Images.from_dict(d.pop("images"))

        outcome_index = d.pop("outcome_index")

        title = d.pop("title")

        total_shares = d.pop("total_shares")

        outcome_view = cls(
            current_price=current_price,
            description=description,
            id=id,
            images=images,
            outcome_index=outcome_index,
            title=title,
            total_shares=total_shares,
        )

        outcome_view.additional_properties = d
        return outcome_view

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
