"""Replaces (or appends) one "## " section of docs/benchmarks.md; shared by the bench/ scripts."""

def put_section(section, path="docs/benchmarks.md"):
    title = section.split("\n", 1)[0]
    doc = open(path).read()
    start = doc.find(title)
    if start >= 0:
        end = doc.find("\n## ", start + 5)
        doc = doc[:start] + section + (doc[end + 1:] if end >= 0 else "")
    else:
        doc = doc.rstrip("\n") + "\n\n" + section
    open(path, "w").write(doc)
