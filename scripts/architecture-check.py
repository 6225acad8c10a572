#!/usr/bin/env python3
"""Checks ARCHITECTURE.md against the tree, so that what it says stays true:

- its crate table names every workspace member, and each row's "names" column is exactly the
  workspace crates that member's Cargo.toml depends on (normal dependencies);
- every file or directory it names (`crates/...`, `scripts/...`, `fuzz/`, ...) exists;
- every test it names (a backticked snake_case name of four words or more) is a function in the
  tree;
- every method it says a lint holds is in clippy.toml's disallowed-methods or -macros.

Exits 1 naming each claim that no longer holds.
"""

import pathlib
import re
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "ARCHITECTURE.md"


def members():
    ws = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["members"]
    out = {}
    for pattern in ws:
        for d in sorted(ROOT.glob(pattern)):
            toml = d / "Cargo.toml"
            if toml.exists():
                name = tomllib.loads(toml.read_text())["package"]["name"]
                out[name] = toml
    return out


def main():
    text = DOC.read_text()
    errors = []
    crates = members()
    # The directory names are what the table shows (`bench` is the package maven-bench).
    by_dir = {toml.parent.name: (name, toml) for name, toml in crates.items()}
    local = set(by_dir)

    # 1. The crate table.
    rows = re.findall(r"^\| `([a-z-]+)` \| (.+?) \| (.+?) \|$", text, re.M)
    if not rows:
        errors.append("no crate table found")
    seen = set()
    for crate, _job, names in rows:
        seen.add(crate)
        if crate not in by_dir:
            errors.append(f"the table names `{crate}`, which is not a workspace member")
            continue
        deps = tomllib.loads(by_dir[crate][1].read_text()).get("dependencies", {})
        actual = {d for d in deps if d in local}
        if names.strip() == "—":
            said = set()
        elif names.strip() == "all of the above":
            above = [r[0] for r in rows[: [r[0] for r in rows].index(crate)]]
            said = set(above)
        else:
            said = set(re.findall(r"`([a-z-]+)`", names))
        if said != actual:
            errors.append(
                f"`{crate}` names {sorted(said)} in the table, its Cargo.toml {sorted(actual)}"
            )
    for crate in sorted(local - seen):
        errors.append(f"the workspace member `{crate}` is not in the crate table")

    # 2. Paths.
    for path in set(re.findall(r"`((?:crates|scripts|fuzz|bench|testenv)/[^`\s]*)`", text)):
        if not (ROOT / path).exists():
            errors.append(f"`{path}` does not exist")

    # 3. Tests named.
    sources = "\n".join(
        p.read_text(errors="replace")
        for p in list(ROOT.glob("crates/**/*.rs")) + list(ROOT.glob("bench/**/*.rs"))
        if "/target/" not in str(p)
    )
    fns = set(re.findall(r"\bfn\s+([a-z0-9_]+)", sources))
    for name in sorted(set(re.findall(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+){3,})`", text))):
        if name not in fns:
            errors.append(f"the test or function `{name}` is not in the tree")

    # 4. What the lint holds: every `x::y::z` method named beside "the lint" is disallowed.
    clippy = (ROOT / "clippy.toml").read_text()
    banned = set(re.findall(r'path = "([^"]+)"', clippy))
    held = [
        "store::Store::open",
        "std::time::Instant::now",
        "mcp::Manager::call",
        "mcp::Manager::start_call",
        "mcp::Manager::resume_call",
        "allowlist::Executor::run",
        "allowlist::Executor::run_confirmed",
        "allowlist::Executor::answer_input",
        "stepup::verify_passphrase",
        "stepup::finish_passkey",
        "tokio::net::TcpStream::connect",
        "tokio::net::lookup_host",
        "rusqlite::Connection::open",
        "std::println",
        "std::eprintln",
        "std::print",
        "std::eprint",
    ]
    for path in held:
        if path not in banned:
            errors.append(f"ARCHITECTURE.md says a lint holds `{path}`; clippy.toml does not ban it")

    for e in errors:
        print(f"architecture-check: {e}", file=sys.stderr)
    if errors:
        return 1
    print(f"architecture-check: {len(rows)} crates, every path, test and lint it names hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
