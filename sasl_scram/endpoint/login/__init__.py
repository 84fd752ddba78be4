"""An edge connection until and around its login: the sans-IO state machine
(:class:`ServerConnection`: Kafka's SASL rules, KIP-368, caps for non-super
users), its asyncio protocol (:class:`ConnectionProtocol`), the deadlines, the
failure budget and how long each verdict is held, busy polling, and the API
handlers the edge answers itself."""

from __future__ import annotations

from sasl_scram.endpoint.login import _handlers as handlers
from sasl_scram.endpoint.login._budget import BudgetPolicy
from sasl_scram.endpoint.login._budget import FailureBudget
from sasl_scram.endpoint.login._busy_poll import BusyPoller
from sasl_scram.endpoint.login._connection import ApiCall
from sasl_scram.endpoint.login._connection import Authenticated
from sasl_scram.endpoint.login._connection import Close
from sasl_scram.endpoint.login._connection import ConnectionSettings
from sasl_scram.endpoint.login._connection import CredentialNeeded
from sasl_scram.endpoint.login._connection import Output
from sasl_scram.endpoint.login._connection import Send
from sasl_scram.endpoint.login._connection import ServerConnection
from sasl_scram.endpoint.login._connection import advertised_versions
from sasl_scram.endpoint.login._connection import refuse_forwarded_login
from sasl_scram.endpoint.login._deadlines import ConnectionDeadlines
from sasl_scram.endpoint.login._protocol import ConnectionHost
from sasl_scram.endpoint.login._protocol import ConnectionProtocol
from sasl_scram.endpoint.login._protocol import EdgeSide
from sasl_scram.endpoint.login._protocol import Forwarding
from sasl_scram.endpoint.login._verdicts import VerdictPacer

__all__ = [
    "ApiCall",
    "Authenticated",
    "BudgetPolicy",
    "BusyPoller",
    "Close",
    "ConnectionDeadlines",
    "ConnectionHost",
    "ConnectionProtocol",
    "ConnectionSettings",
    "CredentialNeeded",
    "EdgeSide",
    "FailureBudget",
    "Forwarding",
    "Output",
    "Send",
    "ServerConnection",
    "VerdictPacer",
    "advertised_versions",
    "handlers",
    "refuse_forwarded_login",
]
