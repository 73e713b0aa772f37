"""Real REST servers nobody here wrote, started from build/venv on loopback: Django REST Framework (the
small hand-written project in drf/), Datasette and Kinto. The tests assert on each server's own database
(SQLite files; Kinto's in-memory storage through its own API)."""
import json
import os
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from conftest import HERE, free_port, stop_process, wait_for

VENV_BIN = Path(sys.executable).parent


def _listening(url):
    try:
        urllib.request.urlopen(url, timeout=1).read()
        return True
    except Exception:
        return False


class DRF:
    """`django-admin runserver` of Tests/integration/drf on 127.0.0.1, DEBUG=False, PageNumberPagination."""

    def __init__(self, workdir, page_size=100, create_delay=0, commit_delay=0):
        Path(workdir).mkdir(parents=True, exist_ok=True)
        self.db = Path(workdir) / "notes.sqlite3"
        self.env = dict(os.environ, NOTES_DB=str(self.db), NOTES_PAGE_SIZE=str(page_size),
                        NOTES_CREATE_DELAY=str(create_delay), NOTES_COMMIT_DELAY=str(commit_delay), PYTHONPATH=str(HERE / "drf"), DJANGO_SETTINGS_MODULE="settings")
        admin = str(VENV_BIN / "django-admin")
        subprocess.run([admin, "migrate", "--run-syncdb", "-v", "0"], env=self.env, check=True)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([admin, "runserver", f"127.0.0.1:{self.port}", "--noreload"], env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: _listening(self.base + "/api/notes/"), timeout=30, what="Django to listen")

    def url(self, path="/api/notes/"):
        return self.base + path

    def rows(self):
        with sqlite3.connect(self.db) as db:
            return [dict(zip(("id", "title", "body", "version", "client_id"), r))
                    for r in db.execute("SELECT id, title, body, version, client_id FROM notes_note ORDER BY id")]

    def insert(self, count, title="note {}"):
        with sqlite3.connect(self.db) as db:
            db.executemany("INSERT INTO notes_note (title, body, version, client_id) VALUES (?, '', 1, '')",
                           [(title.format(i),) for i in range(1, count + 1)])

    def execute(self, sql, *args):
        with sqlite3.connect(self.db) as db:
            db.execute(sql, args)

    def stop(self):
        stop_process(self.proc)


