"""Where delegation tokens live: the contract and its backends.

:class:`InMemoryTokenStore` (reference and test fake), :class:`SQLiteTokenStore`
and :class:`ZooKeeperTokenStore` (Kafka's ``/delegation_token`` layout) share
one contract (:class:`TokenStore`). The SQLite and ZooKeeper backends are built
on the public pieces of :mod:`sasl_scram.store.sqlite` and
:mod:`sasl_scram.store.zookeeper`, so that plumbing is written once.
"""

from __future__ import annotations

from tokenauth.stores._api import InMemoryTokenStore
from tokenauth.stores._api import TokenListener
from tokenauth.stores._api import TokenStore
from tokenauth.stores._layout import MalformedToken
from tokenauth.stores._layout import decode_token
from tokenauth.stores._layout import encode_token
from tokenauth.stores._open import open_token_store
from tokenauth.stores._sqlite import SQLiteTokenStore
from tokenauth.stores._zookeeper import ZooKeeperTokenStore

__all__ = [
    "InMemoryTokenStore",
    "MalformedToken",
    "SQLiteTokenStore",
    "TokenListener",
    "TokenStore",
    "ZooKeeperTokenStore",
    "decode_token",
    "encode_token",
    "open_token_store",
]
