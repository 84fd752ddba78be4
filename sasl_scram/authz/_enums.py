"""Kafka's four ACL enumerations: one enum each, its wire code and its names.

The member names are Kafka's enum constants (what its ``toString`` prints, e.g.
``TRANSACTIONAL_ID``); the values are the wire codes
(``org.apache.kafka.common.resource.ResourceType``, ``PatternType``,
``org.apache.kafka.common.acl.AclOperation``, ``AclPermissionType``). The codes
follow declaration order in Kafka, so comparing members compares Kafka's
ordinals, which ``StandardAcl.compareTo`` sorts by.
"""

from __future__ import annotations

import enum
from typing import Self

__all__ = ["AclOperation", "AclPermissionType", "PatternType", "ResourceType"]


def pascal_case(constant: str) -> str:
    """``SecurityUtils.toPascalCase``: ``TRANSACTIONAL_ID`` -> ``TransactionalId``."""
    return "".join(part.capitalize() for part in constant.split("_"))


class _KafkaEnum(enum.IntEnum):
    """What the four enumerations share: codes, Kafka's names, and its look-ups."""

    def __str__(self) -> str:
        # Kafka's Enum.toString is the constant name, which every toString it builds prints.
        return self.name

    def __format__(self, spec: str) -> str:
        return format(self.name, spec)

    @property
    def code(self) -> int:
        """The wire code (``code()``)."""
        return int(self)

    @property
    def display_name(self) -> str:
        """The name in ZooKeeper paths and JSON: ``Topic``, ``IdempotentWrite``, ``Allow``
        (``SecurityUtils.resourceTypeName``, ``operationName``, ``permissionTypeName``)."""
        return pascal_case(self.name)

    @property
    def is_unknown(self) -> bool:
        return self.name == "UNKNOWN"

    @classmethod
    def from_code(cls, code: int) -> Self:
        """``fromCode``: a code Kafka does not know reads as ``UNKNOWN``."""
        try:
            return cls(code)
        except ValueError:
            return cls["UNKNOWN"]

    @classmethod
    def from_string(cls, text: str) -> Self:
        """``fromString`` of ``ResourceType``, ``AclOperation``, ``AclPermissionType``:
        the constant name in any case; anything else reads as ``UNKNOWN``."""
        return cls.__members__.get(text.upper(), cls["UNKNOWN"])

    @classmethod
    def from_display_name(cls, text: str) -> Self:
        """``SecurityUtils.resourceType``/``operation``/``permissionType``: the display
        name (``TransactionalId``), else its upper case matched against the display
        names' upper case (so ``transactionalid`` reads, ``TRANSACTIONAL_ID`` does
        not); anything else reads as ``UNKNOWN``."""
        wanted = text.upper()
        for member in cls:
            if member.display_name.upper() == wanted:
                return member
        return cls["UNKNOWN"]


class ResourceType(_KafkaEnum):
    """``org.apache.kafka.common.resource.ResourceType``. ANY and UNKNOWN are for filters."""

    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(_KafkaEnum):
    """``org.apache.kafka.common.resource.PatternType``. ANY, MATCH and UNKNOWN are for filters."""

    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4

    @classmethod
    def from_string(cls, text: str) -> Self:
        """``PatternType.fromString`` is exact, unlike the other three: ``PREFIXED``
        only, never ``prefixed``."""
        return cls.__members__.get(text, cls.UNKNOWN)

    @property
    def is_specific(self) -> bool:
        """``isSpecific``: a pattern a stored ACL can have (LITERAL or PREFIXED)."""
        return self in (PatternType.LITERAL, PatternType.PREFIXED)


class AclOperation(_KafkaEnum):
    """``org.apache.kafka.common.acl.AclOperation``. ANY and UNKNOWN are for filters."""

    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class AclPermissionType(_KafkaEnum):
    """``org.apache.kafka.common.acl.AclPermissionType``. ANY and UNKNOWN are for filters."""

    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3
