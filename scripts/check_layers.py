#!/usr/bin/env python3
"""Checks the house rules of ARCHITECTURE.md on the Rust sources: layers call only downward.

For each crate it reads every `crate::`, `super::` and `self::` path outside `#[cfg(test)]`
modules, resolves it to the file that defines the module, and checks two things:

1. No import cycle between files (strongly connected components of the file graph).
2. Every edge goes to a file of the same or a lower layer (LAYERS below), and a runtime backend
   never reaches into another backend (`runtime/cpu` does not name `runtime/cuda`).

Usage: python3 scripts/check_layers.py [--graph]   (exit status 1 on a violation)
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# Per crate: (module-path prefix, layer). The longest matching prefix decides a file's layer;
# higher layers may call lower ones, never the reverse. "" is the crate root (lib.rs).
LAYERS = {
    "crates/ingot-msl/src": [
        ("", 9),
        ("main", 10),
        ("error", 0),
        ("target", 0),
        ("types", 1),
        ("lexer", 1),
        ("consteval", 1),
        ("preprocess", 2),
        ("prelude", 2),
        ("syntax", 3),
        ("reflect", 4),
        ("unit", 5),
        ("wrapper_common", 5),
        ("checked", 5),
        ("sandbox", 5),
        ("edit", 4),
        ("anon_struct", 5),
        ("ternary", 5),
        ("range_init", 5),
        ("loop_checks", 5),
        ("guarded_shuffle", 5),
        ("wiloops", 2),
        ("purity", 1),
        ("wrapper_cpu", 6),
        ("wrapper_cuda", 6),
        ("rewrite", 7),
    ],
    "crates/ingot/src": [
        ("", 9),
        ("error", 0),
        ("dtype", 1),
        ("layout", 1),
        ("device", 1),
        ("cache", 1),
        ("runtime", 2),
        ("array", 3),
        ("kernel", 4),
        ("ops", 5),
        ("translate", 4),
        ("progress", 1),
    ],
    "crates/ingot-python/src": [
        ("", 9),
        ("errors", 0),
        ("dtype", 1),
        ("device", 1),
        ("metal", 1),
        ("pyarray", 2),
        ("indexing", 3),
        ("creation", 3),
        ("interop", 3),
        ("ops", 4),
        ("sorting", 4),
        ("random", 4),
        ("linalg", 4),
        ("fft", 4),
        ("prepared", 4),
        ("kernel", 5),
        ("array", 6),
        ("array_operators", 6),
        ("array_methods", 6),
        ("translate", 6),
    ],
}


def strip_comments_and_strings(text):
    """Blanks comments, string and char literals (keeps line structure)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or re.match(r"'\\u\{[0-9a-fA-F]+\}'", text[i:i + 12]):
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            out.append(" " * len(m.group(0)))
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def drop_test_modules(text):
    """Removes `#[cfg(test)] mod name { ... }` bodies (tests may use any layer)."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", text)
        if not m:
            return text
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        text = text[:m.start()] + re.sub(r"[^\n]", " ", text[m.start():j]) + text[j:]


def module_of(rel):
    """`ops/cpu/mod.rs` -> ('ops', 'cpu'); `lib.rs` -> ()."""
    parts = rel[:-3].split("/")
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


def expand_use(tree):
    """Expands a use tree `a::{b, c::{d, e}}` into paths."""
    tree = tree.strip()
    m = re.match(r"^(.*?)::\{(.*)\}$", tree, re.S)
    if not m:
        return [tree]
    prefix, inner = m.group(1), m.group(2)
    items, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        cur += ch
    items.append(cur)
    paths = []
    for it in items:
        it = it.strip()
        if not it:
            continue
        for p in expand_use(it):
            paths.append(prefix + "::" + p)
    return paths


def references(text, here, is_dir_module, children=()):
    """Module paths (tuples) named by `text`, a file of module `here` whose child modules are
    `children` (paths may start with a child's name, as in `use memory::CpuMemory`)."""
    refs = []
    if children:
        alt = "|".join(sorted(children))
        for m in re.finditer(r"(?<![\w:$])(%s)((?:::\w+)+)(?!\w)(?!::)" % alt, text):
            refs.append("self::" + m.group(1) + m.group(2))
    # `use` statements (with groups), then every other path.
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        for p in expand_use(m.group(1)):
            refs.append(p)
    for m in re.finditer(r"(?<![\w:])(\$?crate|super|self)((?:::\w+)+)(?!\w)(?!::)", text):
        refs.append(m.group(1) + m.group(2))
    out = []
    for p in refs:
        p = re.sub(r"\s+", "", p)
        p = re.sub(r"\bas\w+$", "", p)
        segs = [s for s in p.split("::") if s]
        if not segs:
            continue
        base = list(here)
        if segs[0] in ("crate", "$crate"):
            cur, segs = [], segs[1:]
        elif segs[0] in children:
            cur = base
        elif segs[0] == "self":
            cur, segs = base, segs[1:]
        elif segs[0] == "super":
            cur = base
            while segs and segs[0] == "super":
                cur, segs = cur[:-1], segs[1:]
        else:
            continue
        out.append(tuple(cur) + tuple(segs))
    return out


def check_crate(src, layers, show_graph):
    files = {}
    for dirpath, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                rel = os.path.relpath(os.path.join(dirpath, name), src).replace(os.sep, "/")
                if rel == "main.rs" or rel.startswith("bin/"):
                    continue
                files[module_of(rel)] = rel
    texts = {}
    for mod, rel in files.items():
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            texts[mod] = drop_test_modules(strip_comments_and_strings(f.read()))
    # `pub use` re-exports: (module, name) -> the path it names, so that `crate::Array` is an
    # edge to `array.rs`, not to `lib.rs`.
    reexports = {}
    for mod, rel in files.items():
        is_dir = rel.endswith(("mod.rs", "lib.rs"))
        for m in re.finditer(r"\bpub\s+use\s+([^;]+);", texts[mod]):
            for p in expand_use(m.group(1)):
                p = re.sub(r"\s+", "", p)
                alias = re.search(r"as(\w+)$", p)
                p = re.sub(r"as\w+$", "", p)
                segs = p.split("::")
                name = alias.group(1) if alias else segs[-1]
                for full in references("use " + p + ";", mod, is_dir) or [tuple(mod) + tuple(segs)]:
                    reexports[(mod, name)] = full

    def resolve(path, depth=0):
        for k in range(len(path), -1, -1):
            if path[:k] in files:
                if k < len(path) and (path[:k], path[k]) in reexports and depth < 8:
                    return resolve(reexports[(path[:k], path[k])] + path[k + 1:], depth + 1)
                return path[:k]
        return None

    edges = {}
    for mod, rel in files.items():
        is_dir = rel.endswith(("mod.rs", "lib.rs"))
        targets = set()
        children = [f[-1] for f in files if len(f) == len(mod) + 1 and f[:-1] == mod]
        for path in references(texts[mod], mod, is_dir, children):
            t = resolve(path)
            if t is not None and t != mod:
                targets.add(t)
        edges[mod] = targets

    def layer(mod):
        best, lv = -1, None
        name = "/".join(mod)
        for prefix, level in layers:
            if (prefix == "" or name == prefix or name.startswith(prefix + "/")) and len(prefix) > best:
                best, lv = len(prefix), level
        return lv

    problems = []
    for a, ts in edges.items():
        for b in ts:
            la, lb = layer(a), layer(b)
            if la is not None and lb is not None and lb > la:
                problems.append("upward call: %s (layer %d) -> %s (layer %d)" % (files[a], la, files[b], lb))
            # A backend is a folder under runtime/; its files name no other backend's.
            def backend(m):
                if len(m) >= 2 and m[0] == "runtime" and files.get(m[:2], "").endswith("mod.rs"):
                    return m[1]
                return None
            if backend(a) and backend(b) and backend(a) != backend(b):
                problems.append("backend reaches into another backend: %s -> %s" % (files[a], files[b]))

    # Tarjan's strongly connected components.
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(files[c] for c in comp))

    sys.setrecursionlimit(10000)
    for v in files:
        if v not in index:
            strong(v)
    for comp in sccs:
        problems.append("import cycle: " + ", ".join(comp))
    if show_graph:
        for a in sorted(edges):
            print("%s -> %s" % (files[a], ", ".join(sorted(files[b] for b in edges[a]))))
    return problems


def main():
    show = "--graph" in sys.argv
    bad = 0
    for crate, layers in LAYERS.items():
        src = os.path.join(ROOT, crate)
        problems = check_crate(src, layers, show)
        for p in problems:
            print("%s: %s" % (crate, p))
        bad += len(problems)
        if not problems:
            print("%s: layers ok (no cycles, no upward calls)" % crate)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
