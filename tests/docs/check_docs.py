#!/usr/bin/env python3
"""Checks that the docs cannot go stale: README.md and docs/**/*.md, from the repository root.

1. Links. Every relative link and image, [text](path) and ![alt](path) (also reference definitions,
   [name]: path, and <a href>/<img src> in HTML), must name a file that exists, relative to the page
   (or to the repository root when it starts with '/'). For page.md#anchor and #anchor the anchor must
   be the slug of a heading of that page, by GitHub's rules: lowercase, punctuation other than '-' and
   '_' dropped, spaces to '-', and -1, -2, ... for repeated headings. http(s), mailto and other links
   with a scheme are skipped, as is everything in code spans and fenced code blocks.

2. Programs. A line <!-- program: PATH --> followed (after blank lines) by a fenced code block: the
   block must be the file PATH (from the repository root), trailing newlines aside.

3. Excerpts. A line <!-- excerpt: PATH --> followed by a fenced code block: the block's lines must stand
   in the file PATH, consecutively and to the letter (a page that quotes part of a file). A line that
   is only `// …` leaves lines out: the pieces it separates must each stand in the file, consecutively
   and to the letter, in the block's order, with at least one line of the file between each two.

4. Outputs. A line <!-- output: PATH [ARGS...] --> followed by a fenced code block: the program built
   from PATH, given as --program PATH=EXECUTABLE, is run with ARGS in an empty temporary folder, and
   its standard output must match the block token by token: numbers within a relative 1e-3 (or an
   absolute 1e-6), every other token exactly.

5. Line counts. A table row that names a file, `PATH`, says "the whole file" and ends with a number
   must give PATH's number of lines. "(about N lines" (then ')' or more words) counts the lines of the
   file named last before it in its paragraph, list item or table row, as a code span: `PATH` from
   the root, or `NAME` in the folder `FOLDER/` that the paragraph or item named before it, as in
   "`examples/basics/` — `tour.cpp` (about 45 lines)". N must be within 10% (or 10 lines). A claim
   with no such file before it is skipped.

6. Line ranges. `PATH` lines A–B (a hyphen or an en dash), or `PATH` line A, names lines of the file
   PATH from the root; more ranges may follow, `PATH` lines A–B, C–D and E–F, and in a table `PATH` may
   end one cell and "lines A–B" begin the next. PATH must exist and 1 <= A <= B <= its number of lines.
   A range followed by a parenthesis of code spans says what it holds, `autograd/graph.h` lines 36–47
   (`Edge`): each name (its last part after '::', without template arguments or '()') must stand in
   those lines as a word. A table row that gives ranges and ends with a number must give the number of
   lines they cover, and a row with a cell that says "in all" and ends with a number the sum of the
   numbers that end the rows above it in its table (a table that gives ranges or whole files): a page
   says how much it asks a reader to read, and the sum stays right.

    check_docs.py --root . --program examples/basics/tour.cpp=build/release/examples/minigrad-basics-tour
    check_docs.py --update --root . --program ...   # rewrites the blocks that differ instead
    check_docs.py --self-test      # the checker itself: it must fail on broken pages

On failure each problem is printed with its page and line, and the exit status is 1.
"""

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import unquote

RELATIVE_TOLERANCE = 1e-3
ABSOLUTE_TOLERANCE = 1e-6
PROGRAM_TIMEOUT_SECONDS = 120

FENCE = re.compile(r"^ *(`{3,}|~{3,})")
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
PROGRAM_MARKER = re.compile(r"^\s*<!--\s*program:\s*(\S+)\s*-->\s*$")
EXCERPT_MARKER = re.compile(r"^\s*<!--\s*excerpt:\s*(\S+)\s*-->\s*$")
ELISION = "// …"  # in an excerpt, a line that stands for lines of the file left out
OUTPUT_MARKER = re.compile(r"^\s*<!--\s*output:\s*(.+?)\s*-->\s*$")  # PATH [ARGS...], shell-quoted
# [text](target "title") and ![alt](target): the text may hold one level of brackets ([`a[0]`](x)).
INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
)
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*(<[^>\n]*>|\S+)", re.MULTILINE)
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']*)[\"']", re.IGNORECASE)
HTML_ANCHOR = re.compile(r"<[a-z]+\b[^>]*?\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|" + NUMBER + r"|\S")


