"""The one reader of YAML that users hand us (params files, judge and price settings).

``yaml.safe_load`` is safe against code execution but not against size: a kilobyte of
nested aliases (the "billion laughs") expands to gigabytes once the document is walked or
written out as JSON, a few thousand nested brackets exhaust the recursion limit, and a
file in the wrong encoding fails with a decoding traceback. This reader bounds the
document's size *as expanded* (aliases counted every time they are used), its nesting
depth and its byte size, refuses recursive aliases and repeated keys, decodes strictly
as UTF-8, and turns every failure into a one-line ConfigError naming the file and line.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ehrlib.errors import ConfigError

__all__ = ["MAX_YAML_BYTES", "MAX_YAML_DEPTH", "MAX_YAML_NODES", "YamlDoc", "parse_yaml", "read_yaml"]

#: settings files are small; anything larger is not one
MAX_YAML_BYTES = 1_000_000
#: nesting levels (mappings and lists, aliases followed)
MAX_YAML_DEPTH = 40
#: scalars, lists and mappings of the document with every alias expanded
MAX_YAML_NODES = 10_000


@dataclass(frozen=True, slots=True)
class YamlDoc:
    """A parsed document and the 1-based line of each top-level key (for error messages)."""

    data: Any
    source: str
    lines: Mapping[Any, int] = field(default_factory=dict)

    def where(self, key: Any) -> str:
        """``source:line`` of a top-level key, or the source alone."""
        line = self.lines.get(key)
        return f"{self.source}:{line}" if line else self.source


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that refuses to compose a node nested deeper than MAX_YAML_DEPTH."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                mark = self.peek_event().start_mark
                raise _Refused(mark.line + 1, f"nested deeper than {MAX_YAML_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _Refused(Exception):
    def __init__(self, line: int, why: str) -> None:
        super().__init__(why)
        self.line, self.why = line, why


def _measure(node: Node, memo: dict[int, tuple[int, int]], open_: set[int]) -> tuple[int, int]:
    """(expanded node count, expanded depth) of ``node``; an alias to a node counts it again."""
    key = id(node)
    if key in memo:
        return memo[key]
    if key in open_:
        raise _Refused(node.start_mark.line + 1, "an alias refers to the node that contains it")
    open_.add(key)
    children: list[Node] = []
    if isinstance(node, SequenceNode):
        children = list(node.value)
    elif isinstance(node, MappingNode):
        seen: dict[Any, int] = {}
        for k, v in node.value:
            children += [k, v]
            if isinstance(k, ScalarNode):
                if (k.tag, k.value) in seen:
                    raise _Refused(k.start_mark.line + 1, f"key {k.value!r} appears twice "
                                                           f"(first on line {seen[(k.tag, k.value)]})")
                seen[(k.tag, k.value)] = k.start_mark.line + 1
    size, depth = 1, 1
    for child in children:
        s, d = _measure(child, memo, open_)
        size, depth = size + s, max(depth, d + 1)
        if size > MAX_YAML_NODES:
            raise _Refused(node.start_mark.line + 1, f"expands to more than {MAX_YAML_NODES} values "
                                                      "(aliases counted each time they are used)")
        if depth > MAX_YAML_DEPTH:
            raise _Refused(node.start_mark.line + 1, f"nested deeper than {MAX_YAML_DEPTH} levels "
                                                      "(aliases followed)")
    open_.discard(key)
    memo[key] = (size, depth)
    return size, depth


def parse_yaml(text: str, source: str) -> YamlDoc:
    """Parse one YAML document within the size and depth bounds; ConfigError otherwise."""
    if len(text) > MAX_YAML_BYTES:
        raise ConfigError(f"{source}: {len(text)} characters; YAML settings are limited to {MAX_YAML_BYTES}")
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return YamlDoc(None, source)
        _measure(node, {}, set())
        data = loader.construct_document(node)
    except _Refused as exc:
        raise ConfigError(f"{source}:{exc.line}: refused: {exc.why}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        why = " ".join(str(exc.problem or exc.context or "syntax error").split())
        raise ConfigError(f"{source}{line}: not valid YAML ({why})") from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        # a timestamp like 2024-13-45 or a malformed !!binary fails in construction
        raise ConfigError(f"{source}: not valid YAML ({' '.join(str(exc).split())[:200]})") from None
    finally:
        loader.dispose()
    lines = {}
    if isinstance(node, MappingNode):
        for k, _ in node.value:
            try:
                lines[loader.construct_object(k)] = k.start_mark.line + 1
            except (yaml.YAMLError, TypeError, ValueError):   # a key that cannot be a dict key
                continue
    return YamlDoc(data, source, lines)


def read_yaml(path: str | os.PathLike[str], *, what: str = "YAML file") -> YamlDoc:
    """Read and parse a YAML file the user named: strict UTF-8, bounded (see module docs)."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{what} not found: {p}")
    try:
        with open(p, "rb") as fh:
            raw = fh.read(MAX_YAML_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {p}: {exc.strerror or exc}") from None
    if len(raw) > MAX_YAML_BYTES:
        raise ConfigError(f"{p}: larger than {MAX_YAML_BYTES} bytes; not a {what}")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in raw:
        raise ConfigError(f"{p}: UTF-16 or binary data, not UTF-8 text; save the {what} as UTF-8")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{p}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x}); "
                          f"save the {what} as UTF-8") from None
    return parse_yaml(text, str(p))
