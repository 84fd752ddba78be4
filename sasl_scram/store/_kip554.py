"""KIP-554 semantics shared by every backend (pure: no I/O, no locks).

Backends call :func:`plan_alterations` once per request, then, for every user
the plan lets through, read that user's current mechanisms, call
:func:`resolve_user` and write the resulting :class:`UserChange` atomically.
:class:`AlterResultCollector` puts the results in Kafka's order. Describe goes
through :func:`describe_users`. Messages and codes are Kafka's
(``ZkAdminManager``, docs/kafka-facts.md §7).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from sasl_scram._credential import ScramCredential
from sasl_scram._errors import ScramUsageError
from sasl_scram._mechanism import MAX_ITERATIONS
from sasl_scram._mechanism import MIN_ITERATIONS
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.kafka import ErrorCode
from sasl_scram.store._api import AlterResult
from sasl_scram.store._api import CredentialInfo
from sasl_scram.store._api import DescribeResult
from sasl_scram.store._api import ScramDeletion
from sasl_scram.store._api import ScramUpsertion
from sasl_scram.store._api import UserDescription
from sasl_scram.store._kind import StoreBase

__all__ = [
    "UNKNOWN_SERVER_ERROR_MESSAGE",
    "AlterByUser",
    "AlterPlan",
    "AlterResultCollector",
    "UnreadableUser",
    "UserAlteration",
    "UserChange",
    "describe_users",
    "java_string_order",
    "plan_alterations",
    "resolve_user",
]

# Kafka's exact texts (ZkAdminManager.alterUserScramCredentials / describe...).
MSG_EMPTY_USER = "Username must not be empty"
MSG_UNKNOWN_MECHANISM = "Unknown SCRAM mechanism"
MSG_TOO_FEW = "Too few iterations"
MSG_TOO_MANY = "Too many iterations"
MSG_DUPLICATE = "A user credential cannot be altered twice in the same request"
MSG_DELETE_MISSING = "Attempt to delete a user credential that does not exist"
MSG_DESCRIBE_TWICE = (
    "Cannot describe SCRAM credentials for the same user twice in a single request: "
)
MSG_DESCRIBE_MISSING = "Attempt to describe a user credential that does not exist: "
# Errors.UNKNOWN_SERVER_ERROR's default message, which Kafka uses whenever
# Errors.forException maps an unexpected exception.
UNKNOWN_SERVER_ERROR_MESSAGE = (
    "The server experienced an unexpected error when processing the request."
)


@dataclass(frozen=True, slots=True)
class UserAlteration:
    """The validated, duplicate-free alterations of one user."""

    user: str
    deletions: tuple[ScramMechanism, ...] = ()
    upsertions: tuple[tuple[ScramMechanism, ScramUpsertion], ...] = ()


@dataclass(frozen=True, slots=True)
class AlterPlan:
    """What survives request-level checks, plus the users rejected by them."""

    rejected: tuple[AlterResult, ...]
    alterations: tuple[UserAlteration, ...]


@dataclass(frozen=True, slots=True)
class UserChange:
    """What to write for one user: mechanisms to drop and credentials to set."""

    user: str
    deletions: frozenset[ScramMechanism]
    upsertions: Mapping[ScramMechanism, ScramCredential] = field(repr=False)

    def apply(
        self, current: Mapping[ScramMechanism, ScramCredential]
    ) -> dict[ScramMechanism, ScramCredential]:
        """The user's credentials after this change (deletions first, like Kafka)."""
        result = {m: c for m, c in current.items() if m not in self.deletions}
        result.update(self.upsertions)
        return result


def _mechanism(type_byte: int) -> ScramMechanism | None:
    try:
        return ScramMechanism.from_type(type_byte)
    except ScramUsageError:
        return None


def _deletion_error(deletion: ScramDeletion) -> AlterResult | None:
    if not deletion.user:
        return AlterResult(deletion.user, ErrorCode.UNACCEPTABLE_CREDENTIAL, MSG_EMPTY_USER)
    if _mechanism(deletion.mechanism) is None:
        return AlterResult(
            deletion.user, ErrorCode.UNSUPPORTED_SASL_MECHANISM, MSG_UNKNOWN_MECHANISM
        )
    return None


