"""TypeCache: each type's value is built once, registered by its builder or not."""

from __future__ import annotations

from typing import Any

from a2a_grpc.protocol._typecache import TypeCache
from a2a_grpc.types import pb


def test_a_value_its_builder_did_not_register_is_built_once() -> None:
    built: list[str] = []

    def build(desc: Any) -> str:
        built.append(desc.full_name)
        return desc.full_name.upper()

    cache: TypeCache[str] = TypeCache(build)
    desc = pb.Task.DESCRIPTOR
    assert cache.get(desc) == cache.get(desc) == "LF.A2A.V1.TASK"
    assert built == ["lf.a2a.v1.Task"]


def test_values_built_inside_a_registered_build_are_kept() -> None:
    built: list[str] = []
    cache: TypeCache[list[str]] = TypeCache(lambda desc: _nested(cache, desc, built))
    cache.get(pb.Task.DESCRIPTOR)
    cache.get(pb.Task.DESCRIPTOR)
    cache.get(pb.TaskStatus.DESCRIPTOR)
    assert built == ["lf.a2a.v1.Task", "lf.a2a.v1.TaskStatus"]


def _nested(cache: TypeCache[list[str]], desc: Any, built: list[str]) -> list[str]:
    built.append(desc.full_name)
    value = cache.building(desc, [])
    if desc.full_name == "lf.a2a.v1.Task":
        cache.get(pb.TaskStatus.DESCRIPTOR)  # built inside Task's build, published with it
        value.append("status")
    return value
