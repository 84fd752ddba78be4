"""An unknown user's server-first message carries the iteration count the store's
users have most, so the count does not tell a real user from an unknown one
(docs/security.md, user enumeration)."""

from __future__ import annotations

from pathlib import Path

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram import ScramClient
from sasl_scram import ScramMechanism
from sasl_scram.store import InMemoryCredentialStore
from sasl_scram.store import ScramDeletion
from sasl_scram.store import ScramUpsertion
from sasl_scram.store import SQLiteCredentialStore
from tests.sasl_scram.endpoint.serve_process import Peer
from tests.sasl_scram.endpoint.serve_process import Serve
from tests.support.endpoint_harness import RunningEndpoint
from tests.support.endpoint_harness import token_extension


def _iterations(port: int, user: str, mech: ScramMechanism, token: bool = False) -> int:
    """The ``i=`` of the server-first message ``user`` gets."""
    with Peer(port) as peer:
        first = ScramClient(mech, user, "x", token_auth=token).client_first()
        server_first = peer.server_first(first, mech).decode()
    return int(server_first.rsplit(",i=", 1)[1])


def _upsert(user: str, mech: ScramMechanism, iterations: int) -> ScramUpsertion:
    # The salted password is never checked here: only the count is shown.
    return ScramUpsertion(user, mech.type_byte, iterations, b"salt", b"x" * mech.digest_size)


def test_serve_shows_an_unknown_user_the_count_of_the_real_ones(tmp_path: Path) -> None:
    db = tmp_path / "data" / "creds.db"
    db.parent.mkdir(mode=0o700)
    store = SQLiteCredentialStore(db, poll_interval=0)
    try:
        store.alter(
            [],
            [
                _upsert("admin", SCRAM_SHA_256, 8192),
                _upsert("alice", SCRAM_SHA_256, 8192),
                _upsert("bob", SCRAM_SHA_256, 4096),
                _upsert("admin", SCRAM_SHA_512, 10000),
            ],
        )
    finally:
        store.close()
    with Serve(tmp_path, db) as serve:
        for mech, count in ((SCRAM_SHA_256, 8192), (SCRAM_SHA_512, 10000)):
            assert _iterations(serve.port, "admin", mech) == count
            assert _iterations(serve.port, "nosuchadmin", mech) == count
        # A user without a credential of the mechanism is an unknown user for it.
        assert _iterations(serve.port, "alice", SCRAM_SHA_512) == 10000


def test_the_decoy_count_follows_the_store_and_a_token_keeps_kafkas() -> None:
    store = InMemoryCredentialStore()
    store.alter(
        [], [_upsert("admin", SCRAM_SHA_256, 12000), _upsert("alice", SCRAM_SHA_256, 12000)]
    )
    extension, _manager = token_extension()
    with RunningEndpoint(store, extensions=[extension]) as endpoint:
        assert _iterations(endpoint.port, "nobody", SCRAM_SHA_256) == 12000
        # No user of SCRAM-SHA-512: the default count, which every new credential gets.
        assert _iterations(endpoint.port, "nobody", SCRAM_SHA_512) == 4096
        # A token's credential is always derived at 4096 (DelegationTokenManager).
        assert _iterations(endpoint.port, "no-such-token", SCRAM_SHA_256, token=True) == 4096
        store.alter([ScramDeletion("alice", 1)], [_upsert("bob", SCRAM_SHA_256, 9000)])
        store.alter([], [_upsert("carol", SCRAM_SHA_256, 9000)])
        assert _iterations(endpoint.port, "nobody", SCRAM_SHA_256) == 9000
