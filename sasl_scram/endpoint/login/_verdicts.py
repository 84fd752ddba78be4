"""How long a login's verdict waits before it reaches the client.

KIP-306: Kafka's ``Selector`` keeps a channel whose authentication failed in
its delayed-close queue for ``connection.failed.authentication.delay.ms``, and
only when that fires does ``KafkaChannel.completeCloseOnAuthenticationFailure``
send the failed SaslAuthenticate response, then close: the response waits
with the close, so a sequential guesser waits the whole delay per guess.

Past the failure budget (``_budget.py``: per name and address pair, per name,
per address) every verdict waits, success or failure, at least that long and
until its turn, so that a right password looks, in timing, like a wrong one,
and a known name like an unknown one. The connection holds the verdict on a
loop timer: no other connection waits.
"""

from __future__ import annotations

from sasl_scram.endpoint._metrics import AuthMetrics
from sasl_scram.endpoint.login._budget import FailureBudget
from sasl_scram.endpoint.login._connection import Authenticated
from sasl_scram.endpoint.login._connection import Close

__all__ = ["VerdictPacer"]


class VerdictPacer:
    """The hold of each verdict, for one endpoint.

    Args:
        failed_delay_s: ``connection.failed.authentication.delay.ms``, in seconds.
        budget: The failure budget, or ``None`` when it is off.
        metrics: Counts the verdicts held past the budget, if metrics are on.
    """

    def __init__(
        self, failed_delay_s: float, budget: FailureBudget | None, metrics: AuthMetrics | None
    ) -> None:
        self.failed_delay_s = failed_delay_s
        self.budget = budget
        self.metrics = metrics

    def delay(self, listener: str, peername: object, verdict: Authenticated | Close) -> float:
        """Seconds to hold this verdict (0: send it now), and count a failure.

        Args:
            listener: The listener's name (the metric's label).
            peername: The socket's peer address; its host counts against the budget
                (with the name, and alone).
            verdict: A login's success, or the close of a failed one.
        """
        budget = self.budget
        user: str | None
        if isinstance(verdict, Authenticated):
            # Every login's success comes here: within the budget, one check.
            if budget is None or budget.idle():
                return 0.0
            failed, user = False, verdict.session.username
            mechanism = verdict.session.mechanism.mechanism_name
        else:
            failed, user, mechanism = True, verdict.username, verdict.mechanism or ""
        delay = self.failed_delay_s if failed else 0.0
        if budget is None:
            return delay
        address = str(peername[0]) if isinstance(peername, tuple) and peername else None
        paced = budget.verdict(user, address, failed)
        if paced is None:
            return delay
        if self.metrics is not None:
            self.metrics.slowed(listener, mechanism)
        return max(paced, self.failed_delay_s)
