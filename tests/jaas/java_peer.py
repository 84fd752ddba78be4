"""Python side of tests/java/JaasHarness.java, and the same outcome computed by ``jaas``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import jaas
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import b64
from tests.support.javaharness import unb64

# An option, an entry (module, flag, options), a context name -> entries.
Options = dict[str | None, str]
Entry = tuple[str, str, Options]


@dataclass(frozen=True)
class Outcome:
    """Accepted with these contexts, or rejected with this message."""

    accepted: bool
    contexts: dict[str | None, list[Entry]]
    message: str | None = None


def _str(field: str) -> str | None:
    return None if field == "!" else unb64(field).decode("utf-8")


def _entries(fields: list[str], pos: int, count: int) -> tuple[list[Entry], int]:
    entries: list[Entry] = []
    for _ in range(count):
        module = _str(fields[pos]) or ""
        flag = fields[pos + 1]
        n = int(fields[pos + 2])
        pos += 3
        options: Options = {}
        for _ in range(n):
            options[_str(fields[pos])] = _str(fields[pos + 1]) or ""
            pos += 2
        entries.append((module, flag, options))
    return entries, pos


class JavaJaas:
    """Kafka's JaasContext and the JDK's ConfigFile, one JVM for many inputs."""

    def __init__(self) -> None:
        self._harness = JavaHarness("JaasHarness")

    def close(self) -> None:
        self._harness.close()

    def property(self, value: str) -> Outcome:
        fields = self._harness.call("P", b64(value))
        if fields[0] == "ERR":
            return Outcome(False, {}, _str(fields[2]))
        assert fields[0] == "OK", fields
        entries, _ = _entries(fields, 3, int(fields[2]))
        return Outcome(True, {_str(fields[1]): entries})

    def file(self, text: str, properties: Mapping[str, str]) -> Outcome:
        args = [str(len(properties))]
        for key, value in properties.items():
            args += [b64(key), b64(value)]
        fields = self._harness.call("F", b64(text), *args)
        if fields[0] == "ERR":
            assert unb64(fields[1]).decode() != "harness", unb64(fields[2])
            return Outcome(False, {}, _str(fields[2]))
        assert fields[0] == "OK", fields
        contexts: dict[str | None, list[Entry]] = {}
        pos = 2
        for _ in range(int(fields[1])):
            name = _str(fields[pos])
            entries, pos = _entries(fields, pos + 2, int(fields[pos + 1]))
            contexts[name] = entries
        return Outcome(True, contexts)


def _entry(e: jaas.LoginModuleEntry) -> Entry:
    options: Options = dict(e.options.items())
    if e.null_key_value is not None:
        options[None] = e.null_key_value
    return (e.module, e.flag.name, options)


def python_property(value: str) -> Outcome:
    """What ``jaas`` says JaasContext.loadClientContext does with ``value``."""
    try:
        context = jaas.load_client_context(value)
    except jaas.JaasError as exc:
        return Outcome(False, {}, exc.java_message)
    return Outcome(True, {context.name: [_entry(e) for e in context.entries]})


def python_file(text: str, properties: Mapping[str, str]) -> Outcome:
    """What ``jaas`` says the JDK's ConfigFile does with ``text``."""
    try:
        config = jaas.parse_file(text, expand_properties=properties)
    except jaas.JaasSyntaxError as exc:
        return Outcome(False, {}, exc.java_message)
    # Configuration.getAppConfigurationEntry returns null for an empty context.
    return Outcome(
        True, {c.name: [_entry(e) for e in c.entries] for c in config.contexts if c.entries}
    )
