#!/usr/bin/env python3
"""Writes a JSON listing of N records like {"id", "title", "author", "body", "tags", "lastModified"}
(about 200 bytes each: 100k records ~ 20 MB), streaming so memory stays small. Deterministic."""
import sys

def main():
    count, path = int(sys.argv[1]), sys.argv[2]
    authors = ["Johnny Appleseed", "Jane Doe", "Ada Lovelace", "Grace Hopper"]
    with open(path, "w") as f:
        f.write("[")
        for i in range(count):
            if i:
                f.write(",")
            f.write('{"id":%d,"title":"Post %d","author":"%s","body":"%s","tags":["t%d","news"],'
                    '"lastModified":"2026-11-%02dT10:%02d:00Z"}'
                    % (i + 1, i + 1, authors[i % 4], ("Lorem ipsum dolor sit amet %d " % i) * 3, i % 50,
                       1 + i % 28, i % 60))
        f.write("]")

if __name__ == "__main__":
    main()
