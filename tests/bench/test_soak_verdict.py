"""The soak's verdict (bench/soak.py): a series that grows fails, one that
wanders within noise passes, and a failed login, a traceback or wrong passwords
refused off the failure budget's pace fail the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import soak


def test_a_leaking_series_fails_and_a_flat_noisy_one_passes() -> None:
    minutes = [float(m) for m in range(10)]
    leaking = [40.0 + 1.5 * m for m in range(10)]
    growth, ok = soak.slope_verdict("rss_mb", leaking, minutes)
    assert not ok and abs(growth - 13.5) < 1e-6
    noisy = [40.0, 41.0, 39.5, 40.5, 40.0, 39.8, 40.6, 40.1, 39.9, 40.2]
    assert soak.slope_verdict("rss_mb", noisy, minutes)[1]
    # Descriptors: two more over the run is noise, ten more is a leak.
    assert soak.slope_verdict("fds", [18.0] * 9 + [20.0], minutes)[1]
    assert not soak.slope_verdict("fds", [18.0 + m for m in range(10)], minutes)[1]


def _sample(
    minute: float, rss: float, errors: int = 0, refused: int = 80, slowed: int = 60
) -> soak.Sample:
    return soak.Sample(minute, rss, 18, 3, 0, 1000, errors, 100, 0, refused, slowed, 60.0)


def test_wrong_passwords_must_be_refused_at_the_budgets_pace() -> None:
    # The guessed pair: 20 at once, then one a second; two windows may start in
    # one minute.
    assert soak.budget_failures(_sample(1.0, 40.0, refused=80)) == []
    assert soak.budget_failures(_sample(1.0, 40.0, refused=100)) == []
    (unpaced,) = soak.budget_failures(_sample(1.0, 40.0, refused=1600))
    assert "past the budget's pace (110)" in unpaced
    (few,) = soak.budget_failures(_sample(1.0, 40.0, refused=10))
    assert "only 10 wrong passwords refused" in few
    (held,) = soak.budget_failures(_sample(1.0, 40.0, slowed=0))
    assert "no verdict held past the failure budget" in held


@pytest.mark.slow
def test_the_report_fails_on_growth_failed_logins_and_tracebacks(tmp_path: Path) -> None:
    flat = [_sample(float(m), 40.0) for m in range(8)]
    run = soak.Soak(tmp_path)
    assert soak.report(flat, run, "INFO ready\n", tmp_path / "ok") == 0
    assert "Verdict: PASS" in (tmp_path / "ok" / "soak.md").read_text()
    assert (tmp_path / "ok" / "soak.png").stat().st_size > 1000
    growing = [_sample(float(m), 40.0 + 5 * m) for m in range(8)]
    assert soak.report(growing, run, "", tmp_path / "grows") == 1
    assert "rss_mb grows" in (tmp_path / "grows" / "soak.md").read_text()
    failed = [*flat[:-1], _sample(7.0, 40.0, errors=3)]
    assert soak.report(failed, run, "", tmp_path / "failed") == 1
    assert soak.report(flat, run, "Traceback (most recent call last):", tmp_path / "tb") == 1
