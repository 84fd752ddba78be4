"""examples/spark_structured_streaming.py runs against our endpoint, rotating a token."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

import jaas
from tests.endpoint_harness import ALICE, RunningEndpoint, token_extension
from tokenauth.spark import SupervisorState

pytestmark = pytest.mark.java

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "spark_structured_streaming.py"


def test_example_runs_and_rotates(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = importlib.util.spec_from_file_location("spark_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)

    ext, _ = token_extension(("example-secret",), expiry_time_ms=3_000, max_lifetime_ms=4_000)
    with RunningEndpoint(extensions=[ext]) as endpoint:
        props = tmp_path / "client.properties"
        props.write_text(
            f"bootstrap.servers={endpoint.bootstrap}\n"
            "security.protocol=SASL_PLAINTEXT\n"
            "sasl.mechanism=SCRAM-SHA-256\n"
            f"sasl.jaas.config={jaas.scram_login_line(*ALICE)}\n"
        )
        supervisor = example.main(
            [
                "--client-properties", str(props),
                "--checkpoint", str(tmp_path / "ckpt"),
                "--output", str(tmp_path / "out"),
                "--seconds", "6",
                "--trigger-ms", "250",
            ],
            spark=spark,
        )  # fmt: skip
    assert supervisor.state is SupervisorState.STOPPED
    assert supervisor.rotations >= 1
    out = capsys.readouterr().out
    assert "stopped after" in out and "alice-secret" not in out
    values = sorted(r.value for r in spark.read.json(str(tmp_path / "out")).collect())
    assert values and values == list(range(len(values)))
