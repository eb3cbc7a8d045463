"""The HTTP+JSON route table, compiled from the proto's ``google.api.http`` rules.

Nothing here names an RPC: :func:`compile_service` reads the ``HttpRule`` of
every method of the service descriptor (primary rule, then its
``additional_bindings``, in declaration order) and compiles each path template
(``/tasks/{id=*}:cancel``) into segment matchers plus a custom verb kept apart
from the segments (as grpc-gateway does). :meth:`RouteTable.match` tries the
routes of the request's HTTP method in declaration order — the first match
wins — and raises :class:`RouteNotFound` (404) or :class:`MethodNotAllowed`
(405, with the allowed methods) when none matches (spec §11.3; design.md).

Template grammar (google/api/http.proto): ``"/" Segments [":" Verb]``,
segments being literals, ``*``, ``**`` or ``{field.path[=Segments]}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from google.api import annotations_pb2, http_pb2
from google.protobuf import descriptor

__all__ = [
    "MethodNotAllowed",
    "PathTemplate",
    "Route",
    "RouteMatch",
    "RouteNotFound",
    "RouteTable",
    "TemplateError",
    "compile_service",
    "parse_template",
]

_PATTERNS = ("get", "put", "post", "delete", "patch")


class TemplateError(ValueError):
    """A path template in the proto is not valid."""


class RouteNotFound(LookupError):
    """No route has this path, whatever the HTTP method (404)."""


class MethodNotAllowed(LookupError):
    """Routes exist for this path, but not for this HTTP method (405)."""

    def __init__(self, allowed: Sequence[str]) -> None:
        super().__init__(", ".join(allowed))
        self.allowed = tuple(allowed)


@dataclass(frozen=True, slots=True)
class _Segment:
    kind: str  # "lit", "*" or "**"
    value: str = ""


@dataclass(frozen=True, slots=True)
class _Variable:
    field_path: str
    start: int
    end: int  # exclusive segment index; -1 when the variable ends in "**"


@dataclass(frozen=True, slots=True)
class PathTemplate:
    """A compiled path template: segments, variables and the custom verb."""

    source: str
    segments: tuple[_Segment, ...]
    variables: tuple[_Variable, ...]
    verb: str

    def match(self, components: Sequence[str]) -> dict[str, str] | None:
        """Matches raw (still percent-encoded) path components; returns the
        decoded variable values by field path, or None."""
        n = len(self.segments)
        deep = n > 0 and self.segments[-1].kind == "**"
        if (len(components) < n - 1) if deep else (len(components) != n):
            return None
        for seg, comp in zip(self.segments, components, strict=False):
            if seg.kind == "**":
                break
            if seg.kind == "lit":
                if comp != seg.value:
                    return None
            elif comp == "":
                return None
        out: dict[str, str] = {}
        for var in self.variables:
            parts = components[var.start :] if var.end == -1 else components[var.start : var.end]
            out[var.field_path] = "/".join(unquote(p, errors="strict") for p in parts)
        return out


def _split_top(text: str, sep: str) -> list[str]:
    """Splits on ``sep`` outside braces."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def _segment(text: str, source: str) -> _Segment:
    if text in ("*", "**"):
        return _Segment(text)
    if not text or any(c in text for c in "{}=*"):
        raise TemplateError(f"bad segment {text!r} in {source!r}")
    return _Segment("lit", text)


