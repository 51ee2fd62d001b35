from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.server_sent_event import ServerSentEvent
from ...types import Response


def _get_kwargs(
    market_id: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/markets/{market_id}/ticker".format(
            market_id=quote(str(market_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | ServerSentEvent | None:
    if response.status_code == 200:
        response_200 = ServerSentEvent.from_dict(response.text)

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
) -> Response[Problem | ServerSentEvent]:
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
) -> Response[Problem | ServerSentEvent]:
    """A market's ticker, live (Server-Sent Events).

     `event: ticker`, `id: <seq>`, data `{market_id, seq, status, trading_paused, prices,
    total_volume, total_pool, trades, trades_omitted}`: the state now first, then at most one
    every ticker interval (250 ms by default), only after a change, never skipping the last
    state. `trades` lists up to the 10 latest trades since the previous tick (oldest first);
    `trades_omitted` counts the older ones. A watcher that reads slowly skips to the latest
    tick. `: ping` comments keep the connection alive.

    Args:
        market_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ServerSentEvent]
    """

    kwargs = _get_kwargs(
        market_id=market_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    market_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Problem | ServerSentEvent | None:
    """A market's ticker, live (Server-Sent Events).

     `event: ticker`, `id: <seq>`, data `{market_id, seq, status, trading_paused, prices,
    total_volume, total_pool, trades, trades_omitted}`: the state now first, then at most one
    every ticker interval (250 ms by default), only after a change, never skipping the last
    state. `trades` lists up to the 10 latest trades since the previous tick (oldest first);
    `trades_omitted` counts the older ones. A watcher that reads slowly skips to the latest
    tick. `: ping` comments keep the connection alive.

    Args:
        market_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ServerSentEvent
    """

    return sync_detailed(
        market_id=market_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    market_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Problem | ServerSentEvent]:
    """A market's ticker, live (Server-Sent Events).

     `event: ticker`, `id: <seq>`, data `{market_id, seq, status, trading_paused, prices,
    total_volume, total_pool, trades, trades_omitted}`: the state now first, then at most one
    every ticker interval (250 ms by default), only after a change, never skipping the last
    state. `trades` lists up to the 10 latest trades since the previous tick (oldest first);
    `trades_omitted` counts the older ones. A watcher that reads slowly skips to the latest
    tick. `: ping` comments keep the connection alive.

    Args:
        market_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ServerSentEvent]
    """

    kwargs = _get_kwargs(
        market_id=market_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    market_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Problem | ServerSentEvent | None:
    """A market's ticker, live (Server-Sent Events).

     `event: ticker`, `id: <seq>`, data `{market_id, seq, status, trading_paused, prices,
    total_volume, total_pool, trades, trades_omitted}`: the state now first, then at most one
    every ticker interval (250 ms by default), only after a change, never skipping the last
    state. `trades` lists up to the 10 latest trades since the previous tick (oldest first);
    `trades_omitted` counts the older ones. A watcher that reads slowly skips to the latest
    tick. `: ping` comments keep the connection alive.

    Args:
        market_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ServerSentEvent
    """

    return (
        await asyncio_detailed(
            market_id=market_id,
            client=client,
        )
    ).parsed
