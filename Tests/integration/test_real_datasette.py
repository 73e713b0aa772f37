"""Datasette (a real JSON API over SQLite, from build/venv) as a read-only source: every way it pages —
Link headers, the next_url in the body, the _next cursor — gives exactly the rows of its database, and a
source that does not follow its pages says so."""
import pytest

from realservers import Datasette

ROWS = 1249


@pytest.fixture(scope="module")
def datasette(tmp_path_factory):
    s = Datasette(tmp_path_factory.mktemp("datasette"), ROWS)
    yield s
    s.stop()


@pytest.mark.parametrize("keys", [
    {"Pagination": "link"},
    {"Pagination": "body", "NextPath": "/next_url"},
    {"Pagination": "cursor", "CursorPath": "/next", "CursorParameter": "_next"},
], ids=["link", "body", "cursor"])
def test_every_page_is_fetched(datasette, setup, keys):
    setup.add_source("items", datasette.url(size=100), RecordsPath="/rows", **keys)
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    ids = [row["id"] for row in setup.cache_doc("items")["records"]]
    assert ids == datasette.ids()
    assert len(ids) == ROWS


def test_without_pagination_the_link_header_is_a_warning(datasette, setup):
    setup.add_source("items", datasette.url(size=1000), RecordsPath="/rows")
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert ('items: the response has a Link: rel="next" header but Pagination=none, so only its first page is kept; '
            "set Pagination=link") in r.stderr
    assert len(setup.cache_doc("items")["records"]) == 1000
