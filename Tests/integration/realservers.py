"""Real REST servers nobody here wrote, started from build/venv on loopback: Django REST Framework (the
small hand-written project in drf/) and Datasette. The tests assert on each server's own SQLite database."""
import os
import sqlite3
import subprocess
import sys
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
    """`datasette serve` of one SQLite file with a table `items` (integer primary key `id`)."""

    def __init__(self, workdir, rows):
        Path(workdir).mkdir(parents=True, exist_ok=True)
        self.db = Path(workdir) / "data.db"
        with sqlite3.connect(self.db) as db:
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

    def stop(self):
        stop_process(self.proc)
