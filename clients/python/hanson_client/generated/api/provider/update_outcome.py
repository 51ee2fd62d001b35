from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.outcome_changed import OutcomeChanged
from ...models.outcome_update_input import OutcomeUpdateInput
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    market_id: str,
    outcome_id: str,
    *,
    body: OutcomeUpdateInput,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/v1/providers/markets/{market_id}/outcomes/{outcome_id}".format(
            market_id=quote(str(market_id), safe=""),
            outcome_id=quote(str(outcome_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> OutcomeChanged | Problem | None:
    if response.status_code == 200:
        response_200 = OutcomeChanged.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 408:
        response_408 = Problem.from_dict(response.json())

        return response_408

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())

        return response_413

    if response.status_code == 414:
        response_414 = Problem.from_dict(response.json())

        return response_414

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())

        return response_415

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
) -> Response[OutcomeChanged | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    market_id: str,
    outcome_id: str,
    *,
    client: AuthenticatedClient,
    body: OutcomeUpdateInput,
) -> Response[OutcomeChanged | Problem]:
    """Update an outcome (partial).

    Args:
        market_id (str):
        outcome_id (str):
        body (OutcomeUpdateInput): A partial update of an outcome: only the fields present change.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OutcomeChanged | Problem]
    """

    kwargs = _get_kwargs(
        market_id=market_id,
        outcome_id=outcome_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    market_id: str,
    outcome_id: str,
    *,
    client: AuthenticatedClient,
    body: OutcomeUpdateInput,
) -> OutcomeChanged | Problem | None:
    """Update an outcome (partial).

    Args:
        market_id (str):
        outcome_id (str):
        body (OutcomeUpdateInput): A partial update of an outcome: only the fields present change.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OutcomeChanged | Problem
    """

    return sync_detailed(
        market_id=market_id,
        outcome_id=outcome_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    market_id: str,
    outcome_id: str,
    *,
    client: AuthenticatedClient,
    body: OutcomeUpdateInput,
) -> Response[OutcomeChanged | Problem]:
    """Update an outcome (partial).

    Args:
        market_id (str):
        outcome_id (str):
        body (OutcomeUpdateInput): A partial update of an outcome: only the fields present change.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OutcomeChanged | Problem]
    """

    kwargs = _get_kwargs(
        market_id=market_id,
        outcome_id=outcome_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    market_id: str,
    outcome_id: str,
    *,
    client: AuthenticatedClient,
    body: OutcomeUpdateInput,
) -> OutcomeChanged | Problem | None:
    """Update an outcome (partial).

    Args:
        market_id (str):
        outcome_id (str):
        body (OutcomeUpdateInput): A partial update of an outcome: only the fields present change.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OutcomeChanged | Problem
    """

    return (
        await asyncio_detailed(
            market_id=market_id,
            outcome_id=outcome_id,
            client=client,
            body=body,
        )
    ).parsed
