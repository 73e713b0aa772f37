"""What the bench/ scripts share: a free loopback port, and the listings of bench/make-listing.py (made once, kept in
bench/data)."""
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listing(records):
    """bench/data/100k.json, 1m.json or N.json: `records` records of bench/make-listing.py."""
    name = {100_000: "100k", 1_000_000: "1m"}.get(records, str(records))
    path = DATA / f"{name}.json"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(ROOT / "bench" / "make-listing.py"), str(records), str(path)], check=True)
    return path
