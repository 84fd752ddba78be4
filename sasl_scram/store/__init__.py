"""Credential stores: the contract and its backends (adapters over the SCRAM core)."""

from __future__ import annotations

from ._api import (
    AlterResult,
    CredentialInfo,
    CredentialLookup,
    CredentialStore,
    CredentialStoreError,
    CredentialStoreUnavailable,
    DescribeResult,
    KafkaError,
    ScramAdmin,
    ScramDeletion,
    ScramUpsertion,
    UserDescription,
)

__all__ = [
    "AlterResult",
    "CredentialInfo",
    "CredentialLookup",
    "CredentialStore",
    "CredentialStoreError",
    "CredentialStoreUnavailable",
    "DescribeResult",
    "KafkaError",
    "ScramAdmin",
    "ScramDeletion",
    "ScramUpsertion",
    "UserDescription",
]
