from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.outcome_view import OutcomeView


T = TypeVar("T", bound="OutcomeChanged")


@_attrs_define
class OutcomeChanged:
    """
    Attributes:
        message (str): A confirmation for people.
        outcome (OutcomeView): An outcome as search results and provider operations show it.
    """

    message: str
    outcome: OutcomeView
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        message = self.message

        outcome = self.outcome.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "message": message,
                "outcome": outcome,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.outcome_view import OutcomeView

        d = dict(src_dict)
        message = d.pop("message")

        outcome = OutcomeView.from_dict(d.pop("outcome"))

        outcome_changed = cls(
            message=message,
            outcome=outcome,
        )

        outcome_changed.additional_properties = d
        return outcome_changed

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
