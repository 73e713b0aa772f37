#!/usr/bin/python3
"""Follow one syncd cache file with inotify, using nothing but Python's standard library (see syncd.cache(5)).

    follow-cache-file.py CACHE_FILE [--versions N]

Prints the records of the file as it is now, then again each time syncd publishes a new version, as one line:
`<savedAt> <number of records> records, <pending> pending`. With --versions N it exits after N new versions
(handy in scripts and tests); otherwise it runs until interrupted.

How it works, as syncd.cache(5) says: syncd never writes the file in place. It writes a temporary file in the
same directory and renames it over the old one, so we watch the DIRECTORY for IN_MOVED_TO of the file's name
and read the whole file each time. IN_ATTRIB (only the mtime moved: the server confirmed the content) is not a
new version. A file whose schemaVersion we do not know is reported, never guessed at.
"""
import ctypes
import json
import os
import struct
import sys

IN_MOVED_TO = 0x00000080
IN_CLOEXEC = 0o2000000
EVENT_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event)

libc = ctypes.CDLL(None, use_errno=True)


def watch_directory(directory):
    """An inotify descriptor watching `directory` for files renamed into it."""
    fd = libc.inotify_init1(IN_CLOEXEC)
    if fd < 0 or libc.inotify_add_watch(fd, os.fsencode(directory), IN_MOVED_TO) < 0:
        error = ctypes.get_errno()
        raise OSError(error, f"inotify on {directory}: {os.strerror(error)}")
    return fd


def names_moved_in(fd):
    """Blocks until inotify reports something; yields the names renamed into the directory."""
    data = os.read(fd, 64 * 1024)
    offset = 0
    while offset < len(data):
        _, mask, _, length = EVENT_HEADER.unpack_from(data, offset)
        name = data[offset + EVENT_HEADER.size: offset + EVENT_HEADER.size + length].rstrip(b"\0")
        offset += EVENT_HEADER.size + length
        if mask & IN_MOVED_TO:
            yield os.fsdecode(name)


def describe(path):
    """One line about the file's current version, or why it cannot be read."""
    try:
        with open(path, "rb") as f:
            document = json.load(f)
    except FileNotFoundError:
        return "no cache file yet (the source has never been synced)"
    except ValueError as error:
        return f"unreadable cache file: {error}"
    if document.get("schemaVersion") != 1:
        return f"unknown schemaVersion {document.get('schemaVersion')!r}: not reading it"
    return f"{document['savedAt']} {len(document['records'])} records, {len(document['pending'])} pending"


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--versions"):
        print("usage: " + __doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    path = os.path.abspath(argv[1])
    versions = int(argv[3]) if len(argv) == 4 else None
    directory, name = os.path.split(path)
    fd = watch_directory(directory)       # first watch, then read: no version can slip in between
    print(describe(path), flush=True)
    seen = 0
    while versions is None or seen < versions:
        if name in names_moved_in(fd):    # several renames read at once are one new version to read
            print(describe(path), flush=True)
            seen += 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except KeyboardInterrupt:
        sys.exit(130)
