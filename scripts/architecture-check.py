#!/usr/bin/env python3
"""Checks ARCHITECTURE.md against the tree, so that what it says stays true:

- its crate table names every workspace member, and each row's "names" column is exactly the
  workspace crates that member's Cargo.toml depends on (normal dependencies);
- every file or directory it names (`crates/...`, `scripts/...`, `fuzz/`, ...) exists;
- every test it names (a backticked snake_case name of four words or more) is a function in the
  tree;
- every Rust path (`a::b::c`) and type (`CamelCase`) it names is defined in the tree;
- every method it says a lint holds is in clippy.toml's disallowed-methods or -macros;
- every crate it maps module by module (a section "### Inside `crate`") has each of its
  top-level modules (a `mod` in lib.rs or main.rs, but test-only ones) named at the start of
  a bullet of that section, and the section names no module the crate does not have;
- the order it documents holds: the crate table lists crates leaves first, so a row names only
  crates of the rows above it; and a module map that says its modules go "from the leaves up"
  lists them so, so a module refers (outside test code, as scripts/module-cycles.py reads
  references) only to modules of the bullets above its own.

Exits 1 naming each claim that no longer holds.
"""

import importlib.util
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


def module_order(crate, root, body, modules):
    """A map "from the leaves up": each module refers only to modules of earlier bullets."""
    spec = importlib.util.spec_from_file_location("module_cycles", ROOT / "scripts/module-cycles.py")
    cycles = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cycles)
    rank = {}
    for n, bullet in enumerate(re.findall(r"^- (.+?) —", body, re.M)):
        for name in re.findall(r"`([a-z_0-9]+)`", bullet):
            rank.setdefault(name, n)
    out = []
    for (a, b), locs in sorted(cycles.Crate(root).edges().items()):
        top_a, top_b = (a[:1] or ("",))[0], (b[:1] or ("",))[0]
        if top_a == top_b or top_a not in modules or top_b not in modules:
            continue
        if rank.get(top_b, -1) > rank.get(top_a, -1):
            out.append(
                f"`{crate}::{top_a}` refers to `{crate}::{top_b}` ({locs[0]}), which ARCHITECTURE.md "
                f"lists after it (its map goes from the leaves up)"
            )
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
    # The table's order is the dependency order: a crate names only crates above it.
    order = [r[0] for r in rows]
    for i, (crate, _job, names) in enumerate(rows):
        for dep in re.findall(r"`([a-z-]+)`", names):
            if dep in order[i:]:
                errors.append(
                    f"`{crate}` names `{dep}`, which the crate table lists after it (leaves first)"
                )

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

    # 4. Rust names: every `a::b::c` path and every `CamelCase` type it names is defined in the
    # tree, segment by segment (a crate, a module file or folder, an item, an enum variant, a
    # method); names of other crates (std, tokio, rusqlite, …) are theirs to keep.
    def definitions(body):
        """The names a Rust source defines: items, enum variants, macros."""
        names = set(re.findall(
            r"\b(?:fn|struct|enum|trait|type|mod|const|static|macro_rules!)\s*([A-Za-z_][A-Za-z0-9_]*)",
            body,
        ))
        return names | set(re.findall(r"^\s+([A-Z][A-Za-z0-9]*)\s*[,({]", body, re.M))

    files = list(ROOT.glob("crates/*/src/**/*.rs"))
    defs = {p: definitions(p.read_text(errors="replace")) | {p.stem} for p in files}
    defined = definitions(sources)
    for p in ROOT.glob("crates/*/src/**/*"):
        defined.add(p.stem)
    defined |= {name.replace("-", "_") for name in crates} | set(by_dir)
    foreign = {"std", "tokio", "rusqlite", "rustix", "serde", "serde_json", "axum", "clippy", "TcpStream", "UdpSocket"}
    named = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)+)`", text))
    named |= set(re.findall(r"`([A-Z][a-z][A-Za-z0-9]*)`", text))
    # A path that begins with a crate or a module must name what that crate or module holds.
    scopes = {}
    for name, toml in crates.items():
        scopes.setdefault(name.replace("-", "_"), []).extend((toml.parent / "src").glob("**/*.rs"))
    for p in files:
        stem = p.parent.name if p.name == "mod.rs" else p.stem
        scopes.setdefault(stem, []).append(p)
        if p.name == "mod.rs":
            scopes[stem].extend(p.parent.glob("**/*.rs"))

    def holds(scope, item):
        return any(item in defs.get(p, set()) for p in scopes.get(scope, []))

    for path in sorted(named):
        segments = path.split("::")
        if segments[0] in foreign:
            continue
        missing = [s for s in segments if s not in defined]
        if missing:
            errors.append(f"`{path}` names {', '.join(missing)}, which the tree does not define")
        elif segments[0] in scopes and not segments[0][0].isupper() and not holds(*segments[:2]):
            errors.append(f"`{path}`: `{segments[0]}` defines no `{segments[1]}`")

    # 5. What the lint holds: every `x::y::z` method named beside "the lint" is disallowed.
    clippy = (ROOT / "clippy.toml").read_text()
    banned = set(re.findall(r'path = "([^"]+)"', clippy))
    held = [
        "store::Store::open",
        "std::time::Instant::now",
        "mcp::Manager::call",
        "mcp::Manager::start_call",
        "mcp::Manager::resume_call",
        "mcp::Client::call_tool",
        "mcp::Client::start_owner_call",
        "mcp::Client::resume_call",
        "rustix::net::socket",
        "rustix::net::connect",
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

    # 6. The module maps: a crate's section names every top-level module it has, and only those.
    sections = re.findall(r"^### Inside `([a-z-]+)`\n(.*?)(?=^##|\Z)", text, re.M | re.S)
    for crate, body in sections:
        if crate not in by_dir:
            errors.append(f"a module map for `{crate}`, which is not a workspace member")
            continue
        src = by_dir[crate][1].parent / "src"
        root = src / "lib.rs" if (src / "lib.rs").exists() else src / "main.rs"
        lines = root.read_text().splitlines()
        modules = set()
        for i, line in enumerate(lines):
            m = re.match(r"^(?:pub(?:\([a-z]+\))? )?mod ([a-z_0-9]+)\s*[;{]", line)
            if m and not (i > 0 and lines[i - 1].strip().startswith("#[cfg(test)]")):
                modules.add(m.group(1))
        mapped = set()
        for bullet in re.findall(r"^- (.+?) —", body, re.M):
            mapped |= set(re.findall(r"`([a-z_0-9]+)`", bullet))
        for name in sorted(modules - mapped):
            errors.append(f"the module `{crate}::{name}` is not in ARCHITECTURE.md's map of `{crate}`")
        for name in sorted(mapped - modules):
            errors.append(f"ARCHITECTURE.md's map of `{crate}` names `{name}`, which it does not have")
        if "from the leaves up" in body.lower():
            errors += module_order(crate, root, body, modules)

    for e in errors:
        print(f"architecture-check: {e}", file=sys.stderr)
    if errors:
        return 1
    print(f"architecture-check: {len(rows)} crates, every path, test and lint it names hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