class Page:
    """One Markdown file, split into what the checks need."""

    def __init__(self, path):
        self.path = path
        self.lines = path.read_text(encoding="utf-8").split("\n")
        # The page with every line inside a fenced block (fences included) blanked: line numbers stay.
        self.prose_lines = []
        # (first line, last line, content) of each fenced block, 1-based line numbers of the fences.
        self.blocks = []
        fence = None
        for number, line in enumerate(self.lines, 1):
            match = FENCE.match(line)
            if fence is None:
                if match:
                    fence = (match.group(1), number, [])
                    self.prose_lines.append("")
                else:
                    self.prose_lines.append(line)
            else:
                mark, first, content = fence
                stripped = line.strip()
                if stripped and set(stripped) == {mark[0]} and len(stripped) >= len(mark):
                    self.blocks.append((first, number, "\n".join(content)))
                    fence = None
                else:
                    content.append(line)
                self.prose_lines.append("")
        if fence is not None:  # an unclosed fence runs to the end of the page, as in CommonMark
            self.blocks.append((fence[1], len(self.lines), "\n".join(fence[2])))
        self.prose = blank_code_spans("\n".join(self.prose_lines))

    def anchors(self):
        """The fragment names a link to this page may use: heading slugs, and HTML ids and names."""
        slugs, seen = [], {}
        previous = ""
        for line in self.prose_lines:
            text = None
            match = ATX_HEADING.match(line)
            if match:
                text = match.group(2)
            elif previous.strip() and SETEXT_UNDERLINE.match(line) and not ATX_HEADING.match(previous):
                text = previous.strip()
            if text is not None:
                slug = github_slug(text)
                count = seen.get(slug, 0)
                seen[slug] = count + 1
                slugs.append(slug if count == 0 else f"{slug}-{count}")
            previous = line
        slugs += HTML_ANCHOR.findall(self.prose)
        return set(slugs)

    def block_after(self, line_number):
        """The fenced block that follows line `line_number` after nothing but blank lines, or None."""
        for first, last, content in self.blocks:
            if first > line_number:
                between = self.lines[line_number : first - 1]
                return (first, last, content) if all(not line.strip() for line in between) else None
        return None


def blank_code_spans(text):
    """Replaces inline code spans (`code`, ``co`de``) by spaces, keeping newlines: links inside them are
    code, not links. A span ends at the next run of as many backticks, within its paragraph."""
    out = list(text)
    position = 0
    while True:
        opening = re.compile(r"`+").search(text, position)
        if not opening:
            break
        ticks = len(opening.group(0))
        closing = re.compile(r"(?<!`)`{%d}(?!`)" % ticks).search(text, opening.end())
        paragraph_end = re.compile(r"\n[ \t]*\n").search(text, opening.end())
        if not closing or (paragraph_end and paragraph_end.start() < closing.start()):
            position = opening.end()  # a lone run of backticks is literal text
            continue
        for i in range(opening.start(), closing.end()):
            if out[i] != "\n":
                out[i] = " "
        position = closing.end()
    return "".join(out)


