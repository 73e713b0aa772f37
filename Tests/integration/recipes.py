"""The configuration recipes of syncd.conf(5) (docs/syncd.conf.5.md, EXAMPLES and INCREMENTAL PULL), as the tests use them: a
test against a real server takes the recipe a user would copy, so the page and the tested configuration
cannot drift apart. A recipe is a fenced block whose first line is a comment naming it, e.g. `# Kinto`."""
import re

from conftest import ROOT

PAGE = ROOT / "docs" / "syncd.conf.5.md"


def recipes():
    """{name: text} for every fenced block of the page whose first line is `# NAME`."""
    found = {}
    for block in re.findall(r"^```\n(.*?)^```$", PAGE.read_text(), flags=re.S | re.M):
        first, _, rest = block.partition("\n")
        if first.startswith("# "):
            found[first[2:].strip()] = block
    return found


def recipe(name, **replace):
    """The recipe called `name`, with each `Key=` line named in `replace` set to the given value (the
    server's URL on this machine, say); a key the recipe lacks is a test bug, not silently added. A URL= given
    without a query keeps the recipe's query: it is part of what the recipe asks of the server."""
    text = recipes()[name]
    url = re.search(r"^URL=(.*)$", text, flags=re.M)
    if "URL" in replace and "?" not in replace["URL"] and url and "?" in url.group(1):
        replace = dict(replace, URL=replace["URL"] + "?" + url.group(1).split("?", 1)[1])
    for key, value in replace.items():
        text, count = re.subn(rf"^{key}=.*$", lambda _m: f"{key}={value}", text, flags=re.M)
        assert count == 1, f"recipe {name!r} has {count} {key}= lines"
    return text
