"""``upstream.identity=owner-token`` at run time: each edge user's upstream
connections log in with a cluster-issued delegation token that user owns.

The policy (which token, when to renew, replace, expire) is the sans-IO
:class:`~sasl_scram.frontdoor.OwnerTokens`; its RPCs are
:class:`~sasl_scram.admin.ClusterTokenIssuer`'s, made with the ``upstream.``
login. Both block, so they run on the front door's own threads
(:class:`~sasl_scram.endpoint.proxy._cluster_pool.ClusterPool`), never on asyncio's
default pool: a cluster that stops answering holds those threads only, not
the ones credential look-ups and the KIP-554 handlers use. The event loop
only awaits.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time

from sasl_scram.admin import ClusterTokenIssuer
from sasl_scram.config import SaslCredentials
from sasl_scram.endpoint.proxy._cluster_pool import ClusterPool
from sasl_scram.frontdoor import OwnerToken
from sasl_scram.frontdoor import OwnerTokens
from sasl_scram.frontdoor import UpstreamConfig

__all__ = ["OwnerIdentity"]

log = logging.getLogger("sasl_scram.endpoint")

# How often the tokens are looked after at the most (renewals are due at half
# an expiry period, which Kafka's brokers set to hours or a day).
_MAINTAIN_EVERY_S = 5.0


def _wall_ms() -> int:
    return int(time.time() * 1000)


class OwnerIdentity:
    """The owner tokens of one front-door process.

    Args:
        upstream: the ``upstream.`` keys; their login must be SCRAM.
        timeout: seconds per RPC to the cluster.
        pool: where the RPCs run (tests); by default a :class:`ClusterPool`
            of this front door's own, shut down by :meth:`close`.
    """

    def __init__(
        self, upstream: UpstreamConfig, timeout: float, *, pool: ClusterPool | None = None
    ) -> None:
        mechanism = upstream.client.mechanism
        assert mechanism is not None, "ClusterTokenIssuer refuses a login without SCRAM"
        self._issuer = ClusterTokenIssuer(upstream.client, timeout=timeout)
        self._mechanism = mechanism
        self.tokens = OwnerTokens(self._issuer, _wall_ms)
        self._task: asyncio.Task[None] | None = None
        self.pool = pool or ClusterPool()

    async def start(self) -> None:
        """The cluster must issue a token owned by another user (one line and
        exit 1 otherwise); then the tokens are looked after in the background."""
        try:
            await self.pool.run(self.tokens.check)
        except BaseException:
            self.pool.shutdown()
            raise
        self._task = asyncio.get_running_loop().create_task(self._maintain())

    async def _maintain(self) -> None:
        while True:
            await asyncio.sleep(_MAINTAIN_EVERY_S)
            try:
                await self.pool.run(functools.partial(self.tokens.maintain, _wall_ms()))
            except Exception:  # never lets maintenance die; OwnerTokens logs each change
                log.exception("owner-token maintenance failed")

    async def login(self, user: str) -> tuple[SaslCredentials, OwnerToken]:
        """``user``'s upstream login: its token, created on first need.

        Raises:
            OwnerTokenError: the cluster refused it (one line, cause and fix).
            ClusterBusy: too many calls already wait for the cluster.
        """
        # A token at hand needs no thread, so a pool busy with the cluster's
        # calls delays only the logins that need one of them.
        token = self.tokens.cached(user)
        if token is None:
            token = await self.pool.call(functools.partial(self.tokens.login_for, user))
        secret = SaslCredentials(self._mechanism, token.token_id, token.password, token_auth=True)
        return secret, token

    async def close(self) -> None:
        """Expire every token this process created (best effort)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        try:
            await self.pool.run(self.tokens.close)
            await self.pool.run(self._issuer.close)
        finally:
            self.pool.shutdown()
