"""ACL semantics shared by every ACL store (no I/O): 3.9 ``AclAuthorizer``'s
``createAcls`` and ``deleteAcls``, the snapshot the hot path reads, and the key
that names a resource pattern.

A backend implements one atomic read-modify-write of one resource pattern's
entries (:meth:`AclWrites._update`), the patterns it knows, and its
read-your-writes step; :class:`AclWrites` turns CreateAcls and DeleteAcls into
those updates as ``AclAuthorizer`` does, so codes, messages and result order
are the same in memory, in SQLite and in ZooKeeper.

``AclAuthorizer`` is the authorizer whose layout the ZooKeeper store shares
(``kafka.security.authorizer.AclAuthorizer``): every store follows it, so a
fleet answers the same whichever backend holds its ACLs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Final

from sasl_scram.authz import AccessControlEntry
from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclBindingFilter
from sasl_scram.authz import AclCreation
from sasl_scram.authz import Authorizer
from sasl_scram.authz import PatternType
from sasl_scram.authz import ResourcePattern
from sasl_scram.authz import ResourceType
from sasl_scram.authz import check_create_acls
from sasl_scram.kafka import ErrorCode
from sasl_scram.store._api import AclBindingDeleteResult
from sasl_scram.store._api import AclCreateResult
from sasl_scram.store._api import AclDeleteResult
from sasl_scram.store._kind import StoreBase
from sasl_scram.store._listeners import ListenerSet

__all__ = [
    "CREATE_FAILED",
    "AclSnapshot",
    "AclUpdateFailed",
    "AclWrites",
    "Change",
    "Entries",
    "acl_listeners",
    "check_creations",
    "delete_targets",
    "kafka_ordered",
    "parse_pattern_key",
    "pattern_key",
]

#: ``AclAuthorizer.createAcls`` wraps what ``validateAclBinding`` refuses (unknown
#: elements, ``/`` in a name) in ``InvalidRequestException("Failed to create ACL")``.
CREATE_FAILED: Final = "Failed to create ACL"
# CreateAcls v1 and later carry PREFIXED patterns (KIP-290); a store takes both.
_CREATE_ACLS_VERSION: Final = 1

#: One resource pattern's entries.
Entries = frozenset[AccessControlEntry]
_NONE: Final[Entries] = frozenset()


def pattern_key(pattern: ResourcePattern) -> str:
    """``TOPIC:LITERAL:orders``: the key a change log row and a listener name a
    pattern by (Kafka's constant names; the name last, so it may hold ``:``)."""
    return f"{pattern.resource_type.name}:{pattern.pattern_type.name}:{pattern.name}"


def parse_pattern_key(key: str) -> ResourcePattern:
    """The pattern :func:`pattern_key` wrote.

    Raises:
        ValueError: ``key`` is not ``TYPE:LITERAL|PREFIXED:name`` with a known type.
    """
    type_name, _, rest = key.partition(":")
    pattern_name, colon, name = rest.partition(":")
    resource_type = ResourceType.__members__.get(type_name)
    pattern_type = PatternType.__members__.get(pattern_name)
    if (
        not colon
        or resource_type in (None, ResourceType.ANY, ResourceType.UNKNOWN)
        or pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED)
    ):
        raise ValueError(f"{key!r} names no resource pattern: expected e.g. TOPIC:LITERAL:orders")
    assert resource_type is not None and pattern_type is not None
    return ResourcePattern(resource_type, name, pattern_type)


def acl_listeners() -> ListenerSet:
    """An ACL store's listeners (a failing one is logged as such)."""
    return ListenerSet(failure_message="ACL change listener failed")


def kafka_ordered(bindings: Iterable[AclBinding]) -> tuple[AclBinding, ...]:
    """Stored bindings in the order Kafka's ``acls`` lists them (``StandardAcl``)."""
    return Authorizer(bindings).acls()


class AclUpdateFailed(Exception):
    """One pattern's update was not made (or its outcome is unknown): the error every
    creation or deletion on that pattern answers."""

    def __init__(self, message: str, error: ErrorCode = ErrorCode.UNKNOWN_SERVER_ERROR) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def _creation(binding: AclBinding) -> AclCreation:
    pattern, entry = binding.pattern, binding.entry
    return AclCreation(
        pattern.resource_type.code,
        pattern.name,
        pattern.pattern_type.code,
        entry.principal,
        entry.host,
        entry.operation.code,
        entry.permission_type.code,
    )


