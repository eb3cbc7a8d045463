"""The one reader of ``google.api.http`` rules: routes to match and to expand.

Every RPC of a service descriptor may carry an ``HttpRule`` (primary binding
plus ``additional_bindings``, read depth-first in declaration order, nested
ones included). Each binding becomes a :class:`Route`: HTTP method, compiled
:class:`PathTemplate` and body selector (``""`` none, ``"*"`` the whole
request, or a field path). Both directions use the same compiled templates:

* :meth:`RouteTable.match` (the gateway): HTTP method + raw path → route and
  the decoded values of its path variables. Routes are tried most specific
  first (a literal segment before a variable, at the first position where
  two templates differ), then in declaration order; the first match wins; no match raises :class:`RouteNotFound` (404) or
  :class:`MethodNotAllowed` (405, with the allowed methods), spec §11.3.
* :meth:`Route.expand` (the client): request message → path, JSON body and
  query parameters (spec §11.5), trying the routes in :func:`client_order`. A single-segment variable (``{id}``,
  ``{id=*}``) is percent-encoded whole (``/`` too); a multi-segment one
  (``{name=things/*}``, ``{path=**}``) keeps its ``/`` and must fit its pattern.

Template grammar (google/api/http.proto): ``"/" Segments [":" Verb]``,
segments being literals, ``*``, ``**`` or ``{field.path[=Segments]}``; the
custom verb is its own token, apart from the last segment (as grpc-gateway).
No transport is imported: the JSON encoder is the caller's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from google.api import annotations_pb2, http_pb2
from google.protobuf import descriptor
from google.protobuf import message as _message

from a2a_grpc.errors import A2AError, ErrorCode

__all__ = [
    "Expansion",
    "MethodNotAllowed",
    "PathTemplate",
    "Route",
    "RouteMatch",
    "RouteNotFound",
    "RouteTable",
    "TemplateError",
    "client_order",
    "compile_service",
    "parse_template",
    "query_pairs",
    "routes",
]

_PATTERNS = ("get", "put", "post", "delete", "patch")

#: ProtoJSON of a message, as a dict (the caller's codec).
Encoder = Callable[[_message.Message], dict[str, Any]]


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

    def _span(self, var: _Variable) -> tuple[_Segment, ...]:
        return self.segments[var.start :] if var.end == -1 else self.segments[var.start : var.end]

    def match(self, components: Sequence[str]) -> dict[str, str] | None:
        """Matches raw (still percent-encoded) path components, verb peeled
        off; returns the decoded variable values by field path, or None.
        Raises UnicodeDecodeError for a percent-encoding that is not UTF-8."""
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

    def expand(self, values: Mapping[str, str]) -> str | None:
        """The percent-encoded path (verb included) with ``values`` (by field
        path) filled in, or None when a value is missing, empty, or does not
        fit its variable's pattern."""
        out: list[str] = []
        at = 0
        for var in (*self.variables, None):
            stop = len(self.segments) if var is None else var.start
            literals = self.segments[at:stop]
            if any(s.kind != "lit" for s in literals):
                return None  # a wildcard outside any variable has no value to give
            out.extend(s.value for s in literals)
            if var is None:
                break
            text = _fill(self._span(var), values.get(var.field_path, ""))
            if text is None:
                return None
            out.append(text)
            at = len(self.segments) if var.end == -1 else var.end
        return "/" + "/".join(out) + (":" + self.verb if self.verb else "")


def _fill(span: Sequence[_Segment], value: str) -> str | None:
    """One variable's value percent-encoded for its segments, or None."""
    if not value:
        return None
    if len(span) == 1 and span[0].kind != "**":
        if span[0].kind == "lit" and value != span[0].value:
            return None
        return quote(value, safe="")
    parts = value.split("/")
    deep = span[-1].kind == "**"  # takes the rest, however many segments
    fixed = span[:-1] if deep else span
    if len(parts) < len(fixed) or (not deep and len(parts) > len(fixed)):
        return None
    for seg, part in zip(fixed, parts, strict=False):
        if (seg.kind == "lit" and part != seg.value) or not part:
            return None
    return quote(value, safe="/")


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


