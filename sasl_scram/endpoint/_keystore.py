"""A SASL_SSL listener's key and certificates: Kafka's five ``ssl.keystore.*``
and ``ssl.key.password`` keys as one typed value.

Kafka takes a PEM keystore as a file (``ssl.keystore.location``) or inline
(``ssl.keystore.certificate.chain`` and ``ssl.keystore.key``, KIP-651), with
``ssl.key.password`` for an encrypted key; so does ``serve``.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from dataclasses import dataclass
from dataclasses import field

from sasl_scram._errors import ScramConfigError

__all__ = ["SslKeystore"]


@dataclass(frozen=True)
class SslKeystore:
    """One field per key; the secrets never in a repr."""

    type: str | None = None
    location: str | None = None
    certificate_chain: str | None = field(default=None, repr=False)
    key: str | None = field(default=None, repr=False)
    key_password: str | None = field(default=None, repr=False)

    def check(self) -> None:
        """Raise a one-line error when a SASL_SSL listener could not get a key."""
        if (self.type or "PEM").upper() != "PEM":
            raise ScramConfigError("ssl.keystore.type: only PEM is supported")
        if not ((self.location or "").strip() or (self.certificate_chain or "").strip()):
            raise ScramConfigError(
                "SASL_SSL listener needs ssl.keystore.location (a PEM file with the "
                "certificate chain and private key) or ssl.keystore.certificate.chain "
                "and ssl.keystore.key"
            )

    def server_context(self) -> ssl.SSLContext:
        """A server-side TLS context with this key and its certificates.

        Raises:
            ScramConfigError: the key names the key at fault and the reason,
                never the file's bytes nor the key's password.
        """
        try:
            return self._load()
        except OSError as exc:  # ssl.SSLError too: a file that is not PEM
            key = "ssl.keystore.location" if self.location else "ssl.keystore.certificate.chain"
            source = f" from {self.location}" if self.location else ""
            raise ScramConfigError(
                f"{key}: cannot load the TLS key and certificate{source}: "
                f"{exc.strerror or exc}; give a PEM file with the certificate chain and "
                "its private key"
            ) from None

    def _load(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        password = self.key_password or None
        if self.location:
            context.load_cert_chain(self.location, password=password)
            return context
        # Inline PEM: ssl loads only files, so through an owner-only folder.
        with tempfile.TemporaryDirectory() as tmp:
            cert = os.path.join(tmp, "cert.pem")
            key = os.path.join(tmp, "key.pem")
            with open(cert, "w", encoding="ascii") as f:
                f.write(self.certificate_chain or "")
            with open(os.open(key, os.O_WRONLY | os.O_CREAT, 0o600), "w", encoding="ascii") as f:
                f.write(self.key or "")
            context.load_cert_chain(cert, key, password=password)
        return context