def github_slug(heading):
    """The anchor GitHub gives a heading: its text (links, code and emphasis reduced to their words),
    lowercase, without punctuation except '-' and '_', spaces turned into '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # [text](url) -> text
    text = re.sub(r"<[^>]+>", "", text)  # HTML tags
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def shown(path, root):
    """A path as the messages show it: from the repository root when it is inside it."""
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def check_links(page, root, pages_by_path):
    problems, count = [], 0
    prose = HTML_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), page.prose)
    targets = [(m.start(1), m.group(1)) for m in INLINE_LINK.finditer(prose)]
    targets += [(m.start(1), m.group(1)) for m in REFERENCE_DEFINITION.finditer(prose)]
    targets += [(m.start(1), m.group(1)) for m in HTML_LINK.finditer(prose)]
    for offset, target in sorted(targets):
        where = f"{shown(page.path, root)}:{line_of(prose, offset)}"
        target = target.strip()
        if target.startswith("<") and target.endswith(">"):
            target = target[1:-1]
        if SCHEME.match(target) or target.startswith("//"):
            continue  # http(s), mailto, ...: not checked here
        count += 1
        if not target:
            problems.append(f"{where}: empty link target")
            continue
        path_part, _, anchor = target.partition("#")
        path_part = path_part.split("?", 1)[0]
        path_part, anchor = unquote(path_part), unquote(anchor)
        if not path_part:
            file = page.path
        elif path_part.startswith("/"):
            file = (root / path_part.lstrip("/")).resolve()
        else:
            file = (page.path.parent / path_part).resolve()
        if not file.exists():
            problems.append(f"{where}: broken link '{target}': {shown(file, root)} does not exist")
            continue
        if anchor and file.suffix.lower() == ".md" and file.is_file():
            linked = pages_by_path.get(file) or Page(file)
            if anchor not in linked.anchors():
                problems.append(f"{where}: broken link '{target}': no heading of {shown(file, root)} has the "
                                f"anchor '#{anchor}'")
    return problems, count


def marked_files(page, root, marker, kind, problems):
    """(where, source, block, file) for each <!-- kind: PATH --> marker of the page followed by a fenced
    block whose file exists; a marker without a block or a file adds to `problems`."""
    for number, line in enumerate(page.lines, 1):
        match = marker.match(line)
        if not match or not page.prose_lines[number - 1]:
            continue
        where = f"{shown(page.path, root)}:{number}"
        source = match.group(1)
        block = page.block_after(number)
        file = root / source
        if block is None:
            problems.append(f"{where}: <!-- {kind}: {source} --> is not followed by a fenced code block")
        elif not file.is_file():
            problems.append(f"{where}: <!-- {kind}: {source} -->: {shown(file, root)} does not exist")
        else:
            yield where, source, block, file


def check_programs(page, root, fixes):
    """Problems with the program blocks; `fixes` gets (page, block, right content, problem) for each
    block that differs."""
    problems, count = [], 0
    for where, source, block, file in marked_files(page, root, PROGRAM_MARKER, "program", problems):
        count += 1
        expected = file.read_text(encoding="utf-8").rstrip("\n")
        in_page = block[2].rstrip("\n")
        if in_page != expected:
            diff = difflib.unified_diff(
                expected.split("\n"), in_page.split("\n"), source, f"{shown(page.path, root)}:{block[0] + 1}",
                lineterm="",
            )
            problems.append(f"{where}: the block differs from {source}:\n" + "\n".join(diff))
            fixes.append((page, block, expected, problems[-1]))
    return problems, count


def check_excerpts(page, root):
    """Problems with the excerpt blocks: each must stand in its file, line for line."""
    problems, count = [], 0
    for where, source, block, file in marked_files(page, root, EXCERPT_MARKER, "excerpt", problems):
        count += 1
        # A block inside a list item is indented as a whole, as far as its opening fence; the file's lines
        # are not.
        fence = page.lines[block[0] - 1]
        indent = len(fence) - len(fence.lstrip(" "))
        excerpt = "\n".join(line[indent:] if not line[:indent].strip() else line
                             for line in block[2].split("\n")).rstrip("\n")
        problem = excerpt_problem(excerpt.split("\n"), file.read_text(encoding="utf-8").split("\n"))
        if problem:
            problems.append(f"{where}: the excerpt is not in {source} as written ({problem})")
    return problems, count


def excerpt_problem(excerpt, lines):
    """Why the excerpt's lines do not stand in the file's `lines` (rule 3), or None if they do."""
    pieces = [[]]  # the runs of lines between the `// …` lines that leave lines out
    for line in excerpt:
        if line.strip() == ELISION:
            pieces.append([])
        else:
            pieces[-1].append(line)
    start = 0  # the first line of the file the next piece may start at
    for number, piece in enumerate(pieces, 1):
        if not piece:
            return "a `// …` with no lines before or after it"
        # The piece's first place at or after `start`: a later one would only leave more lines out.
        found = next((at for at in range(start, len(lines) - len(piece) + 1)
                      if lines[at : at + len(piece)] == piece), None)
        if found is None:
            what = "the excerpt" if len(pieces) == 1 else f"its piece {number} of {len(pieces)}"
            return f"{what} is not there, after the pieces before it (was the code changed?)"
        start = found + len(piece) + 1  # a `// …` leaves out at least one line
    return None


WHOLE_FILE_ROW = re.compile(r"^\|[^|\n]*\|\s*`([^`\n]+)`\s*\|[^|\n]*the whole file[^|\n]*\|\s*(\d[\d,]*)\s*\|\s*$")
ABOUT_LINES = re.compile(r"\(about (\d[\d,]*)\s+lines\b")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s")
TABLE_ROW = re.compile(r"^\s*\|")
ROW_NUMBER = re.compile(r"\|\s*(\d[\d,]*)\s*\|\s*$")  # the number in a table row's last cell
# `PATH` lines A–B (`Name`, ...), C–D and E–F: one or more ranges of a file (rule 6). The parenthesis
# after a range may hold code spans with parentheses of their own: (`relu()`, `Node::backward`).
_HOLDS = r"\((?:`[^`\n]*`|[^()`])*\)"
ONE_RANGE = r"(\d+)(?:[ \t]*[–-][ \t]*(\d+))?(?:\s*(" + _HOLDS + r"))?"
_RANGE = r"\d+(?:[ \t]*[–-][ \t]*\d+)?(?:\s*" + _HOLDS + r")?"  # the same, capturing nothing
_MORE = r"\d+[ \t]*[–-][ \t]*\d+(?:\s*" + _HOLDS + r")?"  # a range after the first: A–B, never one number
LINE_RANGES = re.compile(
    r"`([^`\n]+)`(?:[ \t]*\|[ \t]*|\s+)lines?\s+(" + _RANGE + r"(?:(?:,\s*|\s+and\s+)" + _MORE + r")*)"
)
RANGE_IN_LIST = re.compile(ONE_RANGE)


def line_count(path):
    return len(path.read_text(encoding="utf-8").splitlines())


def prose_units(page):
    """(first line number, text) of each paragraph, list item, heading and table row outside the
    page's code blocks: the span within which a count refers back to the file it counts."""
    units, lines, first = [], [], 0
    for number, line in enumerate(page.prose_lines, 1):
        single = TABLE_ROW.match(line) or ATX_HEADING.match(line)
        if lines and (not line.strip() or LIST_ITEM.match(line) or single):
            units.append((first, "\n".join(lines)))
            lines = []
        if line.strip():
            if not lines:
                first = number
            lines.append(line)
            if single:
                units.append((first, "\n".join(lines)))
                lines = []
    if lines:
        units.append((first, "\n".join(lines)))
    return units