def _peel_verb(source: str) -> tuple[str, str]:
    """(segments text without the leading '/', verb) of a template."""
    body = source[1:]
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
    if verb_at < 0:
        return body, ""
    if verb_at == len(body) - 1:
        raise TemplateError(f"empty verb in {source!r}")
    return body[:verb_at], body[verb_at + 1 :]


def parse_template(source: str) -> PathTemplate:
    """Compiles one ``google.api.http`` path template. Raises TemplateError."""
    if not source.startswith("/"):
        raise TemplateError(f"template must start with '/': {source!r}")
    body, verb = _peel_verb(source)
    segments: list[_Segment] = []
    variables: list[_Variable] = []
    for token in _split_top(body, "/"):
        if not token.startswith("{"):
            segments.append(_segment(token, source))
            continue
        if not token.endswith("}"):
            raise TemplateError(f"bad variable {token!r} in {source!r}")
        field_path, _, sub = token[1:-1].partition("=")
        if not field_path:
            raise TemplateError(f"unnamed variable in {source!r}")
        start = len(segments)
        segments.extend(_segment(s, source) for s in (sub or "*").split("/"))
        end = -1 if segments[-1].kind == "**" else len(segments)
        variables.append(_Variable(field_path, start, end))
    if any(s.kind == "**" for s in segments[:-1]):
        raise TemplateError(f"'**' must be the last segment in {source!r}")
    return PathTemplate(source, tuple(segments), tuple(variables), verb)


@dataclass(frozen=True, slots=True)
class Expansion:
    """One HTTP request of an RPC call: the route, the percent-encoded path,
    the JSON body (None when the route maps none) and the query parameters."""

    route: Route
    path: str
    body: Any
    query: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Route:
    """One (HTTP method, path template) binding of an RPC."""

    http_method: str
    template: PathTemplate
    method: descriptor.MethodDescriptor
    body: str  # "" (no body), "*" (whole request) or a field path

    def __str__(self) -> str:
        return f"{self.http_method} {self.template.source} -> {self.method.name}"

    @property
    def field_paths(self) -> tuple[str, ...]:
        """The request fields bound by the path, in template order."""
        return tuple(v.field_path for v in self.template.variables)

    def expand(self, request: _message.Message, encode: Encoder) -> Expansion | None:
        """The HTTP request for ``request`` on this route, or None when a path
        variable has no value (or one that does not fit its pattern).
        ``encode`` gives the ProtoJSON of ``request``: its members not bound
        by the path are the body (``body: "*"``), or the body is the named
        field and the rest goes to the query (:func:`query_pairs`, which
        raises A2AError(INVALID_PARAMS) for a nested object)."""
        values = {p: _text(request, p) for p in self.field_paths}
        path = self.template.expand(values)
        if path is None:
            return None
        data = encode(request)
        for field_path in self.field_paths:
            _pop(data, request.DESCRIPTOR, field_path)
        if self.body == "*":
            return Expansion(self, path, data, ())
        body = _pop(data, request.DESCRIPTOR, self.body, {}) if self.body else None
        return Expansion(self, path, body, query_pairs(data))


def _text(request: _message.Message, field_path: str) -> str:
    """A path variable's value as text; "" when the field is not set (a
    field without presence is not set at its zero value)."""
    *parents, leaf = field_path.split(".")
    target: Any = request
    for name in parents:
        target = getattr(target, name)
    field = target.DESCRIPTOR.fields_by_name[leaf]
    value = getattr(target, leaf)
    if not (target.HasField(leaf) if field.has_presence else value):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if field.enum_type is not None and value in field.enum_type.values_by_number:
        return str(field.enum_type.values_by_number[value].name)
    return str(value)


def _pop(data: dict[str, Any], desc: Any, field_path: str, default: Any = None) -> Any:
    """Removes the ProtoJSON member at a proto field path from ``data`` and
    returns it (``default`` when absent); parents left empty go too."""
    name, _, rest = field_path.partition(".")
    field = desc.fields_by_name[name]
    if not rest:
        return data.pop(field.json_name, default)
    child = data.get(field.json_name)
    if not isinstance(child, dict):
        return default
    value = _pop(child, field.message_type, rest, default)
    if not child:
        del data[field.json_name]
    return value


