"""The README's "Generate a client in your language" stays true.

``a2a-grpc proto --out`` writes a tree that protoc compiles offline; ``buf.gen.yaml`` generates with
local plugins; and each client block of the README (Python, Go, Node, Java), taken from README.md as
written, builds its client under ``examples/clients/`` from that tree and prints what the README shows
against a live ``a2a-grpc serve`` (the code-review agent, memory store, 127.0.0.1 ephemeral ports).

The blocks run in a temporary directory that links ``examples/`` and ``node_modules/`` of the
repository, so nothing is written into it. A block whose toolchain is missing is skipped, except under
CI (``CI=true``), where ``.ci/run`` installs every toolchain and a skip would hide a broken client.
"""

from __future__ import annotations

import importlib.resources
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from google.protobuf import descriptor_pb2
from grpc_tools import protoc

from a2a_grpc.cli import _proto_cmd as proto_cmd
from a2a_grpc.cli import main
from a2a_grpc.cli._proto_cmd import SCHEMA

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
BIN = Path(sys.executable).parent
README_GRPC = "127.0.0.1:50051"
JAVA_JARS = Path("/usr/share/java")
GOCODE = Path("/usr/share/gocode/src")

#: What each language's block needs besides the Python venv: executables, then files.
TOOLCHAINS: dict[str, tuple[list[str], list[Path]]] = {
    "Python": ([], []),
    "Go": (
        ["go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc"],
        [GOCODE / "google.golang.org/grpc", GOCODE / "github.com/golang/protobuf/ptypes/any.go"],
    ),
    "Node": (
        ["node", "protoc"],
        [REPO / "node_modules/.bin/protoc-gen-es", REPO / "node_modules/@grpc/grpc-js"],
    ),
    "Java": (
        ["java", "javac", "protoc", "grpc_java_plugin"],
        [
            JAVA_JARS / f"{jar}.jar"
            for jar in (
                "grpc-netty",
                "netty-codec-http2",
                "perfmark-api",
                "guava",
                "protobuf",
                "geronimo-annotation-1.3-spec",
            )
        ],
    ),
}


def section() -> str:
    start = README.index("## Generate a client in your language")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else len(README)]


def blocks(text: str) -> list[tuple[str, str]]:
    """Each ```sh block with the plain ``` block (its output) that follows it."""
    body = r"((?:(?!```).)*)"
    return re.findall(rf"```sh\n{body}```\n\n```\n{body}```", text, re.S)


def client_blocks() -> dict[str, tuple[str, str]]:
    """Language -> (commands, output) of the README's ``#### Language`` subsections."""
    found = {}
    for part in re.split(r"^#### ", section(), flags=re.M)[1:]:
        (pair,) = blocks(part)
        found[part.split()[0]] = pair
    return found


def need(language: str) -> None:
    """Skips (fails under CI) when a tool or file the language's block needs is missing."""
    programs, files = TOOLCHAINS[language]
    missing = [p for p in programs if shutil.which(p) is None] + [str(f) for f in files if not f.exists()]
    if missing:
        message = f"{language} client toolchain missing: {', '.join(missing)} (.ci/run installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def run_block(commands: str, cwd: Path, grpc: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", commands.replace(README_GRPC, grpc)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory shaped like the repository root (examples/, node_modules/) with build/proto
    written by the README's own ``a2a-grpc proto`` block."""
    root = tmp_path_factory.mktemp("clients")
    for name in ("examples", "node_modules"):
        (root / name).symlink_to(REPO / name)
    (commands, shown), *_ = blocks(section())
    assert commands.strip() == "a2a-grpc proto --out build/proto"
    result = run_block(commands, root, README_GRPC)
    assert result.returncode == 0, result.stderr
    assert result.stdout == shown
    return root


