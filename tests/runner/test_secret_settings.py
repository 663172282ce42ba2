"""Secrets through ``-s`` settings: every case the issue found written verbatim to checkpoint.json is refused
before the run directory is made, naming the setting and never its value."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_nb.cli import cli
from bench_nb.errors import ProviderError
from bench_nb.redaction import redact
from bench_nb.runner.settings import check_provider_settings

GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
BASIC = "Basic " + base64.b64encode(b"bench:s3cr3t-pw").decode()
STRIPE = "sk_live_" + "51HxYzAbCdEfGhIjKlMnOp"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"


def _run(tmp_path: Path, setting: str) -> tuple[int, str]:
    args = ["run", "-p", "sqlite", "-b", "sample", "--limit", "2", "-r", "s", "--runs-dir", str(tmp_path)]
    result = CliRunner().invoke(cli, [*args, "--no-progress", "-s", setting])
    return result.exit_code, result.output + str(result.exception or "")


@pytest.mark.parametrize(
    ("env", "setting", "secret"),
    [
        ({"GH_CI": GITHUB}, f"note={GITHUB}", GITHUB),  # a GitHub token, also held in the environment
        ({"DB_PASS": "correct-horse-battery"}, "dsn_part=correct-horse-battery", "correct-horse-battery"),
        ({}, "passphrase=open sesame now", "open sesame now"),
        ({}, f"header={BASIC}", BASIC.split()[1]),
        ({}, f"billing={STRIPE}", STRIPE),
        ({}, f"aws={AWS}", AWS),
        ({"MY_SERVICE_CFG": "plain-value-1234"}, "cfg=plain-value-1234", "plain-value-1234"),
        ({}, "dbPassword=hunter22", "hunter22"),
        ({}, "client_secret=abcdef123", "abcdef123"),
        ({}, "conn=host=db password=hunter22", "hunter22"),
    ],
)
def test_a_secret_setting_is_refused_and_never_written(
    env: dict[str, str], setting: str, secret: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    name = setting.partition("=")[0]
    code, output = _run(tmp_path, setting)
    assert code != 0 and f"setting {name!r}" in output
    assert secret not in output
    assert not (tmp_path / "s").exists()  # refused before the run directory was made
    with pytest.raises(ProviderError, match=f"setting '{name}'"):
        check_provider_settings("sqlite", {name: setting.partition("=")[2]})


@pytest.mark.parametrize(
    "settings",
    [
        {"max_context_tokens": 2000},
        {"scope": "episodes", "threshold": 0.5},
        {"mode": "basic retrieval"},  # "basic" followed by a word, not base64 of user:password
        {"dir": "/root"},
        {"session_mode": "per-session"},
        {"infer": False, "depth": 3},
    ],
)
def test_ordinary_settings_pass(settings: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/root")
    assert check_provider_settings("p", settings) == settings


def test_environment_equality_names_the_variable_never_its_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_PASS", "tr0ub4dor-and-3")
    with pytest.raises(ProviderError, match="environment variable DB_PASS") as err:
        check_provider_settings("p", {"cfg": {"nested": ["tr0ub4dor-and-3"]}})
    assert "tr0ub4dor" not in str(err.value)
    monkeypatch.setenv("SHORT_ONE", "1234567")  # shorter than MIN_ENV_VALUE: too common to refuse
    assert check_provider_settings("p", {"n": "1234567"}) == {"n": "1234567"}


def test_error_messages_are_redacted_of_the_new_shapes() -> None:
    text = f"failed with {GITHUB}, Authorization: {BASIC}, {STRIPE}, {AWS}, passphrase=opensesame"
    out = redact(text)
    for secret in (GITHUB, BASIC.split()[1], STRIPE, AWS, "opensesame"):
        assert secret not in out
    assert redact("Basic retrieval was used") == "Basic retrieval was used"


def test_a_url_password_in_an_error_message_is_redacted() -> None:
    # docs/runner.md: errors are redacted of the shapes the secret check knows, `user:password@` in a URL among
    # them; redact left a URL's password in (a proxy's or a database's URL quoted by an error)
    out = redact("could not connect to postgresql://bob:hunter2hunter2@db.internal:5432/roi (timeout)")
    assert "hunter2" not in out
    assert out == "could not connect to postgresql://bob:[redacted]@db.internal:5432/roi (timeout)"
    assert redact("see https://example.com:8080/docs and mailto:bob@example.com") == (
        "see https://example.com:8080/docs and mailto:bob@example.com"
    )