def query_pairs(values: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """Query parameters from ProtoJSON members (spec §11.5): scalars as text,
    booleans ``true``/``false``, lists as repeated keys. A nested object
    cannot be sent: A2AError(INVALID_PARAMS)."""
    out: list[tuple[str, str]] = []
    for key, value in values.items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, bool):
                out.append((key, "true" if item else "false"))
            elif isinstance(item, str | int | float):
                out.append((key, str(item)))
            else:
                raise A2AError(
                    ErrorCode.INVALID_PARAMS, f"{key}: a nested object cannot go in a query string"
                )
    return tuple(out)


def _bindings(rule: http_pb2.HttpRule) -> Iterator[tuple[str, str, str]]:
    """(HTTP method, template, body) of a rule and its additional bindings,
    depth-first in declaration order."""
    kind = rule.WhichOneof("pattern")
    if kind in _PATTERNS:
        yield kind.upper(), getattr(rule, kind), rule.body
    elif kind == "custom":
        yield rule.custom.kind.upper(), rule.custom.path, rule.body
    for extra in rule.additional_bindings:
        yield from _bindings(extra)


def routes(method: descriptor.MethodDescriptor) -> tuple[Route, ...]:
    """Every binding of ``method``'s ``google.api.http`` rule, in declaration
    order (none without a rule). Raises TemplateError for a bad template."""
    options = method.GetOptions()
    if not options.HasExtension(annotations_pb2.http):
        return ()
    rule = options.Extensions[annotations_pb2.http]
    return tuple(Route(verb, parse_template(path), method, body) for verb, path, body in _bindings(rule))


def client_order(method: descriptor.MethodDescriptor) -> tuple[Route, ...]:
    """:func:`routes` in the order a client tries them: the routes that take
    the whole request as their body (``body: "*"``) first, as a body carries
    every field where a path and a query string cannot carry a nested
    message; then the others; each group in declaration order. Where a rule
    binds one path under two verbs (SubscribeToTask: GET in the published
    annotation, POST in the spec's prose and in every official SDK client,
    both in a2a.proto), a client so sends the POST first and the GET when the
    server answers 405. Raises TemplateError for a bad template."""
    return tuple(sorted(routes(method), key=lambda route: route.body != "*"))


@dataclass(frozen=True, slots=True)
class RouteMatch:
    """A matched route and the decoded values of its path variables."""

    route: Route
    path_params: dict[str, str]


class RouteTable:
    """Routes (``routes``: in declaration order) matched first-wins per HTTP
    method: literals before variables, then declaration order."""

    def __init__(self, routes: Sequence[Route]) -> None:
        # A literal segment beats a variable at the first position where two
        # templates differ (``/tasks/{id}`` before ``/{tenant}/tasks``), then
        # declaration order: a path whose first segment is a literal is never
        # read as a tenant (tenants may not be literals, a2a_grpc.protocol._validation).
        self.routes = tuple(routes)
        self._by_specificity = tuple(sorted(self.routes, key=_specificity))
        self.verbs = frozenset(r.template.verb for r in self.routes if r.template.verb)

    @property
    def literals(self) -> frozenset[str]:
        """Every literal path segment of the routes (``tasks``, ...)."""
        return frozenset(s.value for r in self.routes for s in r.template.segments if s.kind == "lit")

    def _find(self, http_method: str | None, components: list[str]) -> RouteMatch | None:
        last = components[-1]
        idx = last.rfind(":")
        verb = ""
        if idx > 0 and last[idx + 1 :] in self.verbs:
            # A known custom verb is its own token; any other ':' stays part
            # of the segment (an id such as "a:b").
            components, verb = [*components[:-1], last[:idx]], last[idx + 1 :]
        for route in self._by_specificity:
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


_RANK = {"lit": 0, "*": 1, "**": 2}


def _specificity(route: Route) -> tuple[int, ...]:
    """Sort key of a route: its segments' kinds, literals first (stable sort:
    declaration order among equals)."""
    return tuple(_RANK[s.kind] for s in route.template.segments)


def compile_service(service: descriptor.ServiceDescriptor) -> RouteTable:
    """The route table of every method of ``service`` (methods without a
    ``google.api.http`` rule get no route). Raises TemplateError."""
    return RouteTable([route for method in service.methods for route in routes(method)])
