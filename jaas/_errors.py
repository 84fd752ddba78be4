"""The ``jaas`` error hierarchy: one root, a syntax branch and a resolution branch."""

from __future__ import annotations

__all__ = [
    "JaasConfigurationError",
    "JaasCredentialsError",
    "JaasError",
    "JaasSyntaxError",
]


class JaasError(ValueError):
    """Root of every error raised by the ``jaas`` package.

    Attributes:
        java_message: The message Kafka or the JDK gives for the same input,
            when it rejects it too (``None`` when Java's exception has no
            message or Java has no equivalent check).
    """

    def __init__(self, message: str, *, java_message: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.java_message = java_message


class JaasSyntaxError(JaasError):
    """A configuration text that Kafka's ``JaasConfig`` or the JDK rejects.

    ``str()`` gives ``file:line:column: expected X, got Y`` followed by the
    source line (secrets masked) and a caret under the offending token.

    Attributes:
        expected: What the parser needed at that point.
        got: What it found instead, described for humans (secrets masked).
        filename: The file name, or ``<sasl.jaas.config>`` for a property.
        line: 1-based line of the offending token.
        column: 1-based column (in characters) of the offending token.
        source_line: The offending line with secret values masked.
        width: How many characters the caret underline covers.
        caret_column: Where the caret goes under ``source_line`` (1-based),
            which differs from ``column`` when a secret before it was masked.
    """

    def __init__(
        self,
        *,
        expected: str,
        got: str,
        filename: str,
        line: int,
        column: int,
        source_line: str,
        width: int = 1,
        hint: str | None = None,
        java_message: str | None = None,
        caret_column: int | None = None,
    ) -> None:
        message = f"expected {expected}, got {got}"
        if hint:
            message = f"{message} ({hint})"
        super().__init__(message, java_message=java_message)
        self.expected = expected
        self.got = got
        self.hint = hint
        self.filename = filename
        self.line = line
        self.column = column
        self.source_line = source_line
        self.width = max(1, width)
        self.caret_column = column if caret_column is None else caret_column

    def __str__(self) -> str:
        # Tabs are kept so the caret stays under the token in a terminal.
        pad = "".join(
            "\t" if ch == "\t" else " " for ch in self.source_line[: self.caret_column - 1]
        )
        caret = pad + "^" + "~" * (self.width - 1)
        return (
            f"{self.filename}:{self.line}:{self.column}: {self.message}\n"
            f"    {self.source_line}\n"
            f"    {caret}"
        )


class JaasConfigurationError(JaasError):
    """A well-formed configuration that Kafka refuses to use.

    Raised for Kafka's ``JaasContext`` rules: a property with other than one
    login module, a disallowed login module, a missing context. The message
    is Kafka's own, so ``java_message`` equals it.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, java_message=message)


class JaasCredentialsError(JaasError):
    """A login module entry that does not carry usable SCRAM credentials."""