def parse_template(source: str) -> PathTemplate:
    """Compiles one ``google.api.http`` path template. Raises TemplateError."""
    if not source.startswith("/"):
        raise TemplateError(f"template must start with '/': {source!r}")
    body, verb = source[1:], ""
    depth, verb_at = 0, -1
    for i, ch in enumerate(body):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0 and ch == "/":
            verb_at = -1
        elif depth == 0 and ch == ":":
            verb_at = i
    if depth != 0:
        raise TemplateError(f"unbalanced braces in {source!r}")
    if verb_at >= 0:
        body, verb = body[:verb_at], body[verb_at + 1 :]
        if not verb:
            raise TemplateError(f"empty verb in {source!r}")
    segments: list[_Segment] = []
    variables: list[_Variable] = []
    for token in _split_top(body, "/"):
        if token.startswith("{"):
            if not token.endswith("}"):
                raise TemplateError(f"bad variable {token!r} in {source!r}")
            field_path, _, sub = token[1:-1].partition("=")
            if not field_path:
                raise TemplateError(f"unnamed variable in {source!r}")
            start = len(segments)
            segments.extend(_segment(s, source) for s in (sub or "*").split("/"))
            end = -1 if segments[-1].kind == "**" else len(segments)
            variables.append(_Variable(field_path, start, end))
        else:
            segments.append(_segment(token, source))
    if any(s.kind == "**" for s in segments[:-1]):
        raise TemplateError(f"'**' must be the last segment in {source!r}")
    return PathTemplate(source, tuple(segments), tuple(variables), verb)


@dataclass(frozen=True, slots=True)
class Route:
    """One (HTTP method, path template) binding of an RPC."""

    http_method: str
    template: PathTemplate
    method: descriptor.MethodDescriptor
    body: str  # "" (no body), "*" (whole request) or a field path

    def __str__(self) -> str:
        return f"{self.http_method} {self.template.source} -> {self.method.name}"


@dataclass(frozen=True, slots=True)
class RouteMatch:
    route: Route
    path_params: dict[str, str]


def _bindings(rule: http_pb2.HttpRule) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    kind = rule.WhichOneof("pattern")
    if kind in _PATTERNS:
        out.append((kind.upper(), getattr(rule, kind), rule.body))
    elif kind == "custom":
        out.append((rule.custom.kind.upper(), rule.custom.path, rule.body))
    for extra in rule.additional_bindings:
        out.extend(_bindings(extra))
    return out


class RouteTable:
    """Routes in declaration order, matched first-wins per HTTP method."""

    def __init__(self, routes: Sequence[Route]) -> None:
        self.routes = tuple(routes)
        self.verbs = frozenset(r.template.verb for r in self.routes if r.template.verb)

    def _find(self, http_method: str | None, components: list[str]) -> RouteMatch | None:
        last = components[-1]
        idx = last.rfind(":")
        verb = ""
        if idx > 0 and last[idx + 1 :] in self.verbs:
            # A known custom verb is its own token; any other ':' stays part
            # of the segment (an id such as "a:b").
            components, verb = [*components[:-1], last[:idx]], last[idx + 1 :]
        for route in self.routes:
            if http_method is not None and route.http_method != http_method:
                continue
            if route.template.verb != verb:
                continue
            params = route.template.match(components)
            if params is not None:
                return RouteMatch(route, params)
        return None

    def match(self, http_method: str, raw_path: str) -> RouteMatch:
        """The route for ``http_method`` and the raw (percent-encoded) path.
        Raises RouteNotFound, MethodNotAllowed, or UnicodeDecodeError for a
        percent-encoding that is not UTF-8."""
        if not raw_path.startswith("/"):
            raise RouteNotFound(raw_path)
        components = raw_path[1:].split("/")
        found = self._find(http_method.upper(), components)
        if found is not None:
            return found
        methods = {r.http_method for r in self.routes}
        allowed = sorted(m for m in methods if self._find(m, components) is not None)
        if allowed:
            raise MethodNotAllowed(allowed)
        raise RouteNotFound(raw_path)


def compile_service(service: descriptor.ServiceDescriptor) -> RouteTable:
    """Compiles the route table of ``service`` from its ``google.api.http``
    method options (methods without a rule get no route)."""
    routes: list[Route] = []
    for method in service.methods:
        options = method.GetOptions()
        if not options.HasExtension(annotations_pb2.http):
            continue
        for http_method, path, body in _bindings(options.Extensions[annotations_pb2.http]):
            routes.append(Route(http_method, parse_template(path), method, body))
    return RouteTable(routes)
