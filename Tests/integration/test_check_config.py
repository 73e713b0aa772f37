"""syncd --check-config and the command line: exact output and exit codes."""
import subprocess

from conftest import BIN


def run(*args):
    return subprocess.run([str(BIN / "syncd"), *args], capture_output=True, text=True, timeout=30)


def test_valid_configuration_says_ok(setup, server):
    setup.add_source("posts", server.url("posts"))
    r = setup.syncd("--check-config")
    assert (r.returncode, r.stdout, r.stderr) == (0, "configuration OK\n", "")


def test_problems_are_file_line_messages_and_exit_1(setup):
    (setup.config / "syncd.conf").write_text("[Daemon]\nAccount=default\nBogus=1\n[Retry]\nMaxAttempts=zero\n")
    (setup.config / "sources.d" / "a.source").write_text("[Source]\nURL=ftp://example.org/x\n")
    (setup.config / "sources.d" / "b.source").write_text("[Source]\nName=a\nURL=http://localhost/x\n")
    (setup.config / "sources.d" / "d.source").write_text("[Source]\nURL=http://localhost/y\nTimeoutSec=5 parsecs\n")
    (setup.config / "sources.d" / "c.source").write_text("[Source]\nIDField=id\n")
    r = setup.syncd("--check-config")
    assert r.returncode == 1
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    conf = str(setup.config)
    assert f"{conf}/syncd.conf:3: unknown key \"Bogus\" in [Daemon]; known keys: Account," in lines[0]
    assert lines[1].startswith(f"{conf}/syncd.conf:5: ")
    assert any(l.startswith(f"{conf}/sources.d/a.source:2: URL: unsupported URL scheme \"ftp\"") for l in lines)
    assert any(l.startswith(f"{conf}/sources.d/b.source:2: duplicate source name \"a\"") for l in lines)
    assert any(l.startswith(f"{conf}/sources.d/d.source:3: TimeoutSec: invalid time span \"5 parsecs\"") for l in lines)
    assert any(l.startswith(f"{conf}/sources.d/c.source:1: missing URL=") for l in lines)


def test_missing_default_directory_means_defaults_and_says_so(tmp_path):
    # Without --config-dir, in user mode: $XDG_CONFIG_HOME/syncd, which does not exist.
    missing = tmp_path / "syncd"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    r = subprocess.run([str(BIN / "syncd"), "--user", "--check-config"], capture_output=True, text=True, timeout=30, env=env)
    assert (r.returncode, r.stdout) == (0, "configuration OK\n")
    assert r.stderr == (f"syncd: note: {missing} does not exist; the defaults apply\n"
                        f"syncd: note: no sources are configured; add {missing}/sources.d/NAME.source (see syncd.conf(5))\n")


def test_missing_named_directory_is_an_error_for_check_once_and_the_daemon(tmp_path):
    missing = tmp_path / "nothing"
    # The daemon exits with EX_CONFIG, which the units do not restart on; --check-config and --once with 1
    # (syncd(8), EXIT STATUS).
    for args, status in ((["--check-config"], 1), (["--once"], 1), ([], 78), (["--check-config", "--user"], 1)):
        r = run("--config-dir", str(missing), *args)
        assert (r.returncode, r.stdout, r.stderr) == (status, "", f"syncd: configuration directory {missing} does not exist\n"), args
        r = run(f"--config-dir={missing}", *args)
        assert (r.returncode, r.stdout, r.stderr) == (status, "", f"syncd: configuration directory {missing} does not exist\n"), args
    # Nothing was created on the way (no directory, no state).
    assert list(tmp_path.iterdir()) == []
    afile = tmp_path / "afile"
    afile.write_text("x")
    r = run("--config-dir", str(afile), "--check-config")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", f"syncd: configuration directory {afile} is not a directory\n")
    assert afile.read_text() == "x"


def test_no_sources_is_valid_but_noted(setup):
    r = setup.syncd("--check-config")
    assert (r.returncode, r.stdout) == (0, "configuration OK\n")
    assert "no sources are configured" in r.stderr and "does not exist" not in r.stderr


def test_unknown_option_is_a_usage_error():
    r = run("--frobnicate")
    assert r.returncode == 2
    assert r.stderr == "syncd: unknown option '--frobnicate'\nTry 'syncd --help' for more information.\n"
    r = run("extra")
    assert r.returncode == 2
    assert r.stderr == "syncd: unexpected argument 'extra' (syncd takes options only)\nTry 'syncd --help' for more information.\n"


def test_version_and_help():
    r = run("--version")
    assert (r.returncode, r.stdout) == (0, "syncd 1.0.0\n")
    r = run("--help")
    assert r.returncode == 0
    for option in ("--once", "--check-config", "--config-dir DIR", "--user", "--version"):
        assert option in r.stdout


