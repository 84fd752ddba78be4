"""Coverage-guided fuzzing of every input surface (``make fuzz``), with atheris.

    python fuzz/run.py                       # every target, FUZZ_SECONDS each (60)
    python fuzz/run.py --seconds 600 jaas    # one target for ten minutes
    python fuzz/run.py --jobs 2              # two targets at a time (FUZZ_JOBS)

Each target runs in its own process on the pure-Python core (compiled modules
carry no coverage instrumentation), starting from the committed corpus in
``fuzz/corpus/<target>/`` plus what earlier runs found (kept outside the
repository, in ``~/.cache/kafka-scram/fuzz/<target>/``). A crash, a slow input
or a memory blow-up is saved to ``fuzz/crashes/<target>/`` as a reproducer,
which ``make test`` then replays. It prints one row per target: executions per
second, coverage (libFuzzer's edges ``cov`` and features ``ft``), the corpus
size and the crashes found. Exit status 1 when any target crashed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
CRASHES = ROOT / "fuzz" / "crashes"
#: libFuzzer's limits: inputs up to 64 KiB, 2 GiB of RSS, 512 MiB in one malloc.
MAX_LEN = 65536
RSS_LIMIT_MB = 2048
MALLOC_LIMIT_MB = 512
_STATS = re.compile(
    r"#(?P<runs>\d+)\s+(?:DONE|pulse|NEW|REDUCE|INITED)\s+cov: (?P<cov>\d+) ft: (?P<ft>\d+)"
    r"(?:.*?corp: (?P<corp>\d+))?(?:.*?exec/s: (?P<eps>\d+))?"
)


def work_corpus(target: str) -> Path:
    root = os.environ.get("KAFKA_SCRAM_CACHE") or str(Path.home() / ".cache" / "kafka-scram")
    path = Path(root) / "fuzz" / target
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass
class Result:
    target: str
    seconds: float
    runs: int = 0
    edges: int = 0
    features: int = 0
    corpus: int = 0
    crashes: int = 0
    status: int = 0

    @property
    def per_second(self) -> int:
        return int(self.runs / self.seconds) if self.seconds else 0


def _worker(target_name: str, argv: list[str]) -> None:
    """Inside the fuzzing process: instrument our packages, then fuzz one target."""
    import logging

    import atheris

    logging.disable(logging.CRITICAL)  # a parser's warnings are not findings
    # startswith/endswith comparisons feed the fuzzer their strings. (atheris
    # 3.0's RegEx hook is not used: its pattern proxy breaks json's
    # ``match(s, pos)`` calls.)
    atheris.enabled_hooks.add("str")
    with atheris.instrument_imports(include=["sasl_scram", "tokenauth", "jaas"]):
        from fuzz.targets import TARGETS
        from fuzz.targets import run_one
    target = TARGETS[target_name]

    def one_input(data: bytes) -> None:
        run_one(target, data)

    atheris.Setup([sys.argv[0], *argv], one_input)
    atheris.Fuzz()


def fuzz(target: str, seconds: int) -> Result:
    """Run one target in a child process and read libFuzzer's statistics."""
    crashes = CRASHES / target
    crashes.mkdir(parents=True, exist_ok=True)
    before = set(crashes.iterdir())
    seeds = CORPUS / target
    args = [
        f"-max_total_time={seconds}",
        f"-max_len={MAX_LEN}",
        f"-rss_limit_mb={RSS_LIMIT_MB}",
        f"-malloc_limit_mb={MALLOC_LIMIT_MB}",
        "-timeout=5",
        "-print_final_stats=1",
        f"-artifact_prefix={crashes}/",
        str(work_corpus(target)),
    ]
    if seeds.is_dir():
        args.append(str(seeds))
    env = dict(os.environ, KAFKA_SCRAM_PURE_PYTHON="1", PYTHONPATH=str(ROOT))
    started = time.monotonic()
    proc = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, __file__, "--worker", target, *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=seconds + 120,
    )
    result = Result(target, time.monotonic() - started, status=proc.returncode)
    for match in _STATS.finditer(proc.stderr):
        result.runs = int(match["runs"])
        result.edges = int(match["cov"])
        result.features = int(match["ft"])
        if match["corp"]:
            result.corpus = int(match["corp"])
    result.crashes = len(set(crashes.iterdir()) - before)
    if proc.returncode != 0:
        # What libFuzzer and atheris said about the finding, without the stats.
        # atheris prints an uncaught Python exception's traceback on stdout.
        output = proc.stdout + proc.stderr
        said = [line for line in output.splitlines() if not line.startswith(("#", "INFO"))]
        sys.stderr.write(f"== {target} ==\n" + "\n".join(said[-40:]) + "\n")
    return result


def main(argv: list[str]) -> int:
    if argv[:1] == ["--worker"]:
        _worker(argv[1], argv[2:])
        return 0
    sys.path.insert(0, str(ROOT))
    from fuzz.targets import TARGETS

    parser = argparse.ArgumentParser(prog="fuzz/run.py", description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", choices=[[], *TARGETS], default=[])
    parser.add_argument(
        "--seconds", type=int, default=int(os.environ.get("FUZZ_SECONDS", "60") or "60")
    )
    # One target is one single-threaded process, so a machine with spare cores
    # can run several side by side; the default of one keeps each figure clean.
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("FUZZ_JOBS", "1") or "1"))
    options = parser.parse_args(argv)
    if options.jobs < 1:
        parser.error(f"--jobs must be at least 1, not {options.jobs}")
    names = options.targets or list(TARGETS)
    print(f"{'target':<20} {'exec/s':>8} {'edges':>7} {'features':>9} {'corpus':>7} crashes")
    failed = False
    with ThreadPoolExecutor(max_workers=options.jobs) as pool:
        results = pool.map(lambda name: fuzz(name, options.seconds), names)
        for name, r in zip(names, results, strict=True):
            failed |= r.crashes > 0 or r.status != 0
            print(
                f"{name:<20} {r.per_second:>8} {r.edges:>7} {r.features:>9} {r.corpus:>7} "
                f"{r.crashes}",
                flush=True,
            )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
