#!/usr/bin/env python3
"""Import cycles in the engine crate (crates/engine/src).

Reads every `.rs` file, drops comments and `#[cfg(test)]` modules, and
collects its `crate::…` and `super::…` paths (grouped `use crate::{a, b::{c}}`
included). Two graphs are checked:

- the crate's top-level modules (a folder such as `silver/` is one module);
- inside each folder, its files other than `mod.rs` (the folder's face: it
  declares its files and re-exports them, so it may use them all).

Paths kept for callers in `lib.rs` (`pub use silver::source;`) are followed
to the module they name. Prints both graphs; exits 1 naming a cycle if any.
Usage: python3 scripts/check-cycles.py
"""

import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent / "crates" / "engine" / "src"
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_of(path):
    """`silver/source.rs` -> ("silver", "source"); `silver/mod.rs` -> ("silver",)."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts.pop()
    return tuple(parts)


def strip(text):
    """Source without comments, string literals and test modules."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    text = re.sub(r"//[^\n]*", "", text)
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+" + IDENT + r"\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def use_tree(text, i):
    """Paths of the use tree starting at text[i] (after `crate::`); each a list of names."""
    m = re.match(r"\s*\{", text[i:])
    if m:
        i += m.end()
        paths = []
        while True:
            m = re.match(r"\s*\}", text[i:])
            if m:
                return paths, i + m.end()
            sub, i = use_tree(text, i)
            paths += sub
            m = re.match(r"\s*,", text[i:])
            if m:
                i += m.end()
    m = re.match(r"\s*(" + IDENT + r"|\*)", text[i:])
    if not m:
        return [[]], i
    name, i = m.group(1), i + m.end()
    m = re.match(r"\s*::", text[i:])
    if m:
        sub, i = use_tree(text, i + m.end())
        return [[name] + p for p in sub], i
    return [[name]], i


def references(text, here):
    """Module paths (tuples of names, absolute) that `text` refers to."""
    refs = []
    for m in re.finditer(r"\b(crate|super)\s*::", text):
        paths, _ = use_tree(text, m.end())
        base = () if m.group(1) == "crate" else here[:-1]
        refs += [base + tuple(p) for p in paths]
    return refs


def main():
    files = {module_of(p): p for p in sorted(SRC.rglob("*.rs"))}
    modules = set(files)
    folders = {m for m in modules if files[m].name == "mod.rs"}
    # Paths kept for callers: `pub use silver::source;` in lib.rs.
    aliases = {}
    for m in re.finditer(r"pub use (" + IDENT + r"(?:::" + IDENT + r")+)(?:\s+as\s+(" + IDENT + r"))?;",
                         strip(files[()].read_text())):
        target = tuple(m.group(1).split("::"))
        if target in modules:
            aliases[m.group(2) or target[-1]] = target

    def resolve(path):
        """Longest module named by `path` (aliases followed), or None."""
        if path and path[0] in aliases and path[:1] not in modules:
            path = aliases[path[0]] + path[1:]
        for n in range(len(path), 0, -1):
            if path[:n] in modules:
                return path[:n]
        return None

    top, inner = {}, {}
    for mod, path in files.items():
        if not mod:
            continue
        for ref in references(strip(path.read_text()), mod):
            target = resolve(ref)
            if target is None:
                continue
            if target[0] != mod[0]:
                top.setdefault(mod[0], set()).add(target[0])
                continue
            # Same top-level module: files of one folder, mod.rs left out.
            folder = mod[:-1]
            if (mod in folders or len(mod) < 2 or len(target) <= len(folder)
                    or target[:len(folder)] != folder):
                continue
            sibling = target[:len(folder) + 1]
            if sibling != mod and sibling not in folders | {folder}:
                inner.setdefault(folder, {}).setdefault(mod, set()).add(sibling)
            elif sibling != mod and sibling in folders:
                inner.setdefault(folder, {}).setdefault(mod, set()).add(sibling)

    graphs = [("crate", {k: v for k, v in top.items()},
               sorted({m[0] for m in modules if m}))]
    for folder in sorted(folders):
        nodes = sorted(m for m in modules if len(m) == len(folder) + 1 and m[:len(folder)] == folder)
        if len(nodes) > 1:
            graphs.append(("/".join(folder) + "/", inner.get(folder, {}), nodes))

    def name(n):
        return n if isinstance(n, str) else "::".join(n)

    cycles = []
    for title, graph, nodes in graphs:
        print(f"{title}:")
        for n in nodes:
            deps = sorted(graph.get(n, ()))
            print(f"  {name(n):<22} -> {', '.join(name(d) for d in deps) or '-'}")
        # Depth-first search for a back edge.
        state = {}

        def visit(n, stack):
            state[n] = 1
            stack.append(n)
            for d in sorted(graph.get(n, ())):
                if state.get(d) == 1:
                    return stack[stack.index(d):] + [d]
                if d not in state:
                    found = visit(d, stack)
                    if found:
                        return found
            stack.pop()
            state[n] = 2
            return None

        for n in nodes:
            if n not in state:
                found = visit(n, [])
                if found:
                    cycles.append(" -> ".join(name(x) for x in found))
                    break
    if cycles:
        for c in cycles:
            print(f"import cycle: {c}", file=sys.stderr)
        return 1
    print("no import cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
