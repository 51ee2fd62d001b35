from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.preview_token import PreviewToken


T = TypeVar("T", bound="BetPreview")


@_attrs_define
class BetPreview:
    """What a bet would buy now (the bet preview).

    Attributes:
        amount (str): An amount in wei, or shares in share units: a decimal integer string
        average_price (str): Average price per share of the trade, a decimal string in [0, 1].
        current_price (str): The outcome's price now, a decimal string in [0, 1].
        estimated_fee (str): An amount in wei, or shares in share units: a decimal integer string
        estimated_shares (str): An amount in wei, or shares in share units: a decimal integer string
        market_id (str): A market.
        net_amount (str): An amount in wei, or shares in share units: a decimal integer string
        new_outcome_price (str): The outcome's price after the trade, a decimal string in [0, 1].
        outcome_id (str): The outcome's id.
        price_impact (str): How far the trade moves the outcome's price, a decimal string.
        token (PreviewToken): The token a preview is denominated in.
        unfilled_amount (str): An amount in wei, or shares in share units: a decimal integer string
    """

    amount: str
    average_price: str
    current_price: str
    estimated_fee: str
    estimated_shares: str
    market_id: str
    net_amount: str
    new_outcome_price: str
    outcome_id: str
    price_impact: str
    token: PreviewToken
    unfilled_amount: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        average_price = self.average_price

        current_price = self.current_price

        estimated_fee = self.estimated_fee

        estimated_shares = self.estimated_shares

        market_id = self.market_id

        net_amount = self.net_amount

        new_outcome_price = self.new_outcome_price

        outcome_id = self.outcome_id

        price_impact = self.price_impact

        token = self.token.to_dict()

        unfilled_amount = self.unfilled_amount

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "amount": amount,
                "average_price": average_price,
                "current_price": current_price,
                "estimated_fee": estimated_fee,
                "estimated_shares": estimated_shares,
                "market_id": market_id,
                "net_amount": net_amount,
                "new_outcome_price": new_outcome_price,
                "outcome_id": outcome_id,
                "price_impact": price_impact,
                "token": token,
                "unfilled_amount": unfilled_amount,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.preview_token import PreviewToken

        d = dict(src_dict)
        amount = d.pop("amount")

        average_price = d.pop("average_price")

        current_price = d.pop("current_price")

        estimated_fee = d.pop("estimated_fee")

        estimated_shares = d.pop("estimated_shares")

        market_id = d.pop("market_id")

        net_amount = d.pop("net_amount")

        new_outcome_price = d.pop("new_outcome_price")

        outcome_id = d.pop("outcome_id")

        price_impact = d.pop("price_impact")

        token = PreviewToken.from_dict(d.pop("token"))

        unfilled_amount = d.pop("unfilled_amount")

        bet_preview = cls(
            amount=amount,
            average_price=average_price,
            current_price=current_price,
            estimated_fee=estimated_fee,
            estimated_shares=estimated_shares,
            market_id=market_id,
            net_amount=net_amount,
            new_outcome_price=new_outcome_price,
            outcome_id=outcome_id,
            price_impact=price_impact,
            token=token,
            unfilled_amount=unfilled_amount,
        )

        bet_preview.additional_properties = d
        return bet_preview

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