def test_bad_configuration_blocks_once_and_loses_nothing(setup, server):
    from conftest import POSTS
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    assert setup.syncd("--once").returncode == 0
    before = setup.cache_file("posts").read_bytes()
    (setup.config / "sources.d" / "posts.source").write_text(f"[Source]\nURL={server.url('posts')}\nMaxBytes=lots\n")
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "posts.source:3:" in r.stderr and "MaxBytes" in r.stderr
    assert setup.cache_file("posts").read_bytes() == before


def test_the_example_source_names_every_pagination_mode_and_its_keys_check_ok(setup, server):
    # The shipped example lists each Pagination= mode of syncd.conf(5) and the keys they take; each one,
    # enabled in a copy of the example, is a valid configuration.
    example = (BIN.parents[1] / "config" / "sources.d" / "posts.source.example").read_text()
    modes_line = next(line for line in example.splitlines() if line.startswith("Pagination="))
    modes = [m.strip() for m in modes_line.split("#", 1)[1].split("(")[0].split("|")]
    modes += [m.strip() for m in modes_line.split(")", 1)[1].split("|") if m.strip()]
    assert modes == ["none", "link", "body", "cursor", "page", "offset", "header"], modes_line
    manual = (BIN.parents[1] / "docs" / "syncd.conf.5.md").read_text()
    for key in ("NextPath", "CursorPath", "CursorParameter", "HasMorePath", "PageParameter", "LimitParameter",
                "OffsetParameter", "TotalPath", "NextHeader"):
        assert f"\n#{key}=" in example and f"*{key}=*" in manual, key
    for mode in modes:
        text = example.replace("http://localhost:3000/posts", server.url("posts")).replace("Pagination=none", f"Pagination={mode}")
        if mode in ("page", "offset"):
            for key in ("PageParameter", "LimitParameter", "OffsetParameter", "TotalPath"):
                text = text.replace(f"\n#{key}=", f"\n{key}=")
        if mode in ("body", "cursor"):
            text = text.replace("\n#NextPath=", "\nNextPath=").replace("\n#CursorPath=", "\nCursorPath=") \
                       .replace("\n#CursorParameter=", "\nCursorParameter=").replace("\n#HasMorePath=", "\nHasMorePath=")
            if mode == "body":
                text = text.replace("\nCursorPath=", "\n#CursorPath=").replace("\nCursorParameter=", "\n#CursorParameter=")
        if mode == "header":
            text = text.replace("\n#NextHeader=", "\nNextHeader=")
        (setup.config / "sources.d" / "posts.source").write_text(text)
        r = setup.syncd("--check-config")
        assert (r.returncode, r.stdout) == (0, "configuration OK\n"), (mode, r.stderr)


def test_the_incremental_pull_recipes_check_ok_and_verbose_says_each_delta_request(setup):
    # syncd.conf(5), INCREMENTAL PULL: each recipe as a user copies it is a valid source, and --verbose says what
    # its deltas ask for. A sync token in a query is a credential-like value: shown redacted, like any such value.
    from recipes import recipe
    expected = {
        "Kinto delta": "delta: GET https://kinto.example.com/v1/buckets/B/collections/C/records?_sort=last_modified&_since={checkpoint}, "
                       "{checkpoint} the highest /last_modified of the last delta or of a full listing's first page, paged as the listing (Delta=watermark)",
        "Datasette delta": "delta: GET http://127.0.0.1:8001/data/items.json?_shape=objects&_size=max&_sort_desc=updated&updated__gt={checkpoint}, "
                           "{checkpoint} the highest /updated of the last delta or of a full listing's first page, paged as the listing (Delta=watermark)",
        "CouchDB changes": "delta: GET https://couch.example.com/notes/_changes?include_docs=true&since={checkpoint}, {checkpoint} the token "
                           "at /last_seq on the last page received (Delta=token)",
        "Google sync token": "delta: GET https://www.googleapis.com/calendar/v3/calendars/primary/events?maxResults=250&syncToken=[redacted], "
                             "{checkpoint} the token at /nextSyncToken on the last page received, paged as the listing (Delta=token)",
        "Microsoft Graph delta": "delta: GET the URL at /@odata.deltaLink on the last page received, paged as the listing (Delta=token)",
        "updated filter": "delta: GET https://api.example.com/rest/items?order=updated_at&updated_at=gt.{checkpoint}, {checkpoint} the "
                          "highest /updated_at of the last delta or of a full listing's first page (Delta=watermark)",
    }
    for name, line in expected.items():
        text = recipe(name)
        if "BearerTokenCredential=" in text:
            # No credentials directory here (a warning would say so): the recipe's token file is left out.
            text = recipe(name, BearerTokenCredential="")
        (setup.config / "sources.d" / "s.source").write_text(text)
        r = setup.syncd("--check-config", "--verbose")
        assert (r.returncode, r.stderr) == (0, ""), (name, r.stderr)
        assert f"s: {line}\n" in r.stdout and r.stdout.endswith("configuration OK\n"), (name, r.stdout)
