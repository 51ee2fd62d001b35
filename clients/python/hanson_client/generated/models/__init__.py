"""Contains all the data models used in inputs/outputs"""

from .alt_key import AltKey
from .alt_key_input import AltKeyInput
from .asyncapi_response_200 import AsyncapiResponse200
from .balance import Balance
from .bet_input import BetInput
from .bet_preview import BetPreview
from .bet_preview_input import BetPreviewInput
from .bet_receipt import BetReceipt
from .cancel_input import CancelInput
from .cancellation import Cancellation
from .candle import Candle
from .candles import Candles
from .claim_input import ClaimInput
from .claim_receipt import ClaimReceipt
from .claim_status import ClaimStatus
from .create_market_input import CreateMarketInput
from .delivery import Delivery
from .delivery_status import DeliveryStatus
from .endpoint import Endpoint
from .endpoint_created import EndpointCreated
from .endpoint_input import EndpointInput
from .endpoint_patch import EndpointPatch
from .field_error import FieldError
from .filled_trade import FilledTrade
from .health import Health
from .holding import Holding
from .holdings_filters import HoldingsFilters
from .images import Images
from .leaderboard_row import LeaderboardRow
from .list_token import ListToken
from .login_input import LoginInput
from .market_common import MarketCommon
from .market_created import MarketCreated
from .market_detail import MarketDetail
from .market_filters import MarketFilters
from .market_header import MarketHeader
from .market_status import MarketStatus
from .market_summary import MarketSummary
from .market_updated import MarketUpdated
from .message import Message
from .metadata import Metadata
from .nonce_grant import NonceGrant
from .nonce_input import NonceInput
from .openapi_document_response_200 import OpenapiDocumentResponse200
from .outcome_candles import OutcomeCandles
from .outcome_changed import OutcomeChanged
from .outcome_detail import OutcomeDetail
from .outcome_input import OutcomeInput
from .outcome_update_input import OutcomeUpdateInput
from .outcome_view import OutcomeView
from .page_delivery import PageDelivery
from .page_endpoint import PageEndpoint
from .page_holding import PageHolding
from .page_leaderboard_row import PageLeaderboardRow
from .page_market_summary import PageMarketSummary
from .page_price_point import PagePricePoint
from .page_trade_record import PageTradeRecord
from .pagination import Pagination
from .pagination_input import PaginationInput
from .pause_input import PauseInput
from .position_status import PositionStatus
from .position_type import PositionType
from .preview_token import PreviewToken
from .price_filters_by_market import PriceFiltersByMarket
from .price_filters_by_outcome import PriceFiltersByOutcome
from .price_point import PricePoint
from .problem import Problem
from .profile import Profile
from .provider_ref import ProviderRef
from .refresh_input import RefreshInput
from .resolution import Resolution
from .resolve_input import ResolveInput
from .rotated_secret import RotatedSecret
from .sale_receipt import SaleReceipt
from .search_request_holdings_filters import SearchRequestHoldingsFilters
from .search_request_market_filters import SearchRequestMarketFilters
from .search_request_price_filters import SearchRequestPriceFilters
from .search_request_trade_filters import SearchRequestTradeFilters
from .sell_body_by_proceeds import SellBodyByProceeds
from .sell_body_by_shares import SellBodyByShares
from .sell_input_by_proceeds import SellInputByProceeds
from .sell_input_by_shares import SellInputByShares
from .sell_preview import SellPreview
from .server_sent_event import ServerSentEvent
from .sort_field_holdings_filters import SortFieldHoldingsFilters
from .sort_field_market_filters import SortFieldMarketFilters
from .sort_field_price_filters import SortFieldPriceFilters
from .sort_field_trade_filters import SortFieldTradeFilters
from .sort_input_holdings_filters import SortInputHoldingsFilters
from .sort_input_market_filters import SortInputMarketFilters
from .sort_input_price_filters import SortInputPriceFilters
from .sort_input_trade_filters import SortInputTradeFilters
from .string_map import StringMap
from .subscribed_type import SubscribedType
from .token import Token
from .token_grant import TokenGrant
from .token_ref import TokenRef
from .trade_filters import TradeFilters
from .trade_kind import TradeKind
from .trade_record import TradeRecord
from .trade_status import TradeStatus
from .transferred import Transferred
from .treasury import Treasury
from .treasury_deposit import TreasuryDeposit
from .treasury_deposit_input import TreasuryDepositInput
from .update_market_input import UpdateMarketInput
from .user_refund import UserRefund
from .wallet_transfer import WalletTransfer
from .wallet_transfer_input import WalletTransferInput
from .wallet_view import WalletView

__all__ = (
    "AltKey",
    "AltKeyInput",
    "AsyncapiResponse200",
    "Balance",
    "BetInput",
    "BetPreview",
    "BetPreviewInput",
    "BetReceipt",
    "CancelInput",
    "Cancellation",
    "Candle",
    "Candles",
    "ClaimInput",
    "ClaimReceipt",
    "ClaimStatus",
    "CreateMarketInput",
    "Delivery",
    "DeliveryStatus",
    "Endpoint",
    "EndpointCreated",
    "EndpointInput",
    "EndpointPatch",
    "FieldError",
    "FilledTrade",
    "Health",
    "Holding",
    "HoldingsFilters",
    "Images",
    "LeaderboardRow",
    "ListToken",
    "LoginInput",
    "MarketCommon",
    "MarketCreated",
    "MarketDetail",
    "MarketFilters",
    "MarketHeader",
    "MarketStatus",
    "MarketSummary",
    "MarketUpdated",
    "Message",
    "Metadata",
    "NonceGrant",
    "NonceInput",
    "OpenapiDocumentResponse200",
    "OutcomeCandles",
    "OutcomeChanged",
    "OutcomeDetail",
    "OutcomeInput",
    "OutcomeUpdateInput",
    "OutcomeView",
    "PageDelivery",
    "PageEndpoint",
    "PageHolding",
    "PageLeaderboardRow",
    "PageMarketSummary",
    "PagePricePoint",
    "PageTradeRecord",
    "Pagination",
    "PaginationInput",
    "PauseInput",
    "PositionStatus",
    "PositionType",
    "PreviewToken",
    "PriceFiltersByMarket",
    "PriceFiltersByOutcome",
    "PricePoint",
    "Problem",
    "Profile",
    "ProviderRef",
    "RefreshInput",
    "Resolution",
    "ResolveInput",
    "RotatedSecret",
    "SaleReceipt",
    "SearchRequestHoldingsFilters",
    "SearchRequestMarketFilters",
    "SearchRequestPriceFilters",
    "SearchRequestTradeFilters",
    "SellBodyByProceeds",
    "SellBodyByShares",
    "SellInputByProceeds",
    "SellInputByShares",
    "SellPreview",
    "ServerSentEvent",
    "SortFieldHoldingsFilters",
    "SortFieldMarketFilters",
    "SortFieldPriceFilters",
    "SortFieldTradeFilters",
    "SortInputHoldingsFilters",
    "SortInputMarketFilters",
    "SortInputPriceFilters",
    "SortInputTradeFilters",
    "StringMap",
    "SubscribedType",
    "Token",
    "TokenGrant",
    "TokenRef",
    "TradeFilters",
    "TradeKind",
    "TradeRecord",
    "TradeStatus",
    "Transferred",
    "Treasury",
    "TreasuryDeposit",
    "TreasuryDepositInput",
    "UpdateMarketInput",
    "UserRefund",
    "WalletTransfer",
    "WalletTransferInput",
    "WalletView",
)
