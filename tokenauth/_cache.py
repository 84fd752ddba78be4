"""The token cache every process keeps: HMACs and derived SCRAM credentials.

Kafka's ``DelegationTokenCache`` keeps, per token, the SCRAM credentials
derived from base64(HMAC) at 4096 iterations for every mechanism, with a
fresh random salt per broker (docs/kafka-facts.md §6.3), and maps HMAC to token id
for renew and expire. This cache does the same, fed by a store's change
listener, with these differences:

* With a secret *list*, each token has one HMAC per listed secret. They all
  map to the token (renew and expire accept any of them) and, per
  mechanism, one credential per secret is derived **with one shared salt**,
  so a SCRAM server can offer a single salt and check the proof against every
  candidate (:class:`sasl_scram.Grant`).
* Credentials are derived on first use and then kept (``eager=True`` derives
  them on every change, like Kafka): PBKDF2 at 4096 iterations is far too
  slow to run for 100,000 tokens at start-up.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from collections.abc import Sequence
from typing import NamedTuple

from sasl_scram import MIN_ITERATIONS
from sasl_scram import ScramCredential
from sasl_scram import ScramMechanism
from sasl_scram import kafka_salt
from tokenauth._config import TokenSecrets
from tokenauth._errors import TokenStoreUnavailable
from tokenauth._token import DelegationToken
from tokenauth._token import TokenInformation
from tokenauth._token import compute_hmac
from tokenauth._token import hmac_base64
from tokenauth.stores import TokenStore

__all__ = ["TokenCache", "TokenCredentials"]

_log = logging.getLogger("tokenauth.cache")


class TokenCredentials(NamedTuple):
    """A token and its candidate SCRAM credentials for one mechanism.

    Attributes:
        info: The token.
        credentials: One credential per configured secret (newest first), all
            with the same salt and iteration count.
    """

    info: TokenInformation
    credentials: tuple[ScramCredential, ...]


class _Entry:
    __slots__ = ("creds", "hmacs", "info")

    def __init__(self, info: TokenInformation, hmacs: tuple[bytes, ...]) -> None:
        self.info = info
        self.hmacs = hmacs
        self.creds: dict[ScramMechanism, tuple[ScramCredential, ...]] = {}

    def __repr__(self) -> str:
        return f"_Entry({self.info.token_id!r}, hmacs=<{len(self.hmacs)} redacted>)"


class TokenCache:
    """A watch-driven view of a :class:`TokenStore` with HMACs and SCRAM credentials.

    Args:
        store: The backend; its listener keeps this cache current.
        secrets: The configured secrets, or ``None`` when tokens are disabled
            (tokens are still mirrored, but have no HMAC and cannot authenticate).
        mechanisms: The mechanisms to derive credentials for.
        iterations: PBKDF2 iterations; Kafka uses the mechanism minimum, 4096.
        salt_factory: A fresh salt per token and mechanism (Kafka's base-36 salt).
        eager: Derive every credential whenever a token changes, as Kafka does,
            instead of on first use.
    """

    def __init__(
        self,
        store: TokenStore,
        secrets: TokenSecrets | None,
        *,
        mechanisms: Sequence[ScramMechanism] = tuple(ScramMechanism),
        iterations: int = MIN_ITERATIONS,
        salt_factory: Callable[[], bytes] = kafka_salt,
        eager: bool = False,
    ) -> None:
        self._store = store
        self._secrets = secrets
        self._mechanisms = tuple(mechanisms)
        self._iterations = iterations
        self._salt_factory = salt_factory
        self._eager = eager
        self._lock = threading.RLock()
        self._entries: dict[str, _Entry] = {}
        self._by_hmac: dict[bytes, str] = {}
        with self._lock:
            # Listen first, then load: a change racing the load is re-read
            # from the store under the lock, so the newest state wins.
            self._remove_listener = store.add_listener(_BatchListener(self))
            for info in store.tokens():
                self._install(info)

    def __repr__(self) -> str:
        return f"TokenCache(tokens={len(self._entries)}, secrets={self._secrets!r})"

    def __len__(self) -> int:
        return len(self._entries)

    # -- reads (no I/O) ----------------------------------------------------------

    def check_usable(self) -> None:
        """Raise :class:`TokenStoreUnavailable` when the store's mirror is too stale."""
        check = getattr(self._store, "check_usable", None)
        if check is not None:
            check()

    def get(self, token_id: str) -> TokenInformation | None:
        entry = self._entries.get(token_id)
        return None if entry is None else entry.info

    def tokens(self) -> list[TokenInformation]:
        return [entry.info for entry in list(self._entries.values())]

    def find_by_hmac(self, hmac: bytes) -> TokenInformation | None:
        """The token whose HMAC under any configured secret is ``hmac``.

        ``DelegationTokenCache.tokenForHmac``; with a secret list, an HMAC made
        with an older listed secret finds its token too.
        """
        token_id = self._by_hmac.get(bytes(hmac))
        return None if token_id is None else self.get(token_id)

    def token(self, token_id: str) -> DelegationToken | None:
        """The token with its HMAC under the *current* (first) secret; ``None``
        when unknown or when tokens are disabled."""
        entry = self._entries.get(token_id)
        if entry is None or not entry.hmacs:
            return None
        return DelegationToken(entry.info, entry.hmacs[0])

    def derived(self, token_id: str, mechanism: ScramMechanism) -> bool:
        """Whether :meth:`credentials` answers without PBKDF2: derived already, or unknown."""
        entry = self._entries.get(token_id)
        return entry is None or not entry.hmacs or mechanism in entry.creds

    def credentials(self, token_id: str, mechanism: ScramMechanism) -> TokenCredentials | None:
        """The token and its candidate credentials for ``mechanism`` (derived on first use)."""
        entry = self._entries.get(token_id)
        if entry is None or not entry.hmacs or mechanism not in self._mechanisms:
            return None
        creds = entry.creds.get(mechanism)
        if creds is None:
            creds = entry.creds.setdefault(mechanism, self._derive(entry.hmacs, mechanism))
        return TokenCredentials(entry.info, creds)

    # -- changes -----------------------------------------------------------------

    def set_secrets(self, secrets: TokenSecrets | None) -> None:
        """Rotate: recompute every HMAC and drop every derived credential.

        Tokens stay; only which HMACs are accepted changes. A secret removed
        here revokes the HMACs made with it in this process at once.
        """
        with self._lock:
            self._secrets = secrets
            infos = [entry.info for entry in self._entries.values()]
            self._entries = {}
            self._by_hmac = {}
            for info in infos:
                self._install(info)

    def refresh(self, token_id: str) -> None:
        """Re-read one token from the store (the listener does this on every change)."""
        self._on_change(token_id)

    def close(self) -> None:
        """Stop following the store."""
        self._remove_listener()

    def _on_changes(self, token_ids: list[str]) -> None:
        """Re-read a batch of tokens under one lock (the sweep's notifications)."""
        get = self._store.get
        entries = self._entries
        by_hmac = self._by_hmac
        with self._lock:
            for token_id in token_ids:
                try:
                    info = get(token_id)
                except TokenStoreUnavailable as exc:
                    _log.warning("cannot refresh token %s: %s", token_id, exc)
                    continue
                if info is not None:
                    self._install(info)
                    continue
                # _drop, inlined: a sweep removes many thousands at once.
                entry = entries.pop(token_id, None)
                if entry is not None:
                    for digest in entry.hmacs:
                        if by_hmac.get(digest) == token_id:
                            del by_hmac[digest]

    def _on_change(self, token_id: str) -> None:
        with self._lock:
            try:
                info = self._store.get(token_id)
            except TokenStoreUnavailable as exc:
                _log.warning("cannot refresh token %s: %s", token_id, exc)
                return
            if info is None:
                self._drop(token_id)
            else:
                self._install(info)

    def _drop(self, token_id: str) -> None:
        entry = self._entries.pop(token_id, None)
        if entry is not None:
            for digest in entry.hmacs:
                if self._by_hmac.get(digest) == token_id:
                    del self._by_hmac[digest]

    def _install(self, info: TokenInformation) -> None:
        old = self._entries.get(info.token_id)
        if old is not None:
            # Renewals change timestamps only: HMACs and credentials depend on
            # the id and the secrets, so they are kept.
            entry = _Entry(info, old.hmacs)
            entry.creds = old.creds
        else:
            keys = self._secrets.keys if self._secrets is not None else ()
            entry = _Entry(info, tuple(compute_hmac(info.token_id, key) for key in keys))
            for digest in entry.hmacs:
                self._by_hmac[digest] = info.token_id
        if self._eager and entry.hmacs and not entry.creds:
            for mech in self._mechanisms:
                entry.creds[mech] = self._derive(entry.hmacs, mech)
        self._entries[info.token_id] = entry

    def _derive(
        self, hmacs: tuple[bytes, ...], mechanism: ScramMechanism
    ) -> tuple[ScramCredential, ...]:
        # One salt for all candidates: the server-first message carries one salt.
        salt = self._salt_factory()
        return tuple(
            ScramCredential.from_password(
                mechanism, hmac_base64(digest), iterations=self._iterations, salt=salt
            )
            for digest in hmacs
        )


class _BatchListener:
    """The cache's store listener: one token, or a batch in one locked pass."""

    __slots__ = ("_cache",)

    def __init__(self, cache: TokenCache) -> None:
        self._cache = cache

    def __call__(self, token_id: str) -> None:
        self._cache._on_change(token_id)

    def many(self, token_ids: list[str]) -> None:
        self._cache._on_changes(token_ids)
