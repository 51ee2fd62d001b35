#!/usr/bin/env python3
"""Prints the module graph of a Rust crate's source tree and fails on an import circle.

A module is a file (`lib.rs` is the crate root, `a/mod.rs` and `a.rs` are `a`). An edge
A -> B means A's code names an item of B through `crate::`, `super::` or `self::`, in a
`use` or inline; B is the longest module path the name starts with.

The rule checked: the modules under one parent depend on each other without a circle. An
edge A -> B counts as an edge between the two children of their nearest common ancestor
that hold A and B (so `store::batch::load -> store::sql` is `store::batch -> store::sql`);
a module naming its own ancestor or descendant is inside one unit and counts for nothing.
A set of siblings that reach each other is a circle.

Usage: tools/module-graph.py [--siblings] [SRC_DIR]   (default crates/hanson/src)
  --siblings  print the graph the rule is checked on (edges between siblings) instead of
              the file-level one
"""

import os
import re
import sys


def module_of(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ("lib", "main", "mod"):
        rel = rel[:-1]
    return tuple(rel)


def strip_comments_and_strings(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'r#*"(?:.|\n)*?"#*', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    text = re.sub(r"//[^\n]*", "", text)
    return text


def expand_use_tree(tree):
    """`a::{b, c::{d, e}}` -> [a::b, a::c::d, a::c::e]."""
    tree = tree.strip()
    brace = tree.find("{")
    if brace < 0:
        return [re.sub(r"\s+as\s+\w+$", "", tree).strip()]
    prefix, inner = tree[:brace], tree[brace + 1 : tree.rfind("}")]
    parts, depth, current = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        current += ch
    parts.append(current)
    out = []
    for part in parts:
        if part.strip():
            for tail in expand_use_tree(part):
                out.append(prefix + tail if tail != "self" else prefix.rstrip(":"))
    return out


def inline_modules(text):
    """(start, end, name) of each `mod name { ... }` block."""
    spans = []
    for m in re.finditer(r"\bmod\s+(\w+)\s*\{", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += text[i] == "{"
            depth -= text[i] == "}"
            i += 1
        spans.append((m.end(), i, m.group(1)))
    return spans


def references(text):
    """(path, inline module names around it) of every path the text names."""
    spans = inline_modules(text)
    inside = lambda pos: tuple(name for start, end, name in spans if start <= pos < end)
    refs = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        refs.extend((r, inside(m.start())) for r in expand_use_tree(m.group(1)))
    body = re.sub(r"\buse\s+[^;]+;", lambda m: " " * len(m.group(0)), text)
    refs.extend((m.group(0), inside(m.start())) for m in re.finditer(r"\b(?:crate|super|self)(?:::[A-Za-z_]\w*)+", body))
    return refs


def resolve(ref, here, is_dir_module, modules):
    parts = [p for p in ref.split("::") if p]
    if not parts or parts[0] not in ("crate", "super", "self"):
        return None
    if parts[0] == "crate":
        base, parts = (), parts[1:]
    else:
        # In `a.rs` and `a/mod.rs` alike, `self` is `a` and `super` is a's parent.
        base = here
        while parts and parts[0] in ("super", "self"):
            if parts[0] == "super":
                base = base[:-1]
            parts = parts[1:]
    path = base + tuple(parts)
    for n in range(len(path), -1, -1):
        if path[:n] in modules:
            return path[:n]
    return None


def main():
    args = [a for a in sys.argv[1:] if a != "--siblings"]
    lifted_only = "--siblings" in sys.argv[1:]
    src = args[0] if args else "crates/hanson/src"
    files = {}
    for root, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(root, name)
                files[module_of(src, path)] = path
    modules = set(files)
    edges = {m: set() for m in modules}
    for module, path in files.items():
        with open(path, encoding="utf-8") as f:
            text = strip_comments_and_strings(f.read())
        is_dir = os.path.basename(path) in ("mod.rs", "lib.rs", "main.rs")
        for ref, inline in references(text):
            target = resolve(ref, module + inline, is_dir, modules)
            if target is not None and target != module and target != ():
                edges[module].add(target)

    name = lambda m: "::".join(m) or "crate"
    if not lifted_only:
        for m in sorted(modules):
            if edges[m]:
                print(f"{name(m)} -> {', '.join(sorted(name(t) for t in edges[m]))}")

    # Lift every edge to the siblings under the two modules' nearest common ancestor.
    siblings = {}
    for a, targets in edges.items():
        for b in targets:
            common = 0
            while common < min(len(a), len(b)) and a[common] == b[common]:
                common += 1
            if common == len(a) or common == len(b):
                continue
            sa, sb = a[: common + 1], b[: common + 1]
            siblings.setdefault(sa, set()).add(sb)
            siblings.setdefault(sb, set())
    edges = siblings
    modules = set(siblings)
    if lifted_only:
        for m in sorted(modules):
            if edges[m]:
                print(f"{name(m)} -> {', '.join(sorted(name(t) for t in edges[m]))}")

    # Tarjan's strongly connected components.
    index, low, stack, on_stack, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                sccs.append(scc)

    sys.setrecursionlimit(10000)
    for v in sorted(modules):
        if v not in index:
            visit(v)
    if sccs:
        print(f"\n{len(sccs)} import circle(s):", file=sys.stderr)
        for scc in sccs:
            print("  " + " <-> ".join(sorted(name(m) for m in scc)), file=sys.stderr)
        return 1
    print(f"\n{len(modules)} modules, no import circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
