"""Self-signed PEM material for TLS tests (generated, never committed)."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["self_signed"]


def self_signed(
    directory: Path,
    name: str = "localhost",
    key_password: str | None = None,
    ip: str | None = None,
) -> tuple[Path, Path]:
    """``(ca.pem, keystore.pem)``: a self-signed CA certificate for ``name`` and a
    Kafka-style PEM keystore holding the certificate and its (optionally
    encrypted) private key."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName(name)] + ([x509.IPAddress(ipaddress.ip_address(ip))] if ip else [])
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(key_password.encode())
        if key_password
        else serialization.NoEncryption()
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )
    ca, keystore = directory / "ca.pem", directory / f"{name}.pem"
    ca.write_bytes(cert_pem)
    keystore.write_bytes(key_pem + cert_pem)
    return ca, keystore
