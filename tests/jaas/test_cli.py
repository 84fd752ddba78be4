"""``kafka-scram jaas check|show``."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import jaas
from sasl_scram.cli import main
from tests.support.cli_process import kafka_scram

GOOD = (
    "KafkaClient {\n"
    "    org.apache.kafka.common.security.scram.ScramLoginModule required\n"
    '    username="alice"\n'
    '    password="alice-secret";\n'
    "};\n"
)
BAD = "KafkaClient {\n    m required port=9092;\n};\n"


def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    # Other packages' subcommands may warn while they are being written.
    diagnostics = [
        line
        for line in err.getvalue().splitlines(keepends=True)
        if not line.startswith("kafka-scram: warning:")
    ]
    return code, out.getvalue(), "".join(diagnostics)


def test_check(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.conf", tmp_path / "bad.conf"
    good.write_text(GOOD)
    bad.write_text(BAD)
    assert run("jaas", "check", str(good)) == (0, f"{good}: OK (KafkaClient)\n", "")
    code, out, err = run("jaas", "check", str(good), str(bad))
    assert code == 1 and "OK" in out
    assert err.splitlines() == [
        f"kafka-scram jaas check: error: {bad}:2:21: expected a value for option 'port', "
        "got number 9092 (unquoted numbers are not allowed; quote the value)",
        "        m required port=9092;",
        "                        ^~~~",
    ]
    code, _, err = run("jaas", "check", str(tmp_path / "missing.conf"))
    assert code == 1 and "cannot read" in err


def test_check_expansion_and_disallowed(tmp_path: Path) -> None:
    path = tmp_path / "x.conf"
    path.write_text('KafkaClient { m required keytab="${kafka.home}/k"; };\n')
    assert run("jaas", "check", str(path))[0] == 0
    assert run("jaas", "check", "-Dkafka.home=/opt", str(path))[0] == 0
    code, _, err = run("jaas", "check", "-Dother=1", str(path))
    assert code == 1 and "undefined property 'kafka.home'" in err
    path.write_text("KafkaClient { com.sun.security.auth.module.JndiLoginModule required; };")
    code, _, err = run("jaas", "check", str(path))
    assert code == 1 and "is not allowed" in err


def test_show(tmp_path: Path) -> None:
    path = tmp_path / "good.conf"
    path.write_text(GOOD)
    code, out, _ = run("jaas", "show", str(path))
    assert code == 0 and "alice-secret" not in out and 'username="alice"' in out
    code, out, _ = run("jaas", "show", "--show-secrets", str(path))
    assert out == GOOD
    code, out, _ = run("jaas", "show", "--json", str(path))
    data = json.loads(out)
    assert data["contexts"][0]["entries"][0]["options"] == {
        "username": "alice",
        "password": "********",
    }
    code, out, _ = run(
        "jaas", "show", "--json", "--sasl-jaas-config", "-", stdin="m required password=pw;\n"
    )
    assert code == 0 and json.loads(out)["contexts"][0]["entries"][0]["options"] == {
        "password": "********"
    }
    code, out, _ = run("jaas", "show", "--show-secrets", "--sasl-jaas-config", "m Required a=b;")
    assert (code, out) == (0, 'm required a="b";\n')
    code, _, err = run("jaas", "show", "--sasl-jaas-config", "m required a=3;")
    assert code == 1 and "expected a value for option 'a'" in err


def test_usage_errors() -> None:
    # Bare, it lists its subcommands, as bare kafka-scram lists the commands.
    code, out, err = run("jaas")
    assert (code, out) == (2, "") and err.startswith("usage: kafka-scram jaas")
    assert "check" in err and "show" in err
    assert err.endswith("kafka-scram jaas: error: a subcommand is required: check or show\n")
    assert run("jaas", "show")[0] == 2
    assert run("jaas", "show", "f.conf", "--sasl-jaas-config", "x")[0] == 2
    assert run("jaas", "check", "-Dnovalue", "f.conf")[0] == 2


@pytest.mark.slow
def test_subprocess(tmp_path: Path) -> None:
    path = tmp_path / "good.conf"
    path.write_text(GOOD)
    script = Path(sys.executable).parent / "kafka-scram"
    done = subprocess.run(
        [str(script), "jaas", "check", str(path)], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (0, f"{path}: OK (KafkaClient)\n")


@pytest.mark.parametrize("secret", ["ab", "a-much-longer-secret-of-many-characters"])
def test_errors_mask_secrets_with_a_fixed_width(secret: str) -> None:
    with pytest.raises(jaas.JaasSyntaxError) as info:
        jaas.parse_property(f'm required password="{secret}" other=7;')
    text = str(info.value)
    assert secret not in text
    # The same text whatever the secret's length, caret included.
    assert text.splitlines()[1:] == [
        "    m required password=******** other=7;",
        "                                       ^",
    ]


@pytest.mark.slow
def test_show_masks_plain_login_module_user_passwords(tmp_path: Path) -> None:
    path = tmp_path / "server.conf"
    path.write_text(
        "KafkaServer {\n"
        "  org.apache.kafka.common.security.plain.PlainLoginModule required\n"
        '  username="admin" password="admin-pw" user_admin="admin-pw" user_bob="bob-pw";\n'
        "};\n"
    )
    shown = kafka_scram("jaas", "show", str(path))
    assert shown.returncode == 0 and 'username="admin"' in shown.stdout
    assert "bob-pw" not in shown.stdout and "admin-pw" not in shown.stdout
    assert 'user_bob="********"' in shown.stdout
    as_json = kafka_scram("jaas", "show", "--json", str(path))
    assert "bob-pw" not in as_json.stdout
    revealed = kafka_scram("jaas", "show", "--show-secrets", str(path))
    assert 'user_bob="bob-pw"' in revealed.stdout


TYPOS = (
    "KafkaClient {\n"
    "    org.apache.kafka.common.security.scram.ScramLoginModule required\n"
    '    username="alice"\n'
    '    passwrod="analytics-secret"\n'
    "    tokenauth=ture;\n"
    "};\n"
)
TYPO_WARNINGS = [
    "context KafkaClient: ScramLoginModule ignores option 'passwrod' (it reads only username, "
    "password and tokenauth); did you mean 'password'?",
    "context KafkaClient: ScramLoginModule reads tokenauth='ture' as false: only true (in any "
    "case) turns on delegation token login; did you mean 'true'?",
]


def test_check_warns_about_options_kafka_ignores(tmp_path: Path) -> None:
    path = tmp_path / "typos.conf"
    path.write_text(TYPOS)
    code, out, err = run("jaas", "check", str(path))
    assert (code, out) == (0, f"{path}: OK (KafkaClient), 2 warnings\n")
    assert err.splitlines() == [
        f"kafka-scram jaas check: warning: {path}: {w}" for w in TYPO_WARNINGS
    ]
    assert "analytics-secret" not in err


def test_check_strict_fails_on_a_warning(tmp_path: Path) -> None:
    typos, good = tmp_path / "typos.conf", tmp_path / "good.conf"
    typos.write_text(TYPOS)
    good.write_text(GOOD)
    code, out, err = run("jaas", "check", "--strict", str(typos), str(good))
    assert (code, out) == (1, f"{good}: OK (KafkaClient)\n")
    assert err.splitlines() == [
        f"kafka-scram jaas check: error: {typos}: {w}" for w in TYPO_WARNINGS
    ]
    assert run("jaas", "check", "--strict", str(good)) == (0, f"{good}: OK (KafkaClient)\n", "")


def test_show_masks_a_misspelled_password_and_warns(tmp_path: Path) -> None:
    path = tmp_path / "typos.conf"
    path.write_text(TYPOS)
    code, out, err = run("jaas", "show", str(path))
    assert code == 0 and "analytics-secret" not in out + err
    assert 'passwrod="********"' in out and 'username="alice"' in out
    assert err.splitlines() == [
        f"kafka-scram jaas show: warning: {path}: {w}" for w in TYPO_WARNINGS
    ]
    line = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="tok" password="hmac" tokenath=true;'
    )
    code, out, err = run("jaas", "show", "--sasl-jaas-config", line)
    assert code == 0 and 'tokenath="********"' in out
    assert err == (
        "kafka-scram jaas show: warning: sasl.jaas.config: ScramLoginModule ignores option "
        "'tokenath' (it reads only username, password and tokenauth); did you mean 'tokenauth'?\n"
    )


def test_a_parsed_file_gives_its_contexts_by_name() -> None:
    config = jaas.parse_file(GOOD + "KafkaServer {\n    m required;\n};\n")
    assert config["KafkaClient"] is config.contexts[0]
    assert config["KafkaClient"].entries[0].options["username"] == "alice"
    with pytest.raises(KeyError) as info:
        config["Client"]
    assert str(info.value) == (
        "\"no context 'Client' in the JAAS configuration; it has KafkaClient, KafkaServer\""
    )
    assert len(config) == 2