class Datasette:
    """`datasette serve` of one SQLite file with a table `items` (integer primary key `id`); with `updated`, a column
    `updated` holding when each row last changed (ISO 8601 UTC text, which SQLite orders as text)."""

    def __init__(self, workdir, rows, updated=False):
        Path(workdir).mkdir(parents=True, exist_ok=True)
        self.db = Path(workdir) / "data.db"
        self.updated = updated
        with sqlite3.connect(self.db) as db:
            if updated:
                db.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, updated TEXT NOT NULL)")
                db.executemany("INSERT INTO items (id, name, updated) VALUES (?, ?, ?)",
                               [(i, f"item {i}", f"2026-12-01T00:00:00.{i:06d}Z") for i in range(1, rows + 1)])
            else:
                db.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)")
                db.executemany("INSERT INTO items (id, name) VALUES (?, ?)", [(i, f"item {i}") for i in range(1, rows + 1)])
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([str(VENV_BIN / "datasette"), "serve", str(self.db), "-h", "127.0.0.1", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: _listening(self.base + "/data/items.json"), timeout=30, what="Datasette to listen")

    def url(self, size=100):
        return f"{self.base}/data/items.json?_shape=objects&_size={size}"

    def ids(self):
        with sqlite3.connect(self.db) as db:
            return [r[0] for r in db.execute("SELECT id FROM items ORDER BY id")]

    def rows(self):
        """Every row of `items` as Datasette serves it with _shape=objects: Datasette's own truth, by id."""
        with sqlite3.connect(self.db) as db:
            db.row_factory = sqlite3.Row
            return [dict(r) for r in db.execute("SELECT * FROM items ORDER BY id")]

    def execute(self, sql, *args):
        """Changes the table as another program would (Datasette serves the file; it does not cache rows)."""
        with sqlite3.connect(self.db) as db:
            db.execute(sql, args)

    def stop(self):
        stop_process(self.proc)


KINTO_INI = """[app:main]
use = egg:kinto
kinto.storage_backend = kinto.core.storage.memory
kinto.storage_url =
kinto.cache_backend = kinto.core.cache.memory
kinto.cache_url =
kinto.permission_backend = kinto.core.permission.memory
kinto.permission_url =
kinto.bucket_create_principals = system.Everyone
kinto.paginate_by = {page_size}
multiauth.policies = basicauth

[server:main]
use = egg:waitress#main
host = 127.0.0.1
port = {port}

[loggers]
keys = root
[handlers]
keys = console
[formatters]
keys = generic
[logger_root]
level = WARNING
handlers = console
[handler_console]
class = StreamHandler
args = (sys.stderr,)
level = NOTSET
formatter = generic
[formatter_generic]
format = %(message)s
"""


class Kinto:
    """`kinto start` (Kinto from PyPI, memory backend) on 127.0.0.1 with one bucket `b` and collection `c`
    anyone may read and write. Kinto answers lists as {"data": [...]}, one record as {"data": {...}},
    continues a listing in a `Next-Page:` header every `page_size` records, and stamps each record with
    `last_modified` (ms). The tests assert on Kinto's own records, read back through its API."""

    def __init__(self, workdir, page_size=100):
        Path(workdir).mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        ini = Path(workdir) / "kinto.ini"
        ini.write_text(KINTO_INI.format(page_size=page_size, port=self.port))
        self.log = open(Path(workdir) / "kinto.log", "wb")
        self.proc = subprocess.Popen([str(VENV_BIN / "kinto"), "start", "--ini", str(ini)],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        wait_for(lambda: _listening(self.base + "/v1/"), timeout=60, what="Kinto to listen")
        everyone = {"permissions": {"read": ["system.Everyone"], "write": ["system.Everyone"]}}
        self.request("PUT", "/v1/buckets/b", everyone)
        self.request("PUT", "/v1/buckets/b/collections/c", everyone)

    def url(self, path="/v1/buckets/b/collections/c/records"):
        return self.base + path

    def request(self, method, path, body=None, headers=None):
        """One request to Kinto; returns (status, headers, parsed JSON body or None)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path if path.startswith("/") else path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                raw = r.read()
                return r.status, dict(r.headers), json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            raw = e.read()
            return e.code, dict(e.headers), json.loads(raw) if raw else None

    def records(self):
        """Every record of the collection, following Next-Page, sorted by id: Kinto's own truth."""
        out, url = [], self.url()
        while url:
            status, headers, body = self.request("GET", url)
            assert status == 200, (status, body)
            out += body["data"]
            url = headers.get("Next-Page")
        return sorted(out, key=lambda r: r["id"])

    def create(self, records):
        """Creates records (dicts, each with or without "id") through Kinto's batch endpoint, 25 a request."""
        for i in range(0, len(records), 25):
            reqs = [{"method": "POST", "path": "/buckets/b/collections/c/records", "body": {"data": r}}
                    for r in records[i:i + 25]]
            status, _, body = self.request("POST", "/v1/batch", {"requests": reqs})
            assert status == 200 and all(r["status"] in (200, 201) for r in body["responses"]), body

    def record(self, rid):
        status, _, body = self.request("GET", f"/v1/buckets/b/collections/c/records/{rid}")
        return body["data"] if status == 200 else None

    def update(self, rid, fields):
        status, _, body = self.request("PATCH", f"/v1/buckets/b/collections/c/records/{rid}", {"data": fields})
        assert status == 200, (status, body)
        return body["data"]

    def delete(self, rid):
        status, _, body = self.request("DELETE", f"/v1/buckets/b/collections/c/records/{rid}")
        assert status == 200, (status, body)

    def stop(self):
        stop_process(self.proc)
        self.log.close()
