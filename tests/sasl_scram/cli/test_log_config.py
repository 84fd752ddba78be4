"""``serve --log-config``: docs/security.md's example sends the audit trail to its
own file, and a bad file is one error line before anything starts."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from sasl_scram import KafkaPrincipal
from sasl_scram.audit import AUDIT_LOGGER_NAME
from sasl_scram.audit import audit
from sasl_scram.cli import main
from sasl_scram.cli._serve import apply_log_config
from tests.support.cli_process import ROOT

EXAMPLE = re.compile(r"<!-- audit log config -->\n```json\n(.*?)```", re.DOTALL)


@pytest.fixture
def audit_logger() -> Iterator[logging.Logger]:
    """The audit logger, put back as it was after the test configures it."""
    logger = logging.getLogger(AUDIT_LOGGER_NAME)
    saved = (list(logger.handlers), logger.level, logger.propagate, logger.disabled)
    yield logger
    for handler in logger.handlers:
        if handler not in saved[0]:
            handler.close()
    logger.handlers[:], logger.level, logger.propagate, logger.disabled = saved


def test_the_documented_example_routes_the_audit_lines_to_their_file(
    tmp_path: Path, audit_logger: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    match = EXAMPLE.search((ROOT / "docs" / "security.md").read_text(encoding="utf-8"))
    assert match is not None, "docs/security.md lost its audit log config example"
    config = json.loads(match[1])
    audit_file = tmp_path / "audit.log"
    config["handlers"]["audit"]["filename"] = str(audit_file)
    path = tmp_path / "logging.json"
    path.write_text(json.dumps(config))
    other = logging.getLogger("sasl_scram.endpoint")
    apply_log_config(str(path))
    assert not other.disabled  # loggers the file does not name keep logging
    with caplog.at_level(logging.INFO):
        audit(KafkaPrincipal("User", "alice"), False, "Alter", "127.0.0.1", ("User", "bob"), "X")
    for handler in audit_logger.handlers:
        handler.flush()
    (line,) = audit_file.read_text().splitlines()
    assert line.endswith(
        "Principal = User:alice is Denied Operation = Alter from host = 127.0.0.1 on "
        "resource = User:LITERAL:bob for request = X"
    )
    # propagate: false, so the line is not also on serve's stderr (the root logger).
    assert not [r for r in caplog.records if r.name == AUDIT_LOGGER_NAME]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (None, "--log-config: cannot read "),
        ("{not json", "--log-config: "),
        ("[1, 2]", "expected a JSON object"),
        ('{"handlers": {"h": {"class": "no.such.Handler"}}}', "Unable to configure handler 'h'"),
    ],
)
def test_a_bad_log_config_is_one_line(
    tmp_path: Path, audit_logger: logging.Logger, content: str | None, fragment: str
) -> None:
    path = tmp_path / "logging.json"
    if content is not None:
        path.write_text(content)
    stderr = io.StringIO()
    args = ["serve", "--config", str(tmp_path / "absent.properties"), "--log-config", str(path)]
    assert main(args, io.StringIO(), io.StringIO(), stderr) == 1
    error = stderr.getvalue()
    assert error.startswith("kafka-scram serve: error: --log-config: "), error
    assert fragment in error
    assert error.count("\n") == 1
