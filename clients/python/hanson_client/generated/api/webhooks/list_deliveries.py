from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.delivery_status import DeliveryStatus
from ...models.page_delivery import PageDelivery
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    webhook_id: str,
    *,
    page: int | Unset = UNSET,
    per_page: int | Unset = UNSET,
    status: DeliveryStatus | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["page"] = page

    params["per_page"] = per_page

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status.value

    params["status"] = json_status

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/providers/webhooks/{webhook_id}/deliveries".format(
            webhook_id=quote(str(webhook_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> PageDelivery | Problem | None:
    if response.status_code == 200:
        response_200 = PageDelivery.from_dict(response.json())

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
) -> Response[PageDelivery | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    page: int | Unset = UNSET,
    per_page: int | Unset = UNSET,
    status: DeliveryStatus | Unset = UNSET,
) -> Response[PageDelivery | Problem]:
    """The endpoint's deliveries, newest first.

    Args:
        webhook_id (str):
        page (int | Unset):
        per_page (int | Unset):
        status (DeliveryStatus | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PageDelivery | Problem]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        page=page,
        per_page=per_page,
        status=status,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    page: int | Unset = UNSET,
    per_page: int | Unset = UNSET,
    status: DeliveryStatus | Unset = UNSET,
) -> PageDelivery | Problem | None:
    """The endpoint's deliveries, newest first.

    Args:
        webhook_id (str):
        page (int | Unset):
        per_page (int | Unset):
        status (DeliveryStatus | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PageDelivery | Problem
    """

    return sync_detailed(
        webhook_id=webhook_id,
        client=client,
        page=page,
        per_page=per_page,
        status=status,
    ).parsed


async def asyncio_detailed(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    page: int | Unset = UNSET,
    per_page: int | Unset = UNSET,
    status: DeliveryStatus | Unset = UNSET,
) -> Response[PageDelivery | Problem]:
    """The endpoint's deliveries, newest first.

    Args:
        webhook_id (str):
        page (int | Unset):
        per_page (int | Unset):
        status (DeliveryStatus | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PageDelivery | Problem]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        page=page,
        per_page=per_page,
        status=status,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    page: int | Unset = UNSET,
    per_page: int | Unset = UNSET,
    status: DeliveryStatus | Unset = UNSET,
) -> PageDelivery | Problem | None:
    """The endpoint's deliveries, newest first.

    Args:
        webhook_id (str):
        page (int | Unset):
        per_page (int | Unset):
        status (DeliveryStatus | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PageDelivery | Problem
    """

    return (
        await asyncio_detailed(
            webhook_id=webhook_id,
            client=client,
            page=page,
            per_page=per_page,
            status=status,
        )
    ).parsed
