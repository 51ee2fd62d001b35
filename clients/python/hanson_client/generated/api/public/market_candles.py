import datetime
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.candles import Candles
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    market_id: str,
    *,
    interval: str,
    start: datetime.datetime | Unset = UNSET,
    end: datetime.datetime | Unset = UNSET,
    outcome_id: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["interval"] = interval

    json_start: str | Unset = UNSET
    if not isinstance(start, Unset):
        json_start = start.isoformat()
    params["start"] = json_start

    json_end: str | Unset = UNSET
    if not isinstance(end, Unset):
        json_end = end.isoformat()
    params["end"] = json_end

    params["outcome_id"] = outcome_id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/markets/{market_id}/candles".format(
            market_id=quote(str(market_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Candles | Problem | None:
    if response.status_code == 200:
        response_200 = Candles.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 414:
        response_414 = Problem.from_dict(response.json())

        return response_414

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())

        return response_429

    if response.status_code == 431:
        response_431 = Problem.from_dict(response.json())

        return response_431

    if response.status_code == 500:
        response_500 = Problem.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Candles | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    market_id: str,
    *,
    client: AuthenticatedClient | Client,
    interval: str,
    start: datetime.datetime | Unset = UNSET,
    end: datetime.datetime | Unset = UNSET,
    outcome_id: str | Unset = UNSET,
) -> Response[Candles | Problem]:
    """Candles: open, high, low, close, volume and trade count per outcome per bucket, empty buckets
    filled.

    Args:
        market_id (str):
        interval (str):
        start (datetime.datetime | Unset): RFC 3339 time in UTC
        end (datetime.datetime | Unset): RFC 3339 time in UTC
        outcome_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Candles | Problem]
    """

    kwargs = _get_kwargs(
        market_id=market_id,
        interval=interval,
        start=start,
        end=end,
        outcome_id=outcome_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    market_id: str,
    *,
    client: AuthenticatedClient | Client,
    interval: str,
    start: datetime.datetime | Unset = UNSET,
    end: datetime.datetime | Unset = UNSET,
    outcome_id: str | Unset = UNSET,
) -> Candles | Problem | None:
    """Candles: open, high, low, close, volume and trade count per outcome per bucket, empty buckets
    filled.

    Args:
        market_id (str):
        interval (str):
        start (datetime.datetime | Unset): RFC 3339 time in UTC
        end (datetime.datetime | Unset): RFC 3339 time in UTC
        outcome_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Candles | Problem
    """

    return sync_detailed(
        market_id=market_id,
        client=client,
        interval=interval,
        start=start,
        end=end,
        outcome_id=outcome_id,
    ).parsed


async def asyncio_detailed(
    market_id: str,
    *,
    client: AuthenticatedClient | Client,
    interval: str,
    start: datetime.datetime | Unset = UNSET,
    end: datetime.datetime | Unset = UNSET,
    outcome_id: str | Unset = UNSET,
) -> Response[Candles | Problem]:
    """Candles: open, high, low, close, volume and trade count per outcome per bucket, empty buckets
    filled.

    Args:
        market_id (str):
        interval (str):
        start (datetime.datetime | Unset): RFC 3339 time in UTC
        end (datetime.datetime | Unset): RFC 3339 time in UTC
        outcome_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Candles | Problem]
    """

    kwargs = _get_kwargs(
        market_id=market_id,
        interval=interval,
        start=start,
        end=end,
        outcome_id=outcome_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    market_id: str,
    *,
    client: AuthenticatedClient | Client,
    interval: str,
    start: datetime.datetime | Unset = UNSET,
    end: datetime.datetime | Unset = UNSET,
    outcome_id: str | Unset = UNSET,
) -> Candles | Problem | None:
    """Candles: open, high, low, close, volume and trade count per outcome per bucket, empty buckets
    filled.

    Args:
        market_id (str):
        interval (str):
        start (datetime.datetime | Unset): RFC 3339 time in UTC
        end (datetime.datetime | Unset): RFC 3339 time in UTC
        outcome_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Candles | Problem
    """

    return (
        await asyncio_detailed(
            market_id=market_id,
            client=client,
            interval=interval,
            start=start,
            end=end,
            outcome_id=outcome_id,
        )
    ).parsed