def check_creations(bindings: Sequence[AclBinding]) -> list[AclCreateResult | None]:
    """What ``AclAuthorizer.createAcls`` refuses before it writes, per binding (``None``:
    to be written): unknown elements and ``/`` in a name (INVALID_REQUEST ``Failed to
    create ACL``), ``CLUSTER`` named other than ``kafka-cluster`` and an empty name
    (``AclApis``), and a principal without ``Type:``, which fails every creation on
    its pattern (UNKNOWN_SERVER_ERROR) as they are written as one node."""
    known = [b for b in bindings if not b.is_unknown]
    answers = iter(
        check_create_acls([_creation(b) for b in known], _CREATE_ACLS_VERSION, zookeeper=True)
    )
    results: list[AclCreateResult | None] = []
    for binding in bindings:
        if binding.is_unknown:
            # Codes Kafka does not know: the request parses, validateAclBinding refuses.
            results.append(AclCreateResult(binding, ErrorCode.INVALID_REQUEST, CREATE_FAILED))
            continue
        answer = next(answers)
        ok = answer.binding is not None
        results.append(None if ok else AclCreateResult(binding, answer.error, answer.message))
    return results


def _exact_patterns(filter: AclBindingFilter) -> list[ResourcePattern]:
    """``AclAuthorizer.filterToResources`` for a filter that ``matchesAtMostOne``: the
    patterns it names, read from the store even when this copy does not hold them."""
    wanted = filter.pattern_filter
    if wanted.resource_type in (ResourceType.ANY, ResourceType.UNKNOWN) or wanted.name is None:
        return []
    if wanted.pattern_type in (PatternType.LITERAL, PatternType.PREFIXED):
        types = [wanted.pattern_type]
    elif wanted.pattern_type is PatternType.ANY:
        types = [PatternType.LITERAL, PatternType.PREFIXED]
    else:
        return []
    return [ResourcePattern(wanted.resource_type, wanted.name, t) for t in types]


def delete_targets(
    filters: Sequence[AclBindingFilter], known: Iterable[ResourcePattern]
) -> dict[ResourcePattern, list[int]]:
    """``AclAuthorizer.deleteAcls``: every pattern held, and every one an exact filter
    names, with the indexes of the filters whose pattern half matches it (in request
    order); patterns no filter matches are left out."""
    resources = dict.fromkeys(known)
    for filter in filters:
        resources.update(dict.fromkeys(_exact_patterns(filter)))
    targets: dict[ResourcePattern, list[int]] = {}
    for pattern in resources:
        indexes = [i for i, f in enumerate(filters) if f.pattern_filter.matches(pattern)]
        if indexes:
            targets[pattern] = indexes
    return targets


class AclSnapshot:
    """Pattern -> entries, and the :class:`~sasl_scram.authz.Authorizer` over them.

    A change builds a new ``Authorizer`` (rebuilding only the resource types it
    touches) and swaps it in with one assignment, so a reader of
    :attr:`authorizer` takes no lock and never sees half a change. Writers
    serialize on the snapshot's own lock.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[ResourcePattern, Entries] = {}
        self.authorizer = Authorizer()

    def __len__(self) -> int:
        return len(self.authorizer)

    def patterns(self) -> list[ResourcePattern]:
        """Every pattern that has ACLs."""
        with self._lock:
            return list(self._entries)

    def get(self, pattern: ResourcePattern) -> Entries:
        with self._lock:
            return self._entries.get(pattern, _NONE)

    def apply(self, changes: Mapping[ResourcePattern, Entries]) -> list[ResourcePattern]:
        """Set each pattern's entries (empty: it has none); returns those that changed."""
        with self._lock:
            removed: list[AclBinding] = []
            added: list[AclBinding] = []
            changed = []
            for pattern, entries in changes.items():
                old = self._entries.get(pattern, _NONE)
                if old == entries:
                    continue
                changed.append(pattern)
                removed += (AclBinding(pattern, e) for e in old - entries)
                added += (AclBinding(pattern, e) for e in entries - old)
                if entries:
                    self._entries[pattern] = entries
                else:
                    del self._entries[pattern]
            if changed:
                self.authorizer = self.authorizer.remove(removed).add(added)
            return changed

    def replace_all(self, everything: Mapping[ResourcePattern, Entries]) -> list[ResourcePattern]:
        """Swap in a full load; returns the patterns whose entries changed."""
        fresh = {p: e for p, e in everything.items() if e}
        authorizer = Authorizer(AclBinding(p, e) for p, entries in fresh.items() for e in entries)
        with self._lock:
            old, self._entries = self._entries, fresh
            self.authorizer = authorizer
        return [p for p in {**old, **fresh} if old.get(p, _NONE) != fresh.get(p, _NONE)]

    def clear(self) -> None:
        with self._lock:
            self._entries = {}
            self.authorizer = Authorizer()


Change = Callable[[Entries], Entries]


