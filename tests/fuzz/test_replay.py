"""The fuzz targets in the suite: the committed corpus and every saved crash
replay through their target as ordinary tests, and each target fuzzes for a
few seconds under atheris so that the harness cannot rot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fuzz.targets import TARGETS
from fuzz.targets import SlowInput
from fuzz.targets import Target
from fuzz.targets import run_one

ROOT = Path(__file__).resolve().parents[2]
FUZZ = ROOT / "fuzz"


def _inputs(folder: str) -> list[tuple[str, Path]]:
    return [
        (target, path)
        for target in TARGETS
        for path in sorted((FUZZ / folder / target).glob("*"))
        if path.is_file()
    ]


CORPUS = _inputs("corpus")
#: Reproducers ``make fuzz`` saved; each stays after its fix, as a regression test.
CRASHES = _inputs("crashes")
REPLAYED = CORPUS + CRASHES


def test_every_target_has_a_seed_corpus() -> None:
    seeded = {target for target, _ in CORPUS}
    assert seeded == set(TARGETS)


@pytest.mark.parametrize(
    ("target", "path"),
    REPLAYED,
    ids=[f"{p.parent.parent.name}/{t}/{p.name[:16]}" for t, p in REPLAYED],
)
def test_corpus_and_saved_crashes_replay(target: str, path: Path) -> None:
    run_one(TARGETS[target], path.read_bytes())


def test_the_seeds_reach_past_the_login() -> None:
    """The after-login seeds are answered by the handlers, not refused: a
    harness whose own login broke would fuzz nothing past authentication."""
    from fuzz import targets

    served = targets._served()
    answered = 0
    for target, path in CORPUS:
        if target != "frames_after_auth":
            continue
        conn = served.connection()
        served.login(conn)
        answered += len(served.drive(conn, conn.receive(path.read_bytes())))
    assert answered == sum(1 for t, _ in CORPUS if t == "frames_after_auth")


def test_an_undocumented_error_is_a_finding() -> None:
    def parser(data: bytes) -> None:
        raise KeyError(data)

    with pytest.raises(KeyError):
        run_one(Target("t", parser, (ValueError,), "raises KeyError"), b"x")
    run_one(Target("t", parser, (KeyError,), "documents KeyError"), b"x")


@pytest.mark.slow
def test_a_slow_input_is_a_finding() -> None:
    import time

    with pytest.raises(SlowInput):
        run_one(Target("slow", lambda data: _spin(0.15), (), "computes"), b"x")
    # Waiting is not computing: only CPU time counts, so a loaded machine
    # that deschedules the parser makes no finding.
    run_one(Target("waits", lambda data: time.sleep(0.15), (), "sleeps"), b"x")


def _spin(seconds: float) -> None:
    import time

    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


# Three seconds of atheris a target, in a child process.
@pytest.mark.slow
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_each_target_fuzzes_briefly(target: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(FUZZ / "run.py"), "--seconds", "3", target],
        capture_output=True,
        text=True,
        timeout=180,
        env={"KAFKA_SCRAM_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    row = done.stdout.splitlines()[-1].split()
    assert row[0] == target
    runs_per_second, edges = int(row[1]), int(row[2])
    assert runs_per_second > 0 and edges > 0, done.stdout


def test_tokens_the_inputs_create_do_not_pile_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every DescribeDelegationToken answers with every token earlier inputs
    created: without a fresh endpoint now and then, inputs cost more and more
    until an innocent one passes the time limit (the first ten-minute run's
    finding)."""
    from fuzz import targets
    from sasl_scram.kafka import decode_response
    from sasl_scram.kafka import encode_request

    monkeypatch.setattr(targets, "REFRESH_EVERY", 3)
    monkeypatch.setattr(targets, "_endpoint", None)
    create = encode_request(38, 2, 7, "fuzz", {"renewers": [], "max_lifetime_ms": -1})
    describe = encode_request(41, 2, 8, "fuzz", {"owners": None})

    def described() -> int:
        served = targets._served()
        conn = served.connection()
        served.login(conn)
        (answer,) = served.drive(conn, conn.receive(describe))
        body = decode_response(41, 2, answer.data[4:])[1]
        assert body["error_code"] == 0, body
        return len(body["tokens"])

    counts = []
    for _ in range(6):
        targets._frames_after_auth(create)
        counts.append(described())
    assert targets._endpoint is not None
    targets._endpoint.close()
    assert counts[0] == 1 and max(counts) <= 2, counts
