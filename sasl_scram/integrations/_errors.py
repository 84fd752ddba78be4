"""Errors raised by the client integrations.

They extend :class:`sasl_scram.ScramConfigError`: each one means that the
configuration asks for something the integration or the client library cannot
do. Messages name the key or the capability, never a secret.
"""

from __future__ import annotations

import enum

from sasl_scram._errors import ScramConfigError
from sasl_scram._errors import ScramError
from sasl_scram._errors import ScramServerError
from sasl_scram.kafka import ErrorCode

__all__ = [
    "LOGIN_FIXES",
    "Cause",
    "CredentialsError",
    "IntegrationError",
    "ListenerError",
    "UnsupportedByClient",
    "refusal",
]


class Cause(enum.Enum):
    """Why a login failed, where Kafka sends no error code to say it."""

    #: Nothing listens at the address: ``{address}``.
    CONNECTION_REFUSED = enum.auto()
    #: No connection for another reason: ``{address}``, ``{reason}``.
    UNREACHABLE = enum.auto()
    #: The TLS handshake failed: ``{address}``, ``{reason}``.
    TLS_FAILED = enum.auto()
    #: The port answered no ApiVersions: ``{address}``.
    NOT_KAFKA = enum.auto()
    #: The port is a KRaft controller's: ``{address}``, ``{apis}``.
    CONTROLLER = enum.auto()
    #: The port is a Kafka listener without SASL: ``{address}``.
    NOT_SASL_LISTENER = enum.auto()
    #: The listener does not enable the mechanism: ``{address}``, ``{mechanism}``, ``{offered}``.
    MECHANISM_NOT_ENABLED = enum.auto()
    #: A ``tokenauth=true`` login was refused: ``{bootstrap}``.
    TOKEN_REFUSED = enum.auto()
    #: The port is a ``kafka-scram serve`` without a front door: ``{address}``.
    NO_FRONT_DOOR = enum.auto()


#: How to fix a failed login, the one table every command, integration and
#: example says it from; each text names only the ``{placeholders}`` its key
#: documents (``{config}``: the login's file). For Kafka's error codes the text
#: follows Kafka's own words. The peer may be a Kafka broker (where an ACL can
#: grant what is missing) or kafka-scram serve (which decides its credential
#: and token requests on super.users alone; its edge ACLs cover only forwarded
#: requests and the ACL RPCs): a fix names ACLs only together with what serve
#: does.
LOGIN_FIXES: dict[ErrorCode | Cause, str] = {
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: (
        "the login's principal lacks a permission on the Kafka cluster: log in as a super "
        "user (super.users); a Kafka broker with an authorizer can instead grant it the ACL "
        "the operation needs on the Cluster resource (kafka-scram serve decides credential "
        "and token requests on super.users only, never on ACLs)"
    ),
    ErrorCode.SASL_AUTHENTICATION_FAILED: (
        "check the username and password in sasl.jaas.config of {config}"
    ),
    Cause.CONNECTION_REFUSED: (
        "connection refused by {address}: nothing listens there; start the broker or "
        "correct bootstrap.servers"
    ),
    Cause.UNREACHABLE: (
        "cannot connect to {address} ({reason}); check the host and port in "
        "bootstrap.servers and the network between"
    ),
    Cause.TLS_FAILED: (
        "the TLS handshake with {address} failed ({reason}); check security.protocol "
        "(SASL_PLAINTEXT for a listener without TLS) and the ssl.* keys"
    ),
    Cause.NOT_KAFKA: (
        "{address} answered no Kafka ApiVersions: not a Kafka listener, or one that expects "
        "TLS (or not) where security.protocol says otherwise (SASL_SSL for a TLS listener)"
    ),
    Cause.CONTROLLER: (
        "{address} is a KRaft controller's listener, not a broker's (it answers {apis}, not "
        "Produce); put a broker's SASL listener in bootstrap.servers"
    ),
    Cause.NOT_SASL_LISTENER: (
        "{address} is a Kafka listener without SASL (no SaslHandshake: not a SASL listener, "
        "a PLAINTEXT or SSL one); put a SASL_PLAINTEXT or SASL_SSL listener in "
        "bootstrap.servers"
    ),
    Cause.MECHANISM_NOT_ENABLED: (
        "{address} does not enable {mechanism}; it offers {offered}; set sasl.mechanism to "
        "one of them, or add {mechanism} to the broker's sasl.enabled.mechanisms"
    ),
    Cause.TOKEN_REFUSED: (
        "the delegation token may have expired or been expired (Kafka refuses it as it "
        "refuses a wrong HMAC); check it with kafka-scram delegation-tokens --describe "
        "--bootstrap-server {bootstrap} --command-config <its owner's client.properties>, "
        "and create a new one if it is gone"
    ),
    Cause.NO_FRONT_DOOR: (
        "{address} is a kafka-scram serve without a front door (its ApiVersions has no "
        "Produce or Fetch): it logs users in and creates tokens but holds no topics; set "
        "upstream.bootstrap.servers in its server.properties to put it in front of a Kafka "
        "cluster (docs/front-door.md), or put a broker in bootstrap.servers"
    ),
}


def refusal(exc: ScramError) -> str:
    """What a client library's authentication error says for a failed exchange.

    An ``e=`` reply is the server's own words (RFC 5802 section 7) and safe to
    show; any other SCRAM error message names the problem, never a secret.
    """
    if isinstance(exc, ScramServerError):
        return f"server refused the login: e={exc.error}"
    return str(exc)


class IntegrationError(ScramConfigError):
    """A client integration cannot be set up as asked."""


class CredentialsError(IntegrationError):
    """Credentials are missing or invalid, or a credentials provider failed.

    A provider's own exception is chained as ``__cause__``; its message is not
    repeated here, in case it holds a secret.
    """


class ListenerError(IntegrationError):
    """``bootstrap.servers`` has no broker's SASL listener offering the mechanism.

    The message says what each address is instead (:data:`LOGIN_FIXES`).
    """


class UnsupportedByClient(IntegrationError):
    """The client library itself cannot do what the configuration asks.

    For example librdkafka cannot send SCRAM extensions, so confluent-kafka
    cannot log in with a delegation token (``tokenauth=true``).
    """
