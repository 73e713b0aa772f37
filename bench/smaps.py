#!/usr/bin/env python3
"""Where a process's resident memory lies, from /proc/PID/smaps: VmRSS, then Rss (KiB) per mapping
group — the executable, each shared library, the heap, thread stacks and other anonymous memory —
largest first, with the anonymous part (Anonymous:) of each. Usage: smaps.py PID [--json]"""
import json, os, re, sys

def breakdown(pid):
    exe = os.readlink(f"/proc/{pid}/exe")
    groups, name = {}, None
    with open(f"/proc/{pid}/smaps") as smaps:
        for line in smaps:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                fields = line.split(None, 5)
                path = fields[5].strip() if len(fields) > 5 else ""
                if path == exe:
                    name = "executable " + os.path.basename(exe)
                elif ".so" in path:
                    name = re.sub(r"\.so.*", ".so", os.path.basename(path))
                elif path in ("[heap]", "[stack]", "[vdso]", "[vvar]", "[vsyscall]"):
                    name = path
                elif path:
                    name = "file " + path
                else:
                    name = "anonymous (malloc arenas, thread stacks)"
            elif line.startswith("Rss:") or line.startswith("Anonymous:"):
                key, kib = line.split()[0][:-1], int(line.split()[1])
                group = groups.setdefault(name, {"Rss": 0, "Anonymous": 0})
                group[key] += kib
    status = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status"))
    vmrss = int(status["VmRSS"].split()[0])
    threads = int(status["Threads"].strip())
    return vmrss, threads, groups

def main():
    pid = sys.argv[1]
    vmrss, threads, groups = breakdown(pid)
    if "--json" in sys.argv:
        print(json.dumps({"VmRSS": vmrss, "threads": threads, "groups": groups}))
        return
    print(f"VmRSS {vmrss} KiB ({vmrss / 1024:.1f} MiB), {threads} threads")
    for name, g in sorted(groups.items(), key=lambda item: -item[1]["Rss"]):
        if g["Rss"]:
            print(f"{g['Rss']:8d} KiB  (anonymous {g['Anonymous']:6d})  {name}")

main()
