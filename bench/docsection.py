"""Replaces (or appends) one "## " section of docs/benchmarks.md; shared by the bench/ scripts."""

from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def put_section(section, path=BENCHMARKS):
    title = section.split("\n", 1)[0]
    doc = open(path).read()
    start = doc.find(title)
    if start >= 0:
        end = doc.find("\n## ", start + 5)
        # One blank line between this section and the next.
        doc = doc[:start] + section.rstrip("\n") + ("\n\n" + doc[end + 1:] if end >= 0 else "\n")
    else:
        doc = doc.rstrip("\n") + "\n\n" + section
    open(path, "w").write(doc)
