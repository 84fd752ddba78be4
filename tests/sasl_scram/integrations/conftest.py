"""Fixtures: a token-serving endpoint on loopback and client.properties for it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import jaas
from sasl_scram.config import ClientConfig
from sasl_scram.integrations import ScramCredentials
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint
from tests.support.endpoint_harness import token_extension
from tests.support.front_door import python_client_login

MECHS = ["SCRAM-SHA-256", "SCRAM-SHA-512"]
# The endpoint logs each login, with "(delegation token)" for a token login.
ENDPOINT_LOGGER = "sasl_scram.endpoint"


def client_properties(
    ep: RunningEndpoint, jaas_line: str | None, mechanism: str = "SCRAM-SHA-256"
) -> dict[str, str]:
    props = {
        "bootstrap.servers": ep.bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism,
    }
    if jaas_line is not None:
        props["sasl.jaas.config"] = jaas_line
    return props


def own_scram_kwargs(bootstrap: str) -> dict[str, str]:
    """alice's login through the client library's own SCRAM (kafka-python, aiokafka)."""
    return python_client_login(bootstrap, *ALICE)


def user_line(user: tuple[str, str] = ALICE) -> str:
    return jaas.scram_login_line(*user)


def write_properties(path: Path, props: dict[str, str]) -> Path:
    # Java properties: escape backslashes, ':' and '=' are fine after the first separator.
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
    return path


class RotatingTokens:
    """A credentials provider whose current token can be swapped; records what it handed out."""

    def __init__(self, token: Any) -> None:
        self._lock = threading.Lock()
        self.current = token
        self.handed_out: list[str] = []

    def scram_credentials(self) -> ScramCredentials:
        with self._lock:
            token = self.current
            self.handed_out.append(token.token_id)
        return token_credentials(token)


def token_credentials(token: Any) -> ScramCredentials:
    """The SCRAM login of a delegation token (its id and HMAC)."""
    return ScramCredentials.for_token(token.token_id, token.hmac_base64)


@dataclass
class TokenEndpoint:
    """An endpoint that serves delegation tokens, with helpers to manage them as alice."""

    ep: RunningEndpoint
    manager: Any

    @property
    def bootstrap(self) -> str:
        return self.ep.bootstrap

    def token_client(self) -> Any:
        from tokenauth import DelegationTokenClient

        owner = ClientConfig.from_properties(client_properties(self.ep, user_line()))
        return DelegationTokenClient.connect(owner)

    def create_token(self, max_lifetime_ms: int = 600_000) -> Any:
        with self.token_client() as client:
            return client.create_token([], max_lifetime_ms)

    def token_line(self) -> str:
        """A new token of alice's, as the JAAS line a client logs in with."""
        token = self.create_token()
        return str(jaas.scram_token_login_line(token.token_id, token.hmac_base64))

    def token_properties(self, mechanism: str) -> dict[str, str]:
        """client.properties that log in with a new token of alice's."""
        return client_properties(self.ep, self.token_line(), mechanism)

    def expire_token(self, token: Any) -> None:
        with self.token_client() as client:
            client.expire_token(token.hmac, -1)  # negative: removed at once


@pytest.fixture
def endpoint_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """``caplog`` with the endpoint's login lines (DEBUG) captured."""
    caplog.set_level(logging.DEBUG, logger=ENDPOINT_LOGGER)
    return caplog


def make_token_endpoint(properties: dict[str, str] | None = None) -> Iterator[TokenEndpoint]:
    extension, manager = token_extension()
    with RunningEndpoint(properties=properties, extensions=[extension]) as ep:
        yield TokenEndpoint(ep, manager)


@pytest.fixture(scope="module")
def token_endpoint() -> Iterator[TokenEndpoint]:
    yield from make_token_endpoint()


@pytest.fixture
def reauth_endpoint() -> Iterator[TokenEndpoint]:
    """KIP-368: sessions last at most 2 s, so clients re-authenticate every ~1.8 s."""
    yield from make_token_endpoint({"connections.max.reauth.ms": "2000"})


@pytest.fixture
def reauth_token(reauth_endpoint: TokenEndpoint, endpoint_log: pytest.LogCaptureFixture) -> Any:
    """A new token of alice's on ``reauth_endpoint``, created with the endpoint's
    login lines captured (so the token owner's own login is in the log)."""
    return reauth_endpoint.create_token()
