#!/usr/bin/env python3
"""Report cycles between the modules of each crate (python3 standard library only).

Every crate under crates/ (and bench/) is read from its roots: src/lib.rs, src/main.rs and
src/bin/*.rs, each root being a module tree of its own. A node is one *file* module (found
through `mod x;` declarations, with the usual x.rs / x/mod.rs lookup); an inline `mod x { }`
block is part of its file, although `super::` inside it is resolved from the inline module.

What counts as an edge "A refers to B": a path starting with `crate::`, `super::`, `self::`
or the name of a child module (a 2018 relative path), in a `use` (each leaf of a
`use a::{b, c::{d, e}}` tree, and globs) or anywhere else in the code (`crate::b::f()`,
`super::X`, `$crate::...`). A path is resolved as rustc would: it walks into child modules,
follows `use` imports and re-exports (so `crate::Error` re-exported by lib.rs from error.rs
points at error.rs) and `pub use x::*` globs; the module where the path stops naming a
module is the target. A reference to one's own submodule, or to an ancestor via `super::`,
is an edge like any other when the target is another file module. So a child `foo::bar`
doing `use super::X`, X defined in foo, while foo uses bar, is a cycle. A `mod x;`
declaration alone is NOT an edge.

Test code is left out: items under `#[cfg(test)]` (a `mod tests { }` block, a `mod tests;`
file and everything below it, a test-only `use` or `fn`) and files with `#![cfg(test)]`.

Every strongly connected component of more than one module is reported with its edges; the
exit status is 1 if a crate not named with `--allow CRATE` (repeatable) has one, else 0.
"""
import argparse
import bisect
import os
import re
import sys
from collections import defaultdict
from pathlib import Path

# comments, raw strings, strings and char literals (a lifetime such as 'a is left alone)
LEXED = r'//[^\n]*|/\*.*?\*/|\bb?r(#*)".*?"\1|b?"(?:\\.|[^"\\])*"|\'(?:\\.[^\']*|[^\\\'\n])\''
LEXED = re.compile(LEXED, re.S)
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|::|[^\sA-Za-z0-9_]")


def tokens(text):
    """Tokens of Rust source with comments and literals blanked: list of (token, line)."""
    text = LEXED.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    return [(m.group(0), bisect.bisect(starts, m.start())) for m in TOKEN.finditer(text)]


def skip_group(toks, i):
    """toks[i] opens a (, [ or {; return the index after its matching close."""
    depth = 0
    for j in range(i, len(toks)):
        depth += (toks[j][0] in "([{") - (toks[j][0] in ")]}")
        if depth == 0:
            return j + 1
    return len(toks)


def skip_item(toks, i):
    """Index after the item starting at toks[i] (ends at a top-level `;` or `{...}`)."""
    while toks[i][0] not in (";", "{", ""):
        i = skip_group(toks, i) if toks[i][0] in "([" else i + 1
    return skip_group(toks, i) if toks[i][0] == "{" else i + 1


