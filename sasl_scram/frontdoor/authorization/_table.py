"""Which check each API gets at the edge, and the versions it is checked at.

An API missing here is neither advertised nor forwarded while the edge
authorizes: a request whose resources the edge cannot name is refused, never
forwarded unchecked.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from typing import Final

from sasl_scram.frontdoor.authorization import _admin_rules as admin
from sasl_scram.frontdoor.authorization import _data_rules as data
from sasl_scram.frontdoor.authorization import _group_rules as group
from sasl_scram.frontdoor.authorization import _listing_rules as listing
from sasl_scram.frontdoor.authorization import _txn_rules as txn
from sasl_scram.frontdoor.authorization._check import RequestCheck
from sasl_scram.frontdoor.authorization._offset_fetch import offset_fetch
from sasl_scram.frontdoor.authorization._verdicts import Body
from sasl_scram.frontdoor.authorization._verdicts import Verdict
from sasl_scram.kafka import message_spec

__all__ = ["AUTHORIZED_CAPS", "RULES", "UNCHECKED", "Rule"]

Rule = Callable[[RequestCheck, int, Body], Verdict]

RULES: Final[Mapping[int, Rule]] = {
    0: data.produce,
    1: data.fetch,
    2: data.list_offsets,
    3: listing.metadata,
    8: group.offset_commit,
    9: offset_fetch,
    10: group.find_coordinator,
    11: group.group_read,  # JoinGroup
    12: group.group_read,  # Heartbeat
    13: group.group_read,  # LeaveGroup
    14: group.group_read,  # SyncGroup
    15: listing.with_authorized_operations(group.describe_groups, "groups", "group_id"),
    16: listing.list_groups,
    19: admin.create_topics,
    20: admin.delete_topics,
    21: data.delete_records,
    22: txn.init_producer_id,
    23: data.offset_for_leader_epoch,
    24: txn.add_partitions_to_txn,
    25: txn.add_offsets_to_txn,
    26: txn.end_txn,
    28: txn.txn_offset_commit,
    32: admin.describe_configs,
    33: admin.alter_configs,
    37: admin.create_partitions,
    42: group.delete_groups,
    44: admin.incremental_alter_configs,
    47: group.offset_delete,
    60: listing.describe_cluster,
    61: data.describe_producers,
    65: txn.describe_transactions,
    66: listing.list_transactions,
    68: group.consumer_group_heartbeat,
    69: listing.with_authorized_operations(group.consumer_group_describe, "groups", "group_id"),
    75: listing.describe_topic_partitions,
    **{key: admin.cluster_only(key) for key in admin.CLUSTER_ONLY},
}

#: APIs Kafka checks nothing on (KIP-714's telemetry): forwarded unparsed.
UNCHECKED: Final = frozenset({71, 72})

#: The highest version checked, per API: the newest the edge can read (a newer
#: one, advertised, would close every connection that used it, and could name
#: resources, or ask for operations, no rule checks), and lower where a newer
#: one names resources the edge cannot decide. The versions that name topics
#: by id (Fetch v13+, OffsetCommit and OffsetFetch v10+, TxnOffsetCommit v6+,
#: DeleteTopics v6+) are decided on the names the ids stand for
#: (:mod:`._topic_names`). Produce v13+ names topics by id too, which its rule
#: and its head reader do not read (the data path's forwarding cap keeps it
#: lower anyway).
AUTHORIZED_CAPS: Final[Mapping[int, int]] = {
    **{key: message_spec(key).max_version for key in RULES},
    0: 12,
}
