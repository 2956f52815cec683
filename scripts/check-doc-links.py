#!/usr/bin/env python3
"""Checks the relative links of README.md and docs/**/*.md: every link to a file must name one that
exists, and every #anchor (in the same file or another .md file) must name a heading there (GitHub's
slugs: lower case, punctuation dropped, spaces to hyphens, -1, -2 ... for repeats) or an explicit
<a id="..."> / <a name="...">. Links with a scheme (https:, mailto:) are not checked.
Prints file:line: what for each broken link and exits 1 if there is one.
  python3 scripts/check-doc-links.py
"""
import os
import re
import sys

root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
os.chdir(root)

files = ["README.md"]
for dirpath, _, names in os.walk("docs"):
    files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".md")]

link = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
fence = re.compile(r"^\s*(```|~~~)")
heading = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
html_anchor = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"", re.I)


def slug(text):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)   # [text](url) -> text
    text = re.sub(r"<[^>]+>", "", text)                    # inline html
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


anchors_cache = {}


def anchors(path):
    if path not in anchors_cache:
        found, counts, in_fence = set(), {}, False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if fence.match(line):
                    in_fence = not in_fence
                    continue
                if in_fence:
                    continue
                found.update(html_anchor.findall(line))
                m = heading.match(line)
                if m:
                    s = slug(m.group(2))
                    n = counts.get(s, 0)
                    counts[s] = n + 1
                    found.add(s if n == 0 else f"{s}-{n}")
        anchors_cache[path] = found
    return anchors_cache[path]


problems = []
checked = 0
for path in files:
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if fence.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for target in link.findall(re.sub(r"`[^`]*`", "", line)):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                    continue
                checked += 1
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                if not os.path.exists(dest):
                    problems.append(f"{path}:{number}: {target}: no such file {dest}")
                    continue
                if anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    problems.append(f"{path}:{number}: {target}: no heading #{anchor} in {dest}")

for p in problems:
    print(p)
print(f"check-doc-links: {checked} links, {len(problems)} broken" if problems
      else f"check-doc-links: {checked} links, ok")
sys.exit(1 if problems else 0)
