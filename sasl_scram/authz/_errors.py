"""The one error type of ``sasl_scram.authz``: bad input, named with its fix."""

from __future__ import annotations

__all__ = ["AuthzError"]


class AuthzError(ValueError):
    """An ACL, a filter, a setting or stored data that Kafka would not accept.

    The message is one line: what is wrong, then how to fix it.
    """
