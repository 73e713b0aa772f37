"""Datasette (a real JSON API over SQLite, from build/venv) as a read-only source: every way it pages —
Link headers, the next_url in the body, the _next cursor — gives exactly the rows of its database, and a
source that does not follow its pages fails as incomplete."""
import pytest

from realservers import Datasette
from recipes import recipe

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


def test_without_pagination_the_link_header_makes_the_listing_incomplete(datasette, setup):
    setup.add_source("items", datasette.url(size=1000), RecordsPath="/rows")
    r = setup.syncd("--once")
    assert r.returncode == 1, r.stderr
    assert ('items: the response has a Link: rel="next" header but Pagination=none: only the first page was received; '
            "set Pagination=link") in r.stderr
    assert not setup.cache_file("items").exists()                      # no part of the table passes for all of it


def test_the_datasette_recipe_fetches_every_row(datasette, setup):
    (setup.config / "sources.d" / "items.source").write_text(recipe("Datasette", URL=datasette.url(size=100)))
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert [row["id"] for row in setup.cache_doc("items")["records"]] == datasette.ids()