@pytest.fixture(scope="module")
def grpc_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``a2a-grpc serve`` (the code-review agent) on free 127.0.0.1 ports; yields its gRPC host:port."""
    data = tmp_path_factory.mktemp("serve")
    log = data / "serve.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "a2a_grpc.cli",
                "serve",
                "--store=memory",
                "--grpc-port=0",
                "--http-port=0",
            ],
            cwd=data,
            env={**os.environ, "A2A_GRPC_DATA_DIR": str(data)},
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"^\s+GRPC\s+(\S+)$", log.read_text(), re.M)):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield found[1]
    finally:
        proc.terminate()
        proc.wait(10)


GOOGLE_API = [
    f"google/api/{n}.proto" for n in ("annotations", "client", "field_behavior", "http", "launch_stage")
]


def protos(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.proto"))


def test_proto_tree_is_the_schema_and_its_google_api_imports(workdir: Path, tmp_path: Path) -> None:
    tree = workdir / "build/proto"
    assert protos(tree) == [*GOOGLE_API, SCHEMA]
    assert (tree / SCHEMA).read_bytes() == (REPO / "proto" / SCHEMA).read_bytes()
    google_api = importlib.resources.files("google.api")
    for name in GOOGLE_API:
        assert (tree / name).read_text() == (google_api / Path(name).name).read_text()
    result = CliRunner().invoke(main, ["proto", "--imports-only", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert protos(tmp_path) == GOOGLE_API


@pytest.mark.parametrize("imported", ["google/api/nope.proto", "acme/v1/x.proto", "x.proto"])
def test_proto_tree_names_an_import_found_nowhere(
    imported: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    schema = tmp_path / SCHEMA
    schema.parent.mkdir(parents=True)
    schema.write_text(f'syntax = "proto3";\nimport "google/api/http.proto";\nimport "{imported}";\n')
    monkeypatch.setattr(proto_cmd, "_ours", lambda: tmp_path)
    result = CliRunner().invoke(main, ["proto", "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {imported} is imported but is neither in a2a_grpc nor googleapis-common-protos\n"
    )


def test_proto_tree_compiles_offline_with_grpc_tools(workdir: Path, tmp_path: Path) -> None:
    """Only the tree and grpc_tools' own well-known types are on the include path."""
    well_known = importlib.resources.files("grpc_tools") / "_proto"
    out = tmp_path / "a2a.binpb"
    args = ["protoc", f"-I{workdir / 'build/proto'}", f"-I{well_known}", f"--descriptor_set_out={out}"]
    assert protoc.main([*args, "--include_imports", SCHEMA]) == 0
    files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    assert files[-1].name == SCHEMA
    assert [s.name for s in files[-1].service] == ["A2AService"]
    assert {f.name for f in files} >= {*GOOGLE_API[:3], "google/protobuf/struct.proto"}


@pytest.mark.slow
def test_buf_generate_with_the_local_plugins_of_buf_gen_yaml(tmp_path: Path) -> None:
    """buf.gen.yaml, run in a copy of the workspace whose .buf-deps is ``a2a-grpc proto --imports-only``."""
    programs = ["protoc", "protoc-gen-go", "protoc-gen-go-grpc", "grpc_python_plugin", "grpc_java_plugin"]
    missing = [p for p in programs if shutil.which(p) is None]
    if missing or not (REPO / "node_modules/.bin/buf").exists():
        message = (
            f"buf.gen.yaml plugins missing: {', '.join(missing) or 'node_modules'} (.ci/run installs them)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    for name in ("buf.yaml", "buf.gen.yaml"):
        shutil.copy(REPO / name, tmp_path)
    shutil.copytree(REPO / "proto", tmp_path / "proto")
    (tmp_path / "node_modules").symlink_to(REPO / "node_modules")
    result = run_block(
        "a2a-grpc proto --imports-only --out .buf-deps >/dev/null && npx buf generate", tmp_path, ""
    )
    assert result.returncode == 0, result.stderr
    gen = tmp_path / "build/gen"
    for path in [
        "go/lf/a2a/v1/a2a.pb.go",
        "go/lf/a2a/v1/a2a_grpc.pb.go",
        "es/lf/a2a/v1/a2a_pb.ts",
        "es/google/api/annotations_pb.ts",
        "python/lf/a2a/v1/a2a_pb2.py",
        "python/lf/a2a/v1/a2a_pb2.pyi",
        "python/lf/a2a/v1/a2a_pb2_grpc.py",
        "java/com/google/lf/a2a/v1/A2AServiceGrpc.java",
        "java/com/google/api/AnnotationsProto.java",
    ]:
        assert (gen / path).is_file(), path
    assert not (gen / "go/google").exists()  # Go imports google.golang.org/genproto instead


def test_readme_has_a_block_for_each_language() -> None:
    assert sorted(client_blocks()) == sorted(TOOLCHAINS)


@pytest.mark.slow
@pytest.mark.parametrize("language", list(TOOLCHAINS))
def test_client_builds_from_proto_and_prints_the_s608_finding(
    language: str, workdir: Path, grpc_address: str
) -> None:
    need(language)
    commands, shown = client_blocks()[language]
    result = run_block(commands, workdir, grpc_address)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    printed = result.stdout.splitlines()
    assert printed[-len(shown.splitlines()) :] == shown.splitlines(), result.stdout
    assert any(" S608 [high] " in line for line in printed)
