#!/usr/bin/python3
"""The layer check: calls between the files of src/ go only downward.

src/ holds one folder per layer, from the bottom up:

    core catalog wire dynamo fdw sql

Each object file's undefined symbols (nm -u) that another object of the
extension defines are its calls (or uses) of that file.  The check fails
when:

* a file uses a symbol defined in a layer above its own;
* files of one layer use each other in a circle, unless every file of the
  circle includes one private header of the layer (a header of its folder
  other than the layer's own header, such as wire/transportstate.h): a
  module that shares a private header may call both ways inside itself;
* a file includes the header of a layer above its own, or a private
  header of another folder (a header there other than the layer's own);
* a file of core includes a PostgreSQL header (core is plain C).

Run it after `make`:  python3 test/layers.py [SRC_DIR]
It prints each problem, then "layers: N problems"; the exit status is 1
when there is any.
"""

import collections
import os
import re
import subprocess
import sys

LAYERS = ["core", "catalog", "wire", "dynamo", "fdw", "sql"]
LAYER_HEADERS = {"catalog": "shard_catalog.h", "wire": "wire.h", "dynamo": "dynamo.h",
                 "fdw": "fdw.h", "sql": "sql.h"}
INCLUDE = re.compile(r'^#include\s+"([^"]+)"', re.M)


def nm(args, obj):
    """The symbols nm prints for obj with args: (type, name) pairs."""
    out = subprocess.run(["nm", *args, obj], check=True, capture_output=True, text=True).stdout
    pairs = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 2:
            pairs.append((fields[-2], fields[-1]))
    return pairs


def objects(src):
    """Every object file of the layers: (layer, path of its source)."""
    found = []
    for layer in LAYERS:
        folder = os.path.join(src, layer)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".c"):
                obj = os.path.join(folder, name[:-2] + ".o")
                if not os.path.exists(obj):
                    sys.exit(f"layers: {obj} is missing: run make first")
                found.append((layer, os.path.join(folder, name)))
    return found


def includes(path):
    """The quoted includes of a source file."""
    with open(path, encoding="utf-8") as source:
        return set(INCLUDE.findall(source.read()))


def circles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on_stack, result = {}, {}, [], set(), []
    counter = [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return result


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "src")
    files = objects(src)
    layer_of = {path: layer for layer, path in files}
    defined_in = {}
    for _, path in files:
        for kind, name in nm(["--defined-only", "--extern-only"], path[:-2] + ".o"):
            defined_in[name] = path
    problems = []
    graph = collections.defaultdict(set)
    for layer, path in files:
        graph[path]
        for _, name in nm(["--undefined-only"], path[:-2] + ".o"):
            target = defined_in.get(name)
            if target is None or target == path:
                continue
            rel = os.path.relpath
            if LAYERS.index(layer_of[target]) > LAYERS.index(layer):
                problems.append(f"{rel(path, src)} ({layer}) uses {name} of "
                                f"{rel(target, src)} ({layer_of[target]}), a layer above")
            elif layer_of[target] == layer:
                graph[path].add(target)
    for component in circles(graph):
        layer = layer_of[component[0]]
        shared = set.intersection(*(includes(p) for p in component))
        private = [h for h in shared if h.startswith(layer + "/")
                   and os.path.basename(h) != LAYER_HEADERS.get(layer)]
        if not private:
            names = ", ".join(os.path.relpath(p, src) for p in component)
            problems.append(f"a circle of files that share no private header: {names}")
    for layer in LAYERS:
        folder = os.path.join(src, layer)
        for name in sorted(os.listdir(folder)):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(folder, name)
            for header in sorted(includes(path)):
                where, _, base = header.partition("/")
                if layer == "core" and where != "core":
                    problems.append(f"{layer}/{name} (core) includes {header}, a header outside core")
                elif where not in LAYERS or not os.path.exists(os.path.join(src, header)):
                    continue            # PostgreSQL's or the system's
                elif LAYERS.index(where) > LAYERS.index(layer):
                    problems.append(f"{layer}/{name} ({layer}) includes {header}, of a layer above")
                elif where not in (layer, "core") and base != LAYER_HEADERS.get(where):
                    problems.append(f"{layer}/{name} includes {header}, private to {where}/")
    for problem in problems:
        print(problem)
    print(f"layers: {len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
