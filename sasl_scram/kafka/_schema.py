"""Message schemas as data, with one generic encoder and decoder.

A schema is a tree of :class:`Struct` and :class:`Field` values transcribed
from Kafka's ``common/message/*.json``: each field knows the versions it
exists in, from which version it may be null, its default and, for tagged
fields, its tag. Flexible versions (KIP-482) switch every string, bytes and
array to the compact form and end every struct with a tagged-field section.
Values are plain dicts keyed by snake_case field name, so the same code
serves requests and responses, client and server.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from sasl_scram.kafka._errors import MalformedMessage
from sasl_scram.kafka._primitives import Reader
from sasl_scram.kafka._primitives import Writer

__all__ = [
    "BOOL",
    "BYTES",
    "FLOAT64",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "RECORDS",
    "STRING",
    "UINT16",
    "UNKNOWN_TAGS",
    "UUID",
    "Array",
    "Field",
    "Struct",
]

Value = Any
#: The key under which a struct's value keeps the tagged fields its schema does
#: not know, as ``[(tag, raw bytes)]``; written back in tag order.
UNKNOWN_TAGS = "_unknown_tags"


class _Primitive:
    __slots__ = ("default", "name")

    def __init__(self, name: str, default: Value) -> None:
        self.name = name
        self.default = default

    def __repr__(self) -> str:
        return self.name


INT8 = _Primitive("int8", 0)
INT16 = _Primitive("int16", 0)
INT32 = _Primitive("int32", 0)
INT64 = _Primitive("int64", 0)
#: Kafka's ``uint16`` (the listener ports of the inter-broker registrations
#: and KIP-951's node endpoints): two bytes, unsigned.
UINT16 = _Primitive("uint16", 0)
BOOL = _Primitive("bool", False)
UUID = _Primitive("uuid", bytes(16))
STRING = _Primitive("string", "")
BYTES = _Primitive("bytes", b"")
FLOAT64 = _Primitive("float64", 0.0)
#: Kafka's ``records`` (Produce's and Fetch's record batches, MemoryRecords):
#: bytes on the wire, nullable where the field is, and kept as those raw bytes,
#: never parsed: batches are the broker's and the client's business (their
#: compression, CRCs and versions), and a proxy passes them on unchanged.
#: Kafka's default for a records field is null (FieldSpec.fieldDefault).
RECORDS = _Primitive("records", b"")
#: The primitives written as a length then bytes.
_SIZED = frozenset({"string", "bytes", "records"})

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


@dataclass(frozen=True)
class Array:
    """``[T]``: an array of a primitive or of structs."""

    element: _Primitive | Struct


@dataclass(frozen=True)
class Field:
    """One field of a struct.

    Attributes:
        name: snake_case key in the value dict.
        type: a primitive, :class:`Array` or :class:`Struct`.
        since: first version the field exists in.
        until: last version it exists in (inclusive), or ``None``.
        nullable_since: first version in which null is allowed, or ``None``.
        default: the value when absent or not given; Java's generator defaults
            otherwise (0, false, "", empty bytes, empty array, zero UUID).
        tag: the tag of a tagged field (flexible versions only).
        null_default: the default is null (``"default": "null"`` in the JSON).
    """

    name: str
    type: _Primitive | Array | Struct
    since: int = 0
    until: int | None = None
    nullable_since: int | None = None
    default: Value = field(default=None)
    tag: int | None = None
    null_default: bool = False

    def present(self, version: int) -> bool:
        return self.since <= version and (self.until is None or version <= self.until)

    def nullable(self, version: int) -> bool:
        return self.nullable_since is not None and version >= self.nullable_since

    def default_value(self) -> Value:
        if self.null_default:
            return None
        if self.default is not None:
            return self.default
        if isinstance(self.type, Array):
            return []
        if isinstance(self.type, Struct):
            return None
        return self.type.default


_ReadStep = Callable[[Reader], Value]
_WriteStep = Callable[[Writer, Value], None]


@dataclass(frozen=True)
class Struct:
    """An ordered list of fields; tagged fields go to the struct's tag section.

    Reading and writing go through a plan compiled once per (version,
    flexible): the field list is filtered and each field's codec chosen up
    front, so the per-message cost is one call per field.
    """

    fields: tuple[Field, ...]

    def __init__(self, *fields: Field) -> None:
        object.__setattr__(self, "fields", tuple(fields))
        object.__setattr__(self, "_plans", {})

    def _plan(
        self, version: int, flexible: bool
    ) -> tuple[
        list[tuple[str, _ReadStep]],
        dict[str, Value],
        dict[int, Field],
        list[tuple[str, Value, _WriteStep]],
        list[tuple[Field, Value, bytes | None]],
    ]:
        key = (version, flexible)
        plans: dict[tuple[int, bool], Any] = self._plans  # type: ignore[attr-defined]
        plan = plans.get(key)
        if plan is None:
            reads: list[tuple[str, _ReadStep]] = []
            writes: list[tuple[str, Value, _WriteStep]] = []
            defaults: dict[str, Value] = {}
            tagged: dict[int, Field] = {}
            tagged_writes: list[tuple[Field, Value, bytes | None]] = []
            for f in self.fields:
                default = f.default_value()
                if not f.present(version) or (f.tag is not None and not flexible):
                    defaults[f.name] = default
                elif f.tag is not None:
                    tagged[f.tag] = f
                    defaults[f.name] = default
                    tagged_writes.append((f, default, _default_struct(f, version)))
                else:
                    reads.append((f.name, _compile_read(f, version, flexible)))
                    writes.append((f.name, default, _compile_write(f, version, flexible)))
            plan = (reads, defaults, tagged, writes, tagged_writes)
            plans[key] = plan
        return plan

    # -- decoding ---------------------------------------------------------
    def read(self, r: Reader, version: int, flexible: bool) -> dict[str, Value]:
        reads, defaults, tagged, _, _ = self._plan(version, flexible)
        out = dict(defaults)
        for name, step in reads:
            out[name] = step(r)
        if flexible:
            _read_tags(r, tagged, out, version)
        return out

    # -- encoding ---------------------------------------------------------
    def write(self, w: Writer, value: Mapping[str, Value], version: int, flexible: bool) -> None:
        _, _, _, writes, tagged_writes = self._plan(version, flexible)
        get = value.get if value is not None else {}.get
        for name, default, step in writes:
            step(w, get(name, default))
        if flexible:
            tagged: list[tuple[int, bytes]] = []
            for f, default, default_bytes in tagged_writes:
                v = get(f.name, default)
                if v != default:
                    sub = Writer()
                    _write_value(sub, f, v, version, flexible)
                    data = sub.getvalue()
                    if data != default_bytes:
                        assert f.tag is not None
                        tagged.append((f.tag, data))
            unknown = get(UNKNOWN_TAGS)
            if unknown:
                tagged.extend(unknown)
            w.uvarint(len(tagged))
            for tag, data in sorted(tagged):
                w.uvarint(tag)
                w.uvarint(len(data))
                w.raw(data)


def _default_struct(f: Field, version: int) -> bytes | None:
    """A tagged struct's default instance as written, or None for other fields.

    Kafka writes a tagged field only when it differs from its default, for a
    struct a new instance with every default (FieldSpec's
    generateNonDefaultValueCheck): Fetch's DivergingEpoch with epoch -1 and
    offset -1 is left out like an absent one.
    """
    if not isinstance(f.type, Struct) or f.null_default:
        return None
    w = Writer()
    f.type.write(w, {}, version, True)
    return w.getvalue()


def _compile_read(f: Field, version: int, flexible: bool) -> _ReadStep:
    t = f.type
    if isinstance(t, _Primitive) and t.name in _FIXED_READERS:
        return _FIXED_READERS[t.name]
    return lambda r: _read_value(r, f, version, flexible)


def _compile_write(f: Field, version: int, flexible: bool) -> _WriteStep:
    t = f.type
    if isinstance(t, _Primitive) and t.name in _INT_RANGES:
        low, high = _INT_RANGES[t.name]
        method = _int_writer(t.name)

        def write_int(w: Writer, v: Value) -> None:
            if (type(v) is not int and not isinstance(v, int)) or not low <= v <= high:
                raise ValueError(f"field {f.name!r}: {v!r} is not an {t.name}")
            method(w, v)

        return write_int
    if isinstance(t, _Primitive) and t.name in _SIZED and not f.nullable(version):
        encode = Writer.string if t.name == "string" else Writer.bytes_
        default = f.default_value()

        def write_text(w: Writer, v: Value) -> None:
            encode(w, default if v is None else v, flexible)

        return write_text
    return lambda w, v: _write_value(w, f, v, version, flexible)


def _int_writer(name: str) -> Callable[[Writer, int], None]:
    method: Callable[[Writer, int], None] = getattr(Writer, name)
    return method


_FIXED_READERS: dict[str, _ReadStep] = {
    "int8": Reader.int8,
    "int16": Reader.int16,
    "int32": Reader.int32,
    "int64": Reader.int64,
    "uint16": Reader.uint16,
    "bool": Reader.boolean,
    "uuid": Reader.uuid,
    "float64": Reader.float64,
}


def _read_tags(r: Reader, known: Mapping[int, Field], out: dict[str, Value], version: int) -> None:
    count = r.uvarint()
    if count > r.remaining():
        raise MalformedMessage(f"{count} tagged fields in {r.remaining()} bytes")
    last = -1
    for _ in range(count):
        tag = r.uvarint()
        size = r.uvarint()
        # Kafka's reader rejects out-of-order or duplicate tags.
        if tag <= last:
            raise MalformedMessage(f"tagged field {tag} out of order")
        last = tag
        data = r.raw(size)
        f = known.get(tag)
        if f is not None:
            sub = Reader(data)
            sub.max_array = r.max_array
            sub.keep_unknown_tags = r.keep_unknown_tags
            out[f.name] = _read_value(sub, f, version, True)
        elif r.keep_unknown_tags:
            # Unknown tags are skipped by their size (KIP-482), and kept raw so
            # a proxy that rewrites a message passes them on unchanged.
            out.setdefault(UNKNOWN_TAGS, []).append((tag, data))


def _read_value(r: Reader, f: Field, version: int, flexible: bool) -> Value:
    t = f.type
    if isinstance(t, Array):
        n = r.array_length(flexible)
        if n < 0:
            return _null(f, version, "array")
        el = t.element
        if isinstance(el, Struct):
            return [el.read(r, version, flexible) for _ in range(n)]
        return [_read_primitive(r, el, flexible, f, version, element=True) for _ in range(n)]
    if isinstance(t, Struct):
        # A nullable struct opens with an int8: -1 for null, 1 for present
        # (Kafka's generated ``read``).
        if f.nullable(version) and r.int8() < 0:
            return None
        return t.read(r, version, flexible)
    return _read_primitive(r, t, flexible, f, version)


def _read_primitive(
    r: Reader, t: _Primitive, flexible: bool, f: Field, version: int, element: bool = False
) -> Value:
    """One value of ``t``; ``element``: an element of the array ``f``, which may
    never be null, whatever the array may be (Kafka's generated readers: "non-nullable
    field ... element was serialized as null")."""
    name = t.name
    if name == "int16":
        return r.int16()
    if name == "int32":
        return r.int32()
    if name == "string":
        s = r.string(flexible)
        if s is None:
            return _null_element(f) if element else _null(f, version, "string")
        return s
    if name == "bytes" or name == "records":
        b = r.bytes_(flexible)
        if b is None:
            return _null_element(f) if element else _null(f, version, name)
        return b
    if name == "int8":
        return r.int8()
    if name == "int64":
        return r.int64()
    if name == "bool":
        return r.boolean()
    if name == "uuid":
        return r.uuid()
    if name == "float64":
        return r.float64()
    if name == "uint16":
        return r.uint16()
    raise AssertionError(name)  # pragma: no cover


def _null_element(f: Field) -> None:
    raise MalformedMessage(f"null element of {f.name!r}")


def _null(f: Field, version: int, what: str) -> None:
    if not f.nullable(version):
        raise MalformedMessage(f"null {what} for non-nullable field {f.name!r}")
    return None


def _write_value(w: Writer, f: Field, v: Value, version: int, flexible: bool) -> None:
    t = f.type
    if isinstance(t, Struct) and f.nullable(version):
        w.int8(-1 if v is None else 1)
        if v is None:
            return
    if v is None:
        if isinstance(t, Array):
            if not f.nullable(version):
                raise ValueError(f"field {f.name!r} is not nullable in version {version}")
            w.length(-1, flexible, "array")
            return
        if isinstance(t, _Primitive) and t.name in _SIZED:
            if not f.nullable(version):
                raise ValueError(f"field {f.name!r} is not nullable in version {version}")
            w.length(-1, flexible, t.name)
            return
        v = f.default_value()
    if isinstance(t, Array):
        items: Sequence[Value] = v
        w.length(len(items), flexible, "array")
        el = t.element
        if isinstance(el, Struct):
            for item in items:
                el.write(w, item, version, flexible)
        else:
            for item in items:
                _write_primitive(w, el, item, flexible, f)
        return
    if isinstance(t, Struct):
        t.write(w, v, version, flexible)
        return
    _write_primitive(w, t, v, flexible, f)


def _write_primitive(w: Writer, t: _Primitive, v: Value, flexible: bool, f: Field) -> None:
    name = t.name
    bounds = _INT_RANGES.get(name)
    if bounds is not None:
        if not isinstance(v, int) or not bounds[0] <= v <= bounds[1]:
            raise ValueError(f"field {f.name!r}: {v!r} is not an {name}")
        _int_writer(name)(w, v)
    elif name == "string":
        w.string(v, flexible)
    elif name == "bytes" or name == "records":
        w.bytes_(v, flexible)
    elif name == "bool":
        w.boolean(bool(v))
    elif name == "uuid":
        w.uuid(v)
    elif name == "float64":
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise ValueError(f"field {f.name!r}: {v!r} is not a float64")
        w.float64(float(v))
    else:  # pragma: no cover
        raise AssertionError(name)