def counted_file(text, end, root):
    """The file a count at offset `end` of `text` is about: the last code span before it that is a file
    from `root`, or in a folder (a code span ending in '/') named before that span."""
    spans = list(CODE_SPAN.finditer(text, 0, end))
    for i in range(len(spans) - 1, -1, -1):
        name = spans[i].group(1).strip()
        if (root / name).is_file():
            return name
        folders = [s.group(1).strip() for s in spans[:i] if s.group(1).strip().endswith("/")]
        if folders and (root / folders[-1] / name).is_file():
            return folders[-1] + name
    return None


def check_line_counts(page, root):
    """Problems with the line counts a page gives for files (rule 5)."""
    problems, count = [], 0
    for number, line in enumerate(page.prose_lines, 1):
        row = WHOLE_FILE_ROW.match(line)
        if row and (root / row.group(1)).is_file():
            count += 1
            claimed, actual = int(row.group(2).replace(",", "")), line_count(root / row.group(1))
            if actual != claimed:
                where = f"{shown(page.path, root)}:{number}"
                problems.append(f"{where}: says {row.group(1)} has {claimed} lines; it has {actual}")
    for first, text in prose_units(page):
        for match in ABOUT_LINES.finditer(text):
            source = counted_file(text, match.start(), root)
            if source is None:
                continue
            count += 1
            claimed, actual = int(match.group(1).replace(",", "")), line_count(root / source)
            if abs(actual - claimed) > max(10, claimed // 10):
                where = f"{shown(page.path, root)}:{first + text.count(chr(10), 0, match.start())}"
                problems.append(f"{where}: says {source} has about {claimed} lines; it has {actual}")
    return problems, count


def held_name(name):
    """The word a range's name must show in the file: Node::~Node -> ~Node, NodeWith<F> -> NodeWith."""
    name = re.sub(r"<.*", "", name.strip())
    name = re.sub(r"\(.*", "", name)
    return name.rsplit("::", 1)[-1]


def ranges_in(text):
    """(offset, path, [(first, last, [names])]) for each `PATH` lines A–B, ... in `text`."""
    found = []
    for match in LINE_RANGES.finditer(text):
        ranges = []
        for one in RANGE_IN_LIST.finditer(match.group(2)):
            first = int(one.group(1))
            last = int(one.group(2)) if one.group(2) else first
            names = CODE_SPAN.findall(one.group(3)) if one.group(3) else []
            ranges.append((first, last, names))
        found.append((match.start(), match.group(1).strip(), ranges))
    return found


def check_line_ranges(page, root):
    """Problems with the line ranges a page gives for files, and with the sums of its tables (rule 6)."""
    problems, count = [], 0
    prose = "\n".join(page.prose_lines)
    for offset, source, ranges in ranges_in(prose):
        where = f"{shown(page.path, root)}:{line_of(prose, offset)}"
        path = root / source
        if not path.is_file():
            problems.append(f"{where}: gives lines of {source}, which does not exist")
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for first, last, names in ranges:
            count += 1
            if not 1 <= first <= last <= len(lines):
                problems.append(f"{where}: gives lines {first}–{last} of {source}, which has "
                                f"{len(lines)} lines")
                continue
            held = "\n".join(lines[first - 1 : last])
            for name in names:
                word = held_name(name)
                if not re.search(r"(?<![\w~])" + re.escape(word) + r"(?!\w)", held):
                    problems.append(f"{where}: says {source} lines {first}–{last} hold `{name}`; "
                                    f"'{word}' is not in them")
    # Tables: a row's number is what its ranges cover; an "in all" row's, the sum of the rows above it.
    table = []  # (line number, line) of the current table
    for number, line in enumerate(page.prose_lines + [""], 1):
        if TABLE_ROW.match(line):
            table.append((number, line))
            continue
        total = 0
        # Only a table of what to read: one that gives line ranges or whole files.
        if not any(ranges_in(row) or WHOLE_FILE_ROW.match(row) for _, row in table):
            table = []
        for row_number, row in table[2:]:  # past the header and its separator
            where = f"{shown(page.path, root)}:{row_number}"
            end = ROW_NUMBER.search(row)
            if not end:
                continue
            claimed = int(end.group(1).replace(",", ""))
            cells = [cell.strip().lower() for cell in row.strip().strip("|").split("|")[:-1]]
            if any(re.search(r"\bin all\b", cell) for cell in cells):
                count += 1
                if claimed != total:
                    problems.append(f"{where}: says {claimed} lines in all; the rows above it add up to "
                                    f"{total}")
                continue
            total += claimed
            covered = sum(last - first + 1 for _, _, ranges in ranges_in(row) for first, last, _ in ranges)
            if covered and covered != claimed:
                problems.append(f"{where}: says {claimed} lines; the ranges in the row cover {covered}")
        table = []
    return problems, count


def tokens(text):
    return TOKEN.findall(text)


def same_token(expected, actual):
    if expected == actual:
        return True
    if re.fullmatch(NUMBER, expected) and re.fullmatch(NUMBER, actual):
        a, b = float(expected), float(actual)
        return abs(a - b) <= max(RELATIVE_TOLERANCE * max(abs(a), abs(b)), ABSOLUTE_TOLERANCE)
    return False


def compare_output(shown, printed):
    """None if they match, else what differs first."""
    want, got = tokens(shown), tokens(printed)
    for i, (w, g) in enumerate(zip(want, got)):
        if not same_token(w, g):
            return f"token {i + 1}: the page shows '{w}', the program printed '{g}'"
    if len(want) != len(got):
        return f"the page shows {len(want)} tokens, the program printed {len(got)}"
    return None


def check_outputs(page, root, programs, cache, fixes):
    """Problems with the output blocks; `fixes` gets (page, block, right content, problem) for each
    block that differs."""
    problems, count = [], 0
    for number, line in enumerate(page.lines, 1):
        match = OUTPUT_MARKER.match(line)
        if not match or not page.prose_lines[number - 1]:
            continue
        count += 1
        where = f"{shown(page.path, root)}:{number}"
        source, *args = shlex.split(match.group(1))
        block = page.block_after(number)
        if block is None:
            problems.append(f"{where}: <!-- output: {source} --> is not followed by a fenced code block")
            continue
        if source not in programs:
            problems.append(
                f"{where}: the page shows the output of {source}, but check_docs.py was not given its "
                f"executable (--program {source}=EXECUTABLE; tests/CMakeLists.txt passes them)"
            )
            continue
        key = (programs[source], tuple(args))
        if key not in cache:
            with tempfile.TemporaryDirectory(prefix="check_docs_") as folder:
                try:
                    cache[key] = subprocess.run(
                        [programs[source], *args], cwd=folder, capture_output=True, text=True,
                        timeout=PROGRAM_TIMEOUT_SECONDS,
                    )
                except (OSError, subprocess.TimeoutExpired) as error:
                    cache[key] = error
        result = cache[key]
        command = " ".join([programs[source], *args])
        if isinstance(result, Exception):
            problems.append(f"{where}: could not run {command}: {result}")
            continue
        if result.returncode != 0:
            problems.append(f"{where}: {command} exited with status {result.returncode}:\n{result.stderr}")
            continue
        difference = compare_output(block[2], result.stdout)
        if difference:
            diff = difflib.unified_diff(
                block[2].rstrip("\n").split("\n"), result.stdout.rstrip("\n").split("\n"),
                f"{shown(page.path, root)}:{block[0] + 1}", f"output of {command}", lineterm="",
            )
            problems.append(f"{where}: the output of {source} differs ({difference}):\n" + "\n".join(diff))
            fixes.append((page, block, result.stdout.rstrip("\n"), problems[-1]))
    return problems, count


def find_pages(root):
    pages = [root / "README.md"] if (root / "README.md").is_file() else []
    pages += sorted((root / "docs").rglob("*.md")) if (root / "docs").is_dir() else []
    return [p.resolve() for p in pages]


def apply_fixes(fixes, root, report):
    """Rewrites each block in `fixes` with its right content, page by page."""
    by_page = {}
    for page, block, content, _ in fixes:
        by_page.setdefault(page.path, (page, []))[1].append((block, content))
    for path, (page, blocks) in by_page.items():
        lines = list(page.lines)
        for (first, last, _), content in sorted(blocks, key=lambda b: b[0][0], reverse=True):
            lines[first : last - 1] = content.split("\n") if content else []
        path.write_text("\n".join(lines), encoding="utf-8")
        if report:
            print(f"check_docs: updated {len(blocks)} block(s) of {shown(path, root)}")


def check(root, programs, summary=True, update=False):
    """Checks every page under `root`; returns the problems found (and prints a summary line). With
    `update`, rewrites the program and output blocks that differ instead of reporting them."""
    root = root.resolve()
    pages = {path: Page(path) for path in find_pages(root)}
    problems, cache, fixes = [], {}, []
    links = program_blocks = excerpt_blocks = output_blocks = line_counts = line_ranges = 0
    for page in pages.values():
        found, count = check_links(page, root, pages)
        problems += found
        links += count
        found, count = check_programs(page, root, fixes)
        problems += found
        program_blocks += count
        found, count = check_excerpts(page, root)
        problems += found
        excerpt_blocks += count
        found, count = check_outputs(page, root, programs, cache, fixes)
        problems += found
        output_blocks += count
        found, count = check_line_counts(page, root)
        problems += found
        line_counts += count
        found, count = check_line_ranges(page, root)
        problems += found
        line_ranges += count
    if update and fixes:
        apply_fixes(fixes, root, report=summary)
        fixed = {problem for *_, problem in fixes}
        problems = [p for p in problems if p not in fixed]
    if summary:
        print(f"check_docs: {len(pages)} pages, {links} relative links, {program_blocks} program blocks, "
              f"{excerpt_blocks} excerpts, {output_blocks} output blocks, {line_counts} line counts, "
              f"{line_ranges} line ranges and sums")
    return problems


def parse_programs(pairs):
    programs = {}
    for pair in pairs:
        source, equals, executable = pair.partition("=")
        if not equals or not source or not executable:
            sys.exit(f"check_docs: --program wants SOURCE=EXECUTABLE, got '{pair}'")
        # Absolute: the program runs in a temporary folder.
        programs[os.path.normpath(source)] = os.path.abspath(executable)
    return programs


# ---------------------------------------------------------------------------------------------------
# The self-test: pages with one known fault each must fail, and for that fault; a clean page must pass.


def self_test():
    fake_program = "#!/bin/sh\necho 'loss 0.5000'\necho \"args: $*\"\n"
    tour = "int main() {\n  int x = 0;\n  return x;\n}\n"
    good_page = (
        "# A page\n\n## Second heading, with `code`!\n\n"
        "See [the other page](other.md#a-heading), [this one](#second-heading-with-code),\n"
        "![a picture](picture.png), [the web](https://example.com/missing) and `[code](not-a-link)`.\n\n"
        "```sh\n[also code](not-a-link)\n```\n\n"
        "<!-- program: examples/tour.cpp -->\n\n```cpp\n" + tour + "```\n\n"
        "<!-- excerpt: examples/tour.cpp -->\n```cpp\n  int x = 0;\n  return x;\n```\n\n"
        "<!-- output: examples/tour.cpp --flag -->\n```\nloss 0.50004\nargs: --flag\n```\n"
        "\n| stop | file | what | lines |\n| --- | --- | --- | --- |\n| 1 | `examples/tour.cpp` | the whole file | 4 |\n"
        "| 2 | `examples/tour.cpp` | lines 2–3 (`x`) and 4-4 | 3 |\n| | | in all | 7 |\n"
        "\n- `examples/tour.cpp`, the tour (about 5 lines)\n"
        "\nRead `examples/tour.cpp` lines 1–4 (`main`, `int main()`), or `examples/tour.cpp`\nline 3.\n"
    )
    cases = {
        "a clean page": (good_page, None),
        "a broken link": (good_page.replace("other.md#", "missing.md#"), "missing.md"),
        "a broken anchor": (good_page.replace("other.md#a-heading", "other.md#no-such-heading"),
                            "#no-such-heading"),
        "a mismatched program block": (good_page.replace("int main() {\n", "int main(void) {\n"),
                                       "+int main(void) {"),
        "an excerpt not in its file": (good_page.replace("```cpp\n  int x = 0;", "```cpp\n  int x = 1;"),
                                       "the excerpt is not in examples/tour.cpp"),
        "an excerpt with lines left out": (
            good_page.replace("```cpp\n  int x = 0;\n  return x;\n```", "```cpp\nint main() {\n// …\n}\n```"),
            None),
        "a piece after a `// …` not in its file": (
            good_page.replace("```cpp\n  int x = 0;\n  return x;\n```", "```cpp\nint main() {\n// …\n  return 1;\n```"),
            "its piece 2 of 2 is not there"),
        "a `// …` that leaves out no line": (
            good_page.replace("```cpp\n  int x = 0;\n  return x;\n```", "```cpp\n  int x = 0;\n// …\n  return x;\n```"),
            "its piece 2 of 2 is not there"),
        "pieces out of order": (
            good_page.replace("```cpp\n  int x = 0;\n  return x;\n```", "```cpp\n  return x;\n// …\n  int x = 0;\n```"),
            "its piece 2 of 2 is not there"),
        "a mismatched output": (good_page.replace("loss 0.50004", "loss 0.5010"), "differs"),
        "an output with other words": (good_page.replace("args: --flag", "arguments: --flag"), "differs"),
        "a program not given": (good_page.replace("output: examples/tour.cpp", "output: examples/other.cpp"),
                                "--program examples/other.cpp"),
        "a wrong whole-file count": (good_page + "\n| 1 | `examples/tour.cpp` | the whole file | 5 |\n",
                                     "says examples/tour.cpp has 5 lines; it has 4"),
        "a wrong 'about' count": (good_page + "\n- `examples/tour.cpp`, the tour (about 40 lines)\n",
                                  "says examples/tour.cpp has about 40 lines; it has 4"),
        "a wrong count of a file in a folder named before": (
            good_page + "\n- `examples/` — the programs: `tour.cpp` (about 40 lines, and more)\n",
            "says examples/tour.cpp has about 40 lines; it has 4"),
        "a wrong count wrapped onto the next line": (
            good_page + "\n- `examples/tour.cpp` — `main`, and what\n  it returns (about 40 lines)\n",
            "says examples/tour.cpp has about 40 lines; it has 4"),
        "a range past the end of its file": (good_page.replace("lines 1–4 (`main`", "lines 1–9 (`main`"),
                                             "gives lines 1–9 of examples/tour.cpp, which has 4 lines"),
        "a range that does not hold the name it gives": (
            good_page.replace("lines 1–4 (`main`", "lines 2–4 (`main`"),
            "says examples/tour.cpp lines 2–4 hold `main`; 'main' is not in them"),
        "a range of a file that does not exist": (good_page + "\nSee `examples/gone.cpp` lines 1–2.\n",
                                                  "gives lines of examples/gone.cpp, which does not exist"),
        "a row whose number is not what its ranges cover": (
            good_page.replace("and 4-4 | 3 |", "and 4-4 | 4 |").replace("in all | 7", "in all | 8"),
            "says 4 lines; the ranges in the row cover 3"),
        "a wrong 'in all'": (good_page.replace("in all | 7", "in all | 6"),
                             "says 6 lines in all; the rows above it add up to 7"),
    }

    def make_tree(root, page):
        (root / "docs").mkdir()
        (root / "examples").mkdir()
        (root / "docs" / "page.md").write_text(page)
        (root / "docs" / "other.md").write_text("# Title\n\nA heading\n---------\n")
        (root / "docs" / "picture.png").write_bytes(b"")
        (root / "examples" / "tour.cpp").write_text(tour)
        executable = root / "tour"
        executable.write_text(fake_program)
        executable.chmod(0o755)
        return {"examples/tour.cpp": str(executable)}

    failures = []
    for name, (page, expected_problem) in cases.items():
        with tempfile.TemporaryDirectory(prefix="check_docs_self_test_") as folder:
            root = Path(folder)
            problems = check(root, make_tree(root, page), summary=False)
            caught = [p for p in problems if expected_problem is not None and expected_problem in p]
            if expected_problem is None and problems:
                failures.append(f"{name}: expected no problem, got:\n" + "\n".join(problems))
            elif expected_problem is not None and not caught:
                failures.append(f"{name}: expected a problem mentioning '{expected_problem}', got:\n"
                                + ("\n".join(problems) or "(none)"))
            elif expected_problem is None:
                print(f"{name}: passes")
            else:
                print(f"{name}: fails, as it should: {caught[0].splitlines()[0]}")
    # --update rewrites a stale program block and output block so that the page then passes.
    with tempfile.TemporaryDirectory(prefix="check_docs_self_test_") as folder:
        root = Path(folder)
        stale = good_page.replace("int main() {\n", "int main(void) {\n").replace("loss 0.50004", "(to be filled in)")
        programs = make_tree(root, stale)
        check(root, programs, summary=False, update=True)
        problems = check(root, programs, summary=False)
        if problems:
            failures.append("--update: the page still fails after it:\n" + "\n".join(problems))
        else:
            print("--update: rewrites a stale program block and output block, and the page then passes")
    for failure in failures:
        print(f"SELF-TEST FAILED: {failure}", file=sys.stderr)
    print(f"check_docs self-test: {len(cases) + 1 - len(failures)} of {len(cases) + 1} cases as expected")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2],
                        help="the repository root (default: two folders above this script)")
    parser.add_argument("--program", action="append", default=[], metavar="SOURCE=EXECUTABLE",
                        help="the executable built from SOURCE, for its <!-- output: SOURCE --> blocks")
    parser.add_argument("--update", action="store_true",
                        help="rewrite program and output blocks that differ, rather than report them")
    parser.add_argument("--self-test", action="store_true", help="check the checker on broken pages")
    options = parser.parse_args()
    if options.self_test:
        return self_test()
    problems = check(options.root, parse_programs(options.program), update=options.update)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check_docs: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
