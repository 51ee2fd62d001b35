from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.claim_input import ClaimInput
from ...models.claim_receipt import ClaimReceipt
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    position_id: str,
    *,
    body: ClaimInput,
    idempotency_key: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/markets/positions/{position_id}/claim".format(
            position_id=quote(str(position_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ClaimReceipt | Problem | None:
    if response.status_code == 200:
        response_200 = ClaimReceipt.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

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
) -> Response[ClaimReceipt | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    position_id: str,
    *,
    client: AuthenticatedClient,
    body: ClaimInput,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[ClaimReceipt | Problem]:
    """Claim a won position: its payout at the market's payout ratio per winning share unit.

    Args:
        position_id (str):
        idempotency_key (None | str | Unset):
        body (ClaimInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClaimReceipt | Problem]
    """

    kwargs = _get_kwargs(
        position_id=position_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    position_id: str,
    *,
    client: AuthenticatedClient,
    body: ClaimInput,
    idempotency_key: None | str | Unset = UNSET,
) -> ClaimReceipt | Problem | None:
    """Claim a won position: its payout at the market's payout ratio per winning share unit.

    Args:
        position_id (str):
        idempotency_key (None | str | Unset):
        body (ClaimInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClaimReceipt | Problem
    """

    return sync_detailed(
        position_id=position_id,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    position_id: str,
    *,
    client: AuthenticatedClient,
    body: ClaimInput,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[ClaimReceipt | Problem]:
    """Claim a won position: its payout at the market's payout ratio per winning share unit.

    Args:
        position_id (str):
        idempotency_key (None | str | Unset):
        body (ClaimInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClaimReceipt | Problem]
    """

    kwargs = _get_kwargs(
        position_id=position_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    position_id: str,
    *,
    client: AuthenticatedClient,
    body: ClaimInput,
    idempotency_key: None | str | Unset = UNSET,
) -> ClaimReceipt | Problem | None:
    """Claim a won position: its payout at the market's payout ratio per winning share unit.

    Args:
        position_id (str):
        idempotency_key (None | str | Unset):
        body (ClaimInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClaimReceipt | Problem
    """

    return (
        await asyncio_detailed(
            position_id=position_id,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
