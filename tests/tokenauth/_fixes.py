"""What ``kafka-scram delegation-tokens`` adds after Kafka's words for each refusal:
the fix, in parentheses (``tokenauth._cli._FIXES``). Written out here so that a
change to any of them is a deliberate change to the tests too."""

from __future__ import annotations

__all__ = [
    "CLUSTER_FIX",
    "DISABLED_FIX",
    "EXPIRED_FIX",
    "MISMATCH_FIX",
    "NOT_FOUND_FIX",
    "OWNER_FIX",
    "PRINCIPAL_TYPE_FIX",
    "SASL_FIX",
    "TOKEN_LOGIN_FIX",
]

DISABLED_FIX = (
    "the server has no delegation.token.secret.key: set it, the same secret on every broker "
    "(in KRaft mode on every controller too) or in the --config file of kafka-scram serve, "
    "and restart"
)
NOT_FOUND_FIX = (
    "no live token has this HMAC: it is mistyped, or its token expired and was removed; "
    "--describe --show-hmac lists the live tokens with their HMACs"
)
#: ``{config}``: the --command-config file.
SASL_FIX = (
    "check the username and password in sasl.jaas.config of the --command-config file {config}"
)
TOKEN_LOGIN_FIX = (
    "log in with the user's own credentials, not a token: in the --command-config file, a "
    "sasl.jaas.config without tokenauth=true, over SASL_PLAINTEXT or SASL_SSL"
)
#: ``{owner}``: the --owner-principal.
OWNER_FIX = (
    "creating a token for {owner} needs a super user (super.users); a Kafka broker with an "
    "authorizer can instead grant the CreateTokens ACL on {owner}: kafka-acls --add "
    "--allow-principal <you> --operation CreateTokens --user-principal {owner} (kafka-scram "
    "serve decides token requests on super.users only, never on ACLs)"
)
MISMATCH_FIX = (
    "only the token's owner or one of its renewers may renew or expire it, a super user "
    "included: log in as one of them"
)
EXPIRED_FIX = "the token has expired and cannot be renewed: create a new one with --create"
PRINCIPAL_TYPE_FIX = "a token's renewers are users: give each --renewer-principal as User:<name>"
CLUSTER_FIX = (
    "the login's principal lacks a permission on the Kafka cluster: log in as a super user "
    "(super.users); a Kafka broker with an authorizer can instead grant it the ACL the "
    "operation needs on the Cluster resource (kafka-scram serve decides credential and token "
    "requests on super.users only, never on ACLs)"
)