class Crate:
    def __init__(self, root):
        self.children = defaultdict(set)  # module path (tuple) -> names of child modules
        self.owner = {}  # module path -> path of the file module holding it
        self.imports = defaultdict(dict)  # module path -> {name: path segments}
        self.globs = defaultdict(list)  # module path -> [path segments of `use ...::*`]
        self.defs = defaultdict(set)  # module path -> names of items defined there
        self.refs = []  # (scope, segments, file, line)
        self.load((), root, True)

    def load(self, mod, path, dirlike):
        text = path.read_text(encoding="utf-8", errors="replace")
        if re.search(r"#!\[cfg\(test\)\]", text):
            return
        self.owner[mod] = mod
        base = path.parent if dirlike else path.with_suffix("")
        toks, stack, i = tokens(text) + [("", 0)] * 3, [], 0  # stack: (inline mod, depth)
        depth, file_mods = 0, []
        while i < len(toks) - 3:
            t, line = toks[i]
            nxt = toks[i + 1][0]
            cur = mod + tuple(n for n, _ in stack)
            if t == "#" and nxt in ("[", "!"):
                j = i + 1 + (nxt == "!")
                i = skip_group(toks, j)
                if nxt == "[" and "".join(x for x, _ in toks[j:i]) == "[cfg(test)]":
                    while toks[i][0] == "#" and toks[i + 1][0] == "[":
                        i = skip_group(toks, i + 1)
                    i = skip_item(toks, i)
                continue
            if t == "mod" and re.match(r"\w", nxt) and toks[i + 2][0] in (";", "{"):
                self.children[cur].add(nxt)
                if toks[i + 2][0] == ";":
                    file_mods.append((cur + (nxt,), base.joinpath(*cur[len(mod) :], nxt)))
                else:
                    self.owner[cur + (nxt,)] = mod
                    depth += 1
                    stack.append((nxt, depth))
                i += 3
                continue
            if t == "use":
                i = self.parse_use(toks, i + 1, cur, [], path)
                continue
            if t in ("fn", "struct", "enum", "trait", "type", "const", "static", "union"):
                self.defs[cur].add(nxt)
            prev = toks[i - 1][0] if i else ""
            if re.match(r"\w", t) and nxt == "::" and prev not in ("::", ".", "in"):
                segs = [t]
                while toks[i + 1][0] == "::" and re.match(r"\w", toks[i + 2][0]):
                    segs.append(toks[i + 2][0])
                    i += 2
                self.refs.append((cur, segs, path, line))
            if t == "}" and stack and stack[-1][1] == depth:
                stack.pop()
            depth += (t == "{") - (t == "}")
            i += 1
        for child, stem in file_mods:
            if stem.with_suffix(".rs").is_file():
                self.load(child, stem.with_suffix(".rs"), False)
            elif (stem / "mod.rs").is_file():
                self.load(child, stem / "mod.rs", True)

    def parse_use(self, toks, i, cur, prefix, path):
        """Parse one use tree at toks[i]; record imports and references; return next index."""
        segs = list(prefix) or (["::"] if toks[i][0] == "::" else [])
        i += toks[i][0] == "::"
        while toks[i][0] not in ("{", "*", "") and toks[i + 1][0] == "::":
            segs.append(toks[i][0])
            i += 2
        t, line = toks[i]
        if t == "{":
            i += 1
            while toks[i][0] not in ("}", ""):
                i = self.parse_use(toks, i, cur, segs, path)
                i += toks[i][0] == ","
            i += 1
        elif t == "*":
            self.globs[cur].append(segs)
            self.refs.append((cur, segs, path, line))
            i += 1
        else:
            segs += [t] if t != "self" else []
            alias, i = (segs[-1] if segs else t), i + 1
            if toks[i][0] == "as":
                alias, i = toks[i + 1][0], i + 2
            self.imports[cur][alias] = segs
            self.refs.append((cur, segs, path, line))
        return i + (not prefix and toks[i][0] == ";")

    def resolve(self, scope, segs, hops=0):
        """The module a path used in `scope` points into, or None if it leaves the crate."""
        if not segs or hops > 16:
            return None
        head, rest = segs[0], list(segs[1:])
        if head == "crate":
            cur = ()
        elif head in ("self", "super"):
            cur, rest = scope, list(segs)
            while rest and rest[0] in ("self", "super"):
                cur = cur[:-1] if rest.pop(0) == "super" else cur
        elif head in self.children[scope]:
            cur, rest = scope, list(segs)
        elif head in self.imports[scope] and self.imports[scope][head] != list(segs[:1]):
            return self.resolve(scope, self.imports[scope][head] + rest, hops + 1)
        else:
            return None
        for n, s in enumerate(rest):
            if s in self.children[cur]:
                cur = cur + (s,)
            elif s in self.imports[cur]:
                target = self.resolve(cur, self.imports[cur][s] + rest[n + 1 :], hops + 1)
                return cur if target is None else target
            else:
                for glob in self.globs[cur]:
                    src = self.resolve(cur, glob, hops + 1)
                    if src is not None and (s in self.defs[src] or s in self.imports[src]):
                        return self.resolve(cur, glob + rest[n:], hops + 1)
                return cur
        return cur

    def edges(self):
        """{(from file module, to file module): [locations]}"""
        out = {}
        for scope, segs, path, line in self.refs:
            a, b = self.owner[scope], self.owner.get(self.resolve(scope, segs))
            if b is not None and a != b:
                out.setdefault((a, b), []).append(f"{path}:{line}")
        return out


def cycles(nodes, edges):
    """Strongly connected components with more than one node, as sorted lists."""
    graph = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    reach = {}
    for n in nodes:
        seen, todo = {n}, [n]
        while todo:
            new = graph[todo.pop()] - seen
            seen |= new
            todo += new
        reach[n] = seen
    comps = {frozenset(w for w in reach[n] if n in reach[w]) for n in nodes}
    return sorted(sorted(c) for c in comps if len(c) > 1)


def name(mod):
    return "::".join(mod) or "crate"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--allow", action="append", default=[], metavar="CRATE",
                        help="report this crate's cycles without failing (repeatable)")
    args = parser.parse_args()
    os.chdir(Path(__file__).resolve().parent.parent)
    dirs = sorted(p for p in Path("crates").iterdir() if (p / "src").is_dir())
    dirs += [Path("bench")] if Path("bench/src").is_dir() else []
    failed = False
    for d in dirs:
        src = d / "src"
        roots = [(d.name, src / f) for f in ("lib.rs", "main.rs") if (src / f).is_file()]
        if len(roots) == 2:
            roots[1] = (f"{d.name} (main.rs)", roots[1][1])
        roots += [(f"{d.name} (bin {b.stem})", b) for b in sorted((src / "bin").glob("*.rs"))]
        for label, root in roots:
            crate = Crate(root)
            edges = crate.edges()
            mods = {m for m, o in crate.owner.items() if m == o}
            found = cycles(mods, edges)
            allowed = bool(found) and d.name in args.allow
            failed |= bool(found) and not allowed
            note = " (allowed by --allow)" if allowed else ""
            print(f"{label}: {len(mods)} modules, {len(edges)} edges, {len(found)} cycles{note}")
            for n, comp in enumerate(found, 1):
                print(f"  cycle {n}: {', '.join(name(m) for m in comp)}")
                for (a, b), locs in sorted(edges.items()):
                    if a in comp and b in comp:
                        more = f" (+{len(locs) - 1} more)" if len(locs) > 1 else ""
                        print(f"    {name(a)} -> {name(b)}  {locs[0]}{more}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