def _upsertion_error(upsertion: ScramUpsertion) -> AlterResult | None:
    user = upsertion.user
    if not user:
        return AlterResult(user, ErrorCode.UNACCEPTABLE_CREDENTIAL, MSG_EMPTY_USER)
    if _mechanism(upsertion.mechanism) is None:
        return AlterResult(user, ErrorCode.UNSUPPORTED_SASL_MECHANISM, MSG_UNKNOWN_MECHANISM)
    # The bounds of ZkAdminManager and ScramControlManager.MAX_ITERATIONS.
    if upsertion.iterations < MIN_ITERATIONS:
        return AlterResult(user, ErrorCode.UNACCEPTABLE_CREDENTIAL, MSG_TOO_FEW)
    if upsertion.iterations > MAX_ITERATIONS:
        return AlterResult(user, ErrorCode.UNACCEPTABLE_CREDENTIAL, MSG_TOO_MANY)
    return None


def plan_alterations(
    deletions: Sequence[ScramDeletion], upsertions: Sequence[ScramUpsertion]
) -> AlterPlan:
    """Validate a request and find duplicates, as Kafka's ZooKeeper-mode controller does.

    * Validation errors are kept per user; upsertion errors override deletion
      errors and a later error overrides an earlier one.
    * Among the other users, the same (user, mechanism) pair twice anywhere in
      the request is DUPLICATE_RESOURCE. Deleting SCRAM-SHA-256 while upserting
      SCRAM-SHA-512 for one user is allowed, as in ZooKeeper mode.
    """
    invalid: dict[str, AlterResult] = {}
    for deletion in deletions:
        error = _deletion_error(deletion)
        if error is not None:
            invalid[deletion.user] = error
    for upsertion in upsertions:
        error = _upsertion_error(upsertion)
        if error is not None:
            invalid[upsertion.user] = error

    seen: set[tuple[str, ScramMechanism]] = set()
    duplicated: dict[str, None] = {}
    order: dict[str, None] = {}
    per_user_del: dict[str, list[ScramMechanism]] = {}
    per_user_ups: dict[str, list[tuple[ScramMechanism, ScramUpsertion]]] = {}
    # Deletions first, then upsertions: a (user, mechanism) in both is a duplicate.
    changes: list[ScramDeletion | ScramUpsertion] = [*deletions, *upsertions]
    for change in changes:
        if change.user in invalid:
            continue
        mech = ScramMechanism.from_type(change.mechanism)
        if (change.user, mech) in seen:
            duplicated[change.user] = None
        seen.add((change.user, mech))
        order[change.user] = None
        if isinstance(change, ScramUpsertion):
            per_user_ups.setdefault(change.user, []).append((mech, change))
        else:
            per_user_del.setdefault(change.user, []).append(mech)

    rejected = [*invalid.values()]
    rejected += [AlterResult(u, ErrorCode.DUPLICATE_RESOURCE, MSG_DUPLICATE) for u in duplicated]
    alterations = tuple(
        UserAlteration(u, tuple(per_user_del.get(u, ())), tuple(per_user_ups.get(u, ())))
        for u in order
        if u not in duplicated
    )
    return AlterPlan(tuple(rejected), alterations)


def resolve_user(
    alteration: UserAlteration, present: Collection[ScramMechanism]
) -> UserChange | AlterResult:
    """Check deletions against the user's current mechanisms and derive the new keys.

    Returns:
        The change to write, or RESOURCE_NOT_FOUND when a deletion names a
        mechanism the user does not have.
    """
    for mech in alteration.deletions:
        if mech not in present:
            return AlterResult(alteration.user, ErrorCode.RESOURCE_NOT_FOUND, MSG_DELETE_MISSING)
    # ScramFormatter.generateCredential(salt, saltedPassword, iterations): the
    # server never sees the password.
    upserts = {
        mech: ScramCredential.from_salted_password(
            mech, ups.salt, ups.salted_password, ups.iterations
        )
        for mech, ups in alteration.upsertions
    }
    return UserChange(alteration.user, frozenset(alteration.deletions), upserts)


class AlterResultCollector:
    """Orders results like ZkAdminManager: validation errors, duplicates,
    missing deletions, failures, successes."""

    def __init__(self, plan: AlterPlan) -> None:
        self._rejected = list(plan.rejected)
        self._not_found: list[AlterResult] = []
        self._failures: list[AlterResult] = []
        self._successes: list[AlterResult] = []

    def add(self, result: AlterResult) -> None:
        """Record one user's outcome."""
        if result.error == ErrorCode.NONE:
            self._successes.append(result)
        elif result.error == ErrorCode.RESOURCE_NOT_FOUND:
            self._not_found.append(result)
        else:
            self._failures.append(result)

    def results(self) -> list[AlterResult]:
        """Every user's result, once each, in Kafka's order."""
        return [*self._rejected, *self._not_found, *self._failures, *self._successes]


