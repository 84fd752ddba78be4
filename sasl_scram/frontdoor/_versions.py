"""What the front door advertises in its ApiVersions answer.

Per API: the versions both the cluster supports and the front door can
forward. APIs the edge answers itself advertise the edge's own ranges.
"""

from __future__ import annotations

from collections.abc import Container
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from sasl_scram.kafka import ADDRESS_API_SPECS
from sasl_scram.kafka import API_SPECS
from sasl_scram.kafka import ApiKey

__all__ = [
    "ACL_API_KEYS",
    "EDGE_API_KEYS",
    "FORWARD_CAPS",
    "NOT_FORWARDED",
    "edge_api_versions",
    "edge_ranges",
]

#: The APIs the front door answers itself and never forwards: ApiVersions and
#: the SASL login (the edge authenticates), the delegation-token RPCs (tokens
#: live in our store, KIP-48) and KIP-554's SCRAM credential RPCs.
EDGE_API_KEYS = frozenset(
    {
        ApiKey.SASL_HANDSHAKE,
        ApiKey.API_VERSIONS,
        ApiKey.SASL_AUTHENTICATE,
        ApiKey.CREATE_DELEGATION_TOKEN,
        ApiKey.RENEW_DELEGATION_TOKEN,
        ApiKey.EXPIRE_DELEGATION_TOKEN,
        ApiKey.DESCRIBE_DELEGATION_TOKEN,
        ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
    }
)


#: DescribeAcls, CreateAcls and DeleteAcls: answered at the edge, on the edge's
#: own ACLs, when the edge authorizes (``authorizer.class.name``); else forwarded.
ACL_API_KEYS = frozenset({ApiKey.DESCRIBE_ACLS, ApiKey.CREATE_ACLS, ApiKey.DELETE_ACLS})


def edge_ranges(keys: Iterable[int] = EDGE_API_KEYS) -> dict[int, tuple[int, int]]:
    """The edge's own ``(min, max)`` per API key, from the codec's schema table."""
    return {key: (API_SPECS[key].min_version, API_SPECS[key].max_version) for key in keys}


#: The highest version forwarded, per API, where a newer one would make a data
#: frame carry broker endpoints. KIP-951: Produce v10+ and Fetch v16+ responses
#: end with tagged ``NodeEndpoints`` (after a NOT_LEADER_OR_FOLLOWER), found
#: only by parsing the whole, possibly many-MB, response. Capped, data frames
#: pass through unparsed and clients learn a new leader from a Metadata
#: refresh, as before KIP-951. DescribeQuorum v2 lists the controllers'
#: listeners (``Nodes[].Listeners``), which the front door does not serve.
FORWARD_CAPS: Mapping[int, int] = {
    ApiKey.PRODUCE: 9,
    ApiKey.FETCH: 15,
    55: 1,  # DescribeQuorum
    # Rewritten responses: only the versions whose schema the codec has.
    **{key: spec.max_version for key, spec in ADDRESS_API_SPECS.items()},
}

#: APIs never advertised: KIP-932's ShareFetch (78) and ShareAcknowledge (79)
#: carry ``NodeEndpoints`` in every version, so no cap keeps them unparsed.
NOT_FORWARDED = frozenset({78, 79})


def edge_api_versions(
    upstream: Iterable[Mapping[str, Any]],
    edge: Mapping[int, tuple[int, int]],
    *,
    only: Container[int] | None = None,
    caps: Mapping[int, int] | None = None,
) -> list[dict[str, int]]:
    """The ``api_keys`` of the front door's ApiVersions response.

    Args:
        upstream: the cluster's ``api_keys`` entries (``api_key``,
            ``min_version``, ``max_version``), as ApiVersions decodes them.
        edge: the APIs the edge answers itself, each with its own
            ``(min, max)``; these are advertised whatever the cluster says.
        only: when given, the only forwarded APIs advertised (with edge ACLs,
            those the edge can authorize).
        caps: further per-API highest versions (with edge ACLs, the versions
            that name topics the edge can check).

    Returns:
        Entries in the same shape, sorted by API key; an API whose range is
        empty once capped is left out.
    """
    ranges: dict[int, tuple[int, int]] = {}
    for entry in upstream:
        key = entry["api_key"]
        if key in edge or key in NOT_FORWARDED or (only is not None and key not in only):
            continue
        low, high = entry["min_version"], entry["max_version"]
        spec = ADDRESS_API_SPECS.get(key)
        if spec is not None:
            low = max(low, spec.min_version)
        high = min(high, FORWARD_CAPS.get(key, high), (caps or {}).get(key, high))
        if low <= high:
            ranges[key] = (low, high)
    ranges.update(edge)
    return [
        {"api_key": key, "min_version": low, "max_version": high}
        for key, (low, high) in sorted(ranges.items())
    ]
