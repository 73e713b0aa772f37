"""`syncd --check-config` and BearerTokenCredential= (docs/syncd.8.md, OPTIONS): outside the service there is no
$CREDENTIALS_DIRECTORY, so a hand-run check warns and says how the service gets the token; under systemd
($INVOCATION_ID) a missing credential is an error, and a named directory is read as a refresh would read it."""
import os
import subprocess

from conftest import BIN


def check(setup, **env):
    full_env = {k: v for k, v in os.environ.items() if k not in ("INVOCATION_ID", "CREDENTIALS_DIRECTORY")}
    full_env.update(env)
    return subprocess.run([str(BIN / "syncd"), "--config-dir", str(setup.config), "--check-config"],
                          capture_output=True, text=True, env=full_env, timeout=30)


def with_token_source(setup):
    setup.add_source("api", "https://api.example.com/items", BearerTokenCredential="api-token")
    return f"{setup.config}/sources.d/api.source:1: "


def test_run_by_hand_it_warns_and_names_the_unit_setting(setup):
    where = with_token_source(setup)
    r = check(setup)
    assert (r.returncode, r.stdout) == (0, "configuration OK\n")
    assert r.stderr == (where + "warning: BearerTokenCredential=api-token is read from $CREDENTIALS_DIRECTORY, which systemd "
                        "gives only to the service (LoadCredential=api-token:/path/to/token in the unit); not checked here "
                        "(to check a token by hand: CREDENTIALS_DIRECTORY=DIR syncd --check-config, with the token in the "
                        "file DIR/api-token)\n")


def test_under_systemd_without_the_credential_it_fails(setup):
    where = with_token_source(setup)
    r = check(setup, INVOCATION_ID="0123456789abcdef0123456789abcdef")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (where + "BearerTokenCredential=api-token: $CREDENTIALS_DIRECTORY is not set, so the token cannot be "
                        "read; add LoadCredential=api-token:/path/to/token (or SetCredential=) to the unit, see systemd.exec(5)\n")


def test_a_credentials_directory_without_the_file_fails(setup, tmp_path):
    where = with_token_source(setup)
    creds = tmp_path / "creds"
    creds.mkdir()
    r = check(setup, CREDENTIALS_DIRECTORY=str(creds))
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (where + f"BearerTokenCredential=api-token: Failed to read credential api-token from {creds}: "
                        "No such file or directory\n")


def test_a_readable_credential_passes_and_is_never_printed(setup, tmp_path):
    with_token_source(setup)
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "api-token").write_text("s3cret-token-value\n")
    r = check(setup, CREDENTIALS_DIRECTORY=str(creds), INVOCATION_ID="0123456789abcdef0123456789abcdef")
    assert (r.returncode, r.stdout, r.stderr) == (0, "configuration OK\n", "")
    assert (creds / "api-token").read_text() == "s3cret-token-value\n"        # untouched