def alter_users(
    deletions: Sequence[ScramDeletion],
    upsertions: Sequence[ScramUpsertion],
    alter_user: Callable[[UserAlteration], AlterResult],
) -> tuple[list[AlterResult], list[str]]:
    """Run one KIP-554 alter with a backend's per-user write.

    Returns every user's result in Kafka's order and the users that changed.
    """
    plan = plan_alterations(deletions, upsertions)
    collector = AlterResultCollector(plan)
    changed: list[str] = []
    for alteration in plan.alterations:
        result = alter_user(alteration)
        collector.add(result)
        if result.error == ErrorCode.NONE:
            changed.append(alteration.user)
    return collector.results(), changed


class AlterByUser(StoreBase):
    """The KIP-554 alter that every credential store runs.

    Kafka answers each user of an AlterUserScramCredentials request on its
    own, so a store writes one user's change at a time, atomically for that
    user (:meth:`_alter_user`), then makes what changed visible to its
    lookups (:meth:`_altered`): read-your-writes for the caller.
    """

    def alter(
        self, deletions: Sequence[ScramDeletion], upsertions: Sequence[ScramUpsertion]
    ) -> list[AlterResult]:
        """KIP-554 alter: each user's change written on its own; every user's result in
        Kafka's order (see :func:`alter_users`)."""
        self._check_open()
        results, changed = alter_users(deletions, upsertions, self._alter_user)
        if changed:
            self._altered(changed)
        return results

    def _alter_user(self, alteration: UserAlteration) -> AlterResult:
        """Write one user's change, durably, or say why not in its result."""
        raise NotImplementedError

    def _altered(self, users: list[str]) -> None:
        """After the writes: make the users' new credentials visible to lookups."""
        raise NotImplementedError


class UnreadableUser(Exception):
    """A backend could not interpret a user's stored credentials (bad data)."""


UserReader = Callable[[str], "Mapping[ScramMechanism, int] | None"]


def java_string_order(name: str) -> bytes:
    """A sort key matching Java's ``String.compareTo`` (UTF-16 code units)."""
    return name.encode("utf-16-be", errors="surrogatepass")


def _info(iterations: Mapping[ScramMechanism, int]) -> tuple[CredentialInfo, ...]:
    # ZooKeeper mode lists SCRAM-SHA-256 then SCRAM-SHA-512.
    return tuple(CredentialInfo(m, iterations[m]) for m in ScramMechanism if m in iterations)


def _describe_one(user: str, read: UserReader) -> UserDescription:
    try:
        iterations = read(user)
    except UnreadableUser:
        # Errors.forException on a parse failure: the default message only.
        return UserDescription(
            user, (), ErrorCode.UNKNOWN_SERVER_ERROR, UNKNOWN_SERVER_ERROR_MESSAGE
        )
    if not iterations:
        return UserDescription(user, (), ErrorCode.RESOURCE_NOT_FOUND, MSG_DESCRIBE_MISSING + user)
    return UserDescription(user, _info(iterations))


def describe_users(
    users: Sequence[str] | None,
    read: UserReader,
    all_users: Callable[[], Iterable[str]],
) -> DescribeResult:
    """KIP-554 describe in ZooKeeper-mode order and wording.

    Args:
        users: The requested names; ``None`` or empty means every user with at
            least one SCRAM credential, sorted like Java strings.
        read: Returns a user's ``{mechanism: iterations}``, ``None``/empty when
            the user has no credential; raises :class:`UnreadableUser` on bad data.
        all_users: Every user name that may hold credentials.
    """
    if not users:
        results = []
        for user in sorted(set(all_users()), key=java_string_order):
            description = _describe_one(user, read)
            if description.error != ErrorCode.RESOURCE_NOT_FOUND:
                results.append(description)
        return DescribeResult(tuple(results))
    counts: dict[str, int] = {}
    for user in users:
        counts[user] = counts.get(user, 0) + 1
    results = []
    for user in counts:
        if counts[user] > 1:
            results.append(
                UserDescription(user, (), ErrorCode.DUPLICATE_RESOURCE, MSG_DESCRIBE_TWICE + user)
            )
        elif not user:
            results.append(UserDescription(user, (), ErrorCode.RESOURCE_NOT_FOUND, MSG_EMPTY_USER))
        else:
            results.append(_describe_one(user, read))
    return DescribeResult(tuple(results))
