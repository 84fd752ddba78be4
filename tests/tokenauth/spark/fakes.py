"""Fakes for the supervisor's unit tests: a broker and a query, on the tests'
one fake clock (``tests/support/clock.py``).

``ALICE`` is the token tests' (``tests/tokenauth/conftest.py``), re-exported here
for the Spark tests.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from sasl_scram import KafkaPrincipal
from sasl_scram.kafka import ErrorCode
from tests.support.clock import FakeClock
from tests.tokenauth.conftest import ALICE as ALICE
from tokenauth import DelegationToken
from tokenauth import TokenInformation
from tokenauth import TokenRequestError
from tokenauth.spark import KafkaOptions


@dataclass(eq=False)
class FakeBroker:
    """Kafka's token rules over a fake clock, with failure injection.

    ``skew_ms`` makes the broker's clock differ from the supervisor's.
    """

    clock: FakeClock[int]
    expiry_ms: int = 60_000
    max_lifetime_ms: int = 240_000
    skew_ms: int = 0
    tokens: dict[bytes, TokenInformation] = field(default_factory=dict, init=False)
    created: list[str] = field(default_factory=list, init=False)
    expired: list[str] = field(default_factory=list, init=False)
    renewed: list[str] = field(default_factory=list, init=False)
    # Raised by the next calls, in order; then per "create"/"renew"/"expire".
    failures: list[BaseException] = field(default_factory=list, init=False)
    op_failures: dict[str, list[BaseException]] = field(default_factory=dict, init=False)
    _ids: Iterator[int] = field(default_factory=itertools.count, init=False, repr=False)

    def now(self) -> int:
        return self.clock() + self.skew_ms

    def connect(self) -> FakeClient:
        return FakeClient(self)

    def _maybe_fail(self, op: str) -> None:
        queued = self.op_failures.get(op)
        if queued:
            raise queued.pop(0)
        if self.failures:
            raise self.failures.pop(0)

    def live_ids(self) -> set[str]:
        now = self.now()
        return {i.token_id for i in self.tokens.values() if not i.is_expired(now)}


class FakeClient:
    def __init__(self, broker: FakeBroker) -> None:
        self.b = broker

    def __enter__(self) -> FakeClient:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def create_token(
        self, renewers: Sequence[KafkaPrincipal] = (), max_lifetime_ms: int = -1
    ) -> DelegationToken:
        b = self.b
        b._maybe_fail("create")
        now = b.now()
        life = (
            b.max_lifetime_ms if max_lifetime_ms <= 0 else min(max_lifetime_ms, b.max_lifetime_ms)
        )
        token_id = f"tok{next(b._ids)}"
        info = TokenInformation(
            token_id,
            ALICE,
            ALICE,
            tuple(renewers),
            now,
            min(now + b.expiry_ms, now + life),
            now + life,
        )
        hmac = token_id.encode() * 4
        b.tokens[hmac] = info
        b.created.append(token_id)
        return DelegationToken(info, hmac)

    def _live(self, hmac: bytes, op: str) -> TokenInformation:
        info = self.b.tokens.get(hmac)
        if info is None:
            raise TokenRequestError(op, ErrorCode.DELEGATION_TOKEN_NOT_FOUND)
        if info.is_expired(self.b.now()):
            raise TokenRequestError(op, ErrorCode.DELEGATION_TOKEN_EXPIRED)
        return info

    def renew_token(self, hmac: bytes, renew_period_ms: int = -1) -> int:
        b = self.b
        b._maybe_fail("renew")
        info = self._live(hmac, "renew")
        period = b.expiry_ms if renew_period_ms < 0 else renew_period_ms
        expiry = min(b.now() + period, info.max_timestamp_ms)
        b.tokens[hmac] = info.with_expiry(expiry)
        b.renewed.append(info.token_id)
        return expiry

    def expire_token(self, hmac: bytes, expiry_period_ms: int = -1) -> int:
        b = self.b
        b._maybe_fail("expire")
        info = self._live(hmac, "expire")
        del b.tokens[hmac]
        b.expired.append(info.token_id)
        return b.now()


class FakeQuery:
    def __init__(self, query_id: str, run: int, options: KafkaOptions) -> None:
        self.id = query_id
        self.runId = f"run-{run}"
        self.options = dict(options)
        self.kafka_options = options
        self.token_id = options.token_id
        self.isActive = True
        self.failure: BaseException | None = None
        self.stops = 0

    def stop(self) -> None:
        self.stops += 1
        self.isActive = False

    def exception(self) -> BaseException | None:
        return self.failure


class FakeSpark:
    """A query factory: every start "resumes" the same checkpoint (same id)."""

    def __init__(self) -> None:
        self.queries: list[FakeQuery] = []
        self.failures: list[BaseException] = []
        self.query_id = "q-1"

    def start(self, options: KafkaOptions) -> FakeQuery:
        if self.failures:
            raise self.failures.pop(0)
        # A restart while the previous run is active would be a supervisor bug.
        assert all(not q.isActive for q in self.queries)
        q = FakeQuery(self.query_id, len(self.queries), options)
        self.queries.append(q)
        return q
