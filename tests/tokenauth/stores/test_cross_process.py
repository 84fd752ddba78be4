"""A token created in one process is seen (and authenticates) in another, both ways."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sasl_scram import SCRAM_SHA_256
from sasl_scram import ScramClient
from sasl_scram import ScramServer
from tests.support.polling import wait_until
from tests.tokenauth.conftest import ALICE
from tests.tokenauth.conftest import ctx
from tokenauth import SQLiteTokenStore
from tokenauth import TokenConfig
from tokenauth import TokenCredentialProvider
from tokenauth import TokenManager
from tokenauth import TokenStore
from tokenauth import ZooKeeperTokenStore

ROOT = Path(__file__).resolve().parents[3]


def run_peer(location: str, store: TokenStore) -> None:
    manager = TokenManager(TokenConfig.of("shared-secret"), store)
    peer = subprocess.Popen(
        [sys.executable, "-m", "tests.tokenauth._peer", location],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert peer.stdin is not None and peer.stdout is not None
    try:
        assert peer.stdout.readline().strip() == "ready"
        # Created here after the peer started: it must arrive through the
        # peer's watch/poll, not its start-up load.
        mine = manager.create_token(ctx(ALICE))
        peer.stdin.write(f"{mine.token_id} {mine.hmac_base64}\n")
        peer.stdin.flush()
        assert peer.stdout.readline().split() == ["authenticated", "alice"]
        word, token_id, password = peer.stdout.readline().split()
        assert word == "created"
        assert wait_until(lambda: manager.cache.get(token_id) is not None, 10) is not None
        info = manager.cache.get(token_id)
        assert info is not None and info.owner.name == "bob"
        server = ScramServer(SCRAM_SHA_256, lookup=TokenCredentialProvider(manager.cache))
        client = ScramClient(SCRAM_SHA_256, token_id, password, token_auth=True)
        client.receive_server_final(
            server.step(client.receive_server_first(server.step(client.client_first())))
        )
        assert server.session.authorization_id == "bob"
        peer.stdin.write("done\n")
        peer.stdin.flush()
        assert peer.wait(20) == 0
    finally:
        if peer.poll() is None:
            peer.kill()
            peer.wait()
        manager.close()
        store.close()


def test_sqlite_two_processes(tmp_path: Path) -> None:
    path = tmp_path / "tokens.db"
    run_peer(f"sqlite:{path}", SQLiteTokenStore(path, poll_interval=0.01))


def test_zookeeper_two_processes(zookeeper_hosts: str) -> None:
    store = ZooKeeperTokenStore(zookeeper_hosts)  # creates the chroot first
    run_peer(f"zookeeper:{zookeeper_hosts}", store)