class AclWrites(StoreBase):
    """CreateAcls and DeleteAcls as ``AclAuthorizer`` makes them, over a backend's
    one-pattern update (:meth:`_update`)."""

    def acls(self) -> Authorizer:
        raise NotImplementedError

    def describe_acls(
        self, filter: AclBindingFilter = AclBindingFilter.ANY
    ) -> tuple[AclBinding, ...]:
        """DescribeAcls from the snapshot (``AclAuthorizer.acls`` reads its cache)."""
        return self.acls().acls(filter)

    def create_acls(self, bindings: Sequence[AclBinding]) -> list[AclCreateResult]:
        """``AclAuthorizer.createAcls``: the valid bindings grouped by pattern, each
        pattern's new entries added in one update; all its creations share its outcome."""
        self._check_open()
        checked = check_creations(bindings)
        groups: dict[ResourcePattern, list[int]] = {}
        for index, (binding, result) in enumerate(zip(bindings, checked, strict=True)):
            if result is None:
                groups.setdefault(binding.pattern, []).append(index)
        results = [r or AclCreateResult(b) for r, b in zip(checked, bindings, strict=True)]
        changed = []
        for pattern, indexes in groups.items():
            added = frozenset(bindings[i].entry for i in indexes)
            try:
                if self._update(pattern, _adding(added)):
                    changed.append(pattern)
            except AclUpdateFailed as exc:
                for i in indexes:
                    results[i] = AclCreateResult(bindings[i], exc.error, exc.message)
        if changed:
            self._updated(changed)
        return results

    def delete_acls(self, filters: Sequence[AclBindingFilter]) -> list[AclDeleteResult]:
        """``AclAuthorizer.deleteAcls``: each pattern a filter may match is updated once,
        without the entries any of its filters matches; an ACL is listed under the
        first filter that matched it.

        Beyond Kafka: a pattern that could not even be read fails the filters that
        target it (a filter-level error beside what it matched elsewhere), so a
        delete never reports "nothing matched" for what it could not see.
        """
        self._check_open()
        targets = delete_targets(filters, self._known_patterns())
        listed: dict[int, list[AclBindingDeleteResult]] = {i: [] for i in range(len(filters))}
        failed: dict[int, AclUpdateFailed] = {}
        changed = []
        for pattern, indexes in targets.items():
            matched: dict[AclBinding, int] = {}
            change = _removal(pattern, [(i, filters[i]) for i in indexes], matched)
            outcome: Callable[[AclBinding], AclBindingDeleteResult] = AclBindingDeleteResult
            try:
                if self._update(pattern, change):
                    changed.append(pattern)
            except AclUpdateFailed as exc:
                outcome = _failed_deletion(exc)
                if not matched:
                    failed.update((i, exc) for i in indexes)
            for binding, index in matched.items():
                listed[index].append(outcome(binding))
        if changed:
            self._updated(changed)
        return [_delete_result(f, listed[i], failed.get(i)) for i, f in enumerate(filters)]

    # -- what a backend provides ------------------------------------------------------

    def _known_patterns(self) -> Iterable[ResourcePattern]:
        """The patterns that have ACLs, as far as this store knows."""
        raise NotImplementedError

    def _update(self, pattern: ResourcePattern, change: Change) -> bool:
        """Replace ``pattern``'s stored entries by ``change(current)``, atomically and
        durably; whether they changed. ``change`` may be called more than once (a
        retry starts from a fresh read); only the last call's result is written.

        Raises:
            AclUpdateFailed: the update was not made, or its outcome is unknown.
        """
        raise NotImplementedError

    def _updated(self, patterns: list[ResourcePattern]) -> None:
        """After the writes: the snapshot shows them (read-your-writes), listeners told."""
        raise NotImplementedError


def _adding(added: Entries) -> Change:
    return lambda current: current | added


def _removal(
    pattern: ResourcePattern,
    filters: list[tuple[int, AclBindingFilter]],
    matched: dict[AclBinding, int],
) -> Change:
    """The change that drops every entry one of ``filters`` matches, recording each in
    ``matched`` under the first filter that matched it (the last attempt's only)."""

    def change(current: Entries) -> Entries:
        matched.clear()
        for entry in current:
            first = next((i for i, f in filters if f.entry_filter.matches(entry)), None)
            if first is not None:
                matched[AclBinding(pattern, entry)] = first
        return current - {binding.entry for binding in matched}

    return change


def _failed_deletion(exc: AclUpdateFailed) -> Callable[[AclBinding], AclBindingDeleteResult]:
    return lambda binding: AclBindingDeleteResult(binding, exc.error, exc.message)


def _delete_result(
    filter: AclBindingFilter,
    matches: list[AclBindingDeleteResult],
    failed: AclUpdateFailed | None,
) -> AclDeleteResult:
    by_binding = {m.binding: m for m in matches}
    ordered = tuple(by_binding[b] for b in kafka_ordered(by_binding))
    if failed is not None:
        return AclDeleteResult(filter, ordered, failed.error, failed.message)
    return AclDeleteResult(filter, ordered)
