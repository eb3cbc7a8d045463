"""Runs the fuzz inputs of :mod:`tests.fuzz.inputs` against a real server.

:class:`Served` starts ``a2a-grpc serve --agent echo`` in a subprocess on
ephemeral ports with a SQLite store; :func:`fuzz` sends ``n`` inputs per
binding over real sockets and checks every answer: no HTTP 5xx, no JSON-RPC
-32603, no gRPC UNKNOWN or INTERNAL, no traceback text, a JSON (or SSE) body
on every HTTP answer, no request left hanging. :func:`check_store` then reads
every stored task on every binding (GetTask, and ListTasks of each tenant
with artifacts), and the server log is searched for tracebacks.

As a script (the long run)::

    .venv/bin/python -m tests.fuzz.run --inputs 100000 --seed 1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import grpc
from google.protobuf.message import DecodeError

from a2a_grpc.types import pb
from tests.fuzz.inputs import GrpcInput, HttpInput, Inputs

__all__ = ["Report", "Served", "check_store", "fuzz"]

_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|File \"[^\"]+\.py\", line \d+")
_SERVICE = "/lf.a2a.v1.A2AService/"
_STREAMING = {m.name for m in pb.DESCRIPTOR.services_by_name["A2AService"].methods if m.server_streaming}
_TIMEOUT = 30.0
_BAD_GRPC = (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL)


@dataclass
class Report:
    """What one run saw: inputs sent and answers by kind, per binding, and
    every problem (binding, input, what was wrong)."""

    sent: Counter[str] = field(default_factory=Counter)
    answers: Counter[str] = field(default_factory=Counter)
    problems: list[tuple[str, str, str]] = field(default_factory=list)

    def problem(self, binding: str, what: Any, why: str) -> None:
        if len(self.problems) < 200:
            self.problems.append((binding, repr(what)[:300], why[:500]))


class Served:
    """``a2a-grpc serve --agent echo`` with a SQLite store in ``directory``."""

    def __init__(self, directory: Path) -> None:
        self.db = directory / "fuzz.db"
        self.log = directory / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.grpc_port = 0
        self.http_port = 0

    def __enter__(self) -> Served:
        env = {**os.environ, "A2A_GRPC_LOG_LEVEL": "info"}
        cmd = [
            sys.executable,
            "-m",
            "a2a_grpc.cli",
            "serve",
            "--agent",
            "echo",
            "--grpc-port",
            "0",
            "--http-port",
            "0",
            "--store",
            f"sqlite:///{self.db}",
            "--grace",
            "1",
        ]
        self.proc = subprocess.Popen(cmd, stdout=self.log.open("wb"), stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            text = self.log.read_text(errors="replace")
            grpc_m = re.search(r"GRPC\s+\S+:(\d+)", text)
            http_m = re.search(r"JSONRPC\s+http://\S+:(\d+)/", text)
            if grpc_m and http_m:
                self.grpc_port, self.http_port = int(grpc_m[1]), int(http_m[1])
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.__exit__()
        raise RuntimeError(f"the server did not start:\n{self.log.read_text(errors='replace')[-3000:]}")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log_tracebacks(self) -> list[str]:
        """Log lines that are part of a traceback."""
        return [line for line in self.log.read_text(errors="replace").splitlines() if _TRACEBACK.search(line)]


def _learn_task(inputs: Inputs, doc: Any) -> None:
    if isinstance(doc, dict):
        doc = doc.get("result", doc)
        task = doc.get("task") if isinstance(doc, dict) else None
        if isinstance(task, dict) and isinstance(task.get("id"), str) and len(inputs.task_ids) < 64:
            inputs.task_ids.append(task["id"])


def _check_json_doc(report: Report, binding: str, inp: Any, text: str) -> Any:
    if _TRACEBACK.search(text):
        report.problem(binding, inp, f"traceback text in the answer: {text[:300]}")
    try:
        doc = json.loads(text)
    except ValueError:
        report.problem(binding, inp, f"answer is not JSON: {text[:200]!r}")
        return None
    err = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(err, dict):
        if err.get("code") == -32603 or err.get("status") in ("INTERNAL", "UNKNOWN"):
            report.problem(binding, inp, f"internal error: {text[:300]}")
        report.answers[f"{binding} error {err.get('code')}"] += 1
    return doc


async def _http_one(
    session: aiohttp.ClientSession, base: str, binding: str, inp: HttpInput, inputs: Inputs, report: Report
) -> None:
    async with session.request(inp.method, base + inp.path, data=inp.body, headers=inp.headers) as resp:
        raw = await resp.read()
        status = resp.status
        ctype = resp.content_type
    report.answers[f"{binding} HTTP {status}"] += 1
    if status >= 500:
        report.problem(binding, inp, f"HTTP {status}: {raw[:300]!r}")
    text = raw.decode("utf-8", "replace")
    if ctype == "text/event-stream":
        for line in text.split("\n"):
            if line.startswith("data:"):
                doc = _check_json_doc(report, binding, inp, line[5:])
                _learn_task(inputs, doc)
        return
    if ctype not in ("application/json", "application/a2a+json"):
        report.problem(binding, inp, f"HTTP {status} {ctype}: {text[:200]!r}")
        return
    _learn_task(inputs, _check_json_doc(report, binding, inp, text))


async def _grpc_one(channel: grpc.aio.Channel, inp: GrpcInput, inputs: Inputs, report: Report) -> None:
    path = _SERVICE + inp.rpc
    try:
        if inp.rpc in _STREAMING:
            async for _ in channel.unary_stream(path)(inp.payload, metadata=inp.metadata, timeout=_TIMEOUT):
                pass
        else:
            out = await channel.unary_unary(path)(inp.payload, metadata=inp.metadata, timeout=_TIMEOUT)
            if inp.rpc == "SendMessage":
                try:
                    task_id = pb.SendMessageResponse.FromString(out).task.id
                except DecodeError as exc:  # e.g. nested deeper than protobuf parsers take
                    report.problem("grpc", inp, f"the answer cannot be parsed: {exc}")
                    return
                if task_id and len(inputs.task_ids) < 64:
                    inputs.task_ids.append(task_id)
        report.answers["grpc OK"] += 1
    except grpc.aio.AioRpcError as exc:
        report.answers[f"grpc {exc.code().name}"] += 1
        details = exc.details() or ""
        if exc.code() in _BAD_GRPC or _TRACEBACK.search(details):
            report.problem("grpc", inp, f"{exc.code().name}: {details[:300]}")


async def _drive(binding: str, n: int, worker: Any, concurrency: int, report: Report) -> None:
    queue = iter(range(n))

    async def loop() -> None:
        for _ in queue:
            report.sent[binding] += 1
            try:
                await asyncio.wait_for(worker(), _TIMEOUT + 5)
            except TimeoutError:
                report.problem(binding, "?", "no answer in time")
            except aiohttp.ClientError as exc:
                report.problem(binding, "?", f"connection: {exc!r}")

    await asyncio.gather(*(loop() for _ in range(concurrency)))


async def fuzz(
    served: Served, n: int, seed: int, *, concurrency: int = 8, report: Report | None = None
) -> Report:
    """Sends ``n`` inputs per binding (JSON-RPC, HTTP+JSON, gRPC), seeded."""
    report = report or Report()
    base = f"http://127.0.0.1:{served.http_port}"
    timeout = aiohttp.ClientTimeout(total=_TIMEOUT)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        for binding in ("jsonrpc", "rest"):
            inputs = Inputs(seed * 7 + len(binding))

            async def http_worker(b: str = binding, i: Inputs = inputs) -> None:
                inp = i.jsonrpc() if b == "jsonrpc" else i.rest()
                await _http_one(session, base, b, inp, i, report)

            await _drive(binding, n, http_worker, concurrency, report)
    inputs = Inputs(seed * 7 + 1)
    options = [("grpc.max_send_message_length", 64 << 20), ("grpc.max_receive_message_length", 64 << 20)]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{served.grpc_port}", options=options) as channel:

        async def grpc_worker() -> None:
            await _grpc_one(channel, inputs.grpc(), inputs, report)

        await _drive("grpc", n, grpc_worker, concurrency, report)
    return report


def stored_tasks(served: Served) -> list[tuple[str, str]]:
    """(tenant, task id) of every stored task, from the SQLite file itself."""
    with sqlite3.connect(served.db) as db:
        return [(tenant, tid) for tid, tenant in db.execute("SELECT id, tenant FROM a2a_tasks")]


async def _read_rest(session: aiohttp.ClientSession, base: str, tenant: str, tid: str) -> str | None:
    pre = f"/{quote(tenant, safe='')}" if tenant else ""
    async with session.get(f"{base}{pre}/tasks/{quote(tid, safe='')}", headers={"A2A-Version": "1.0"}) as r:
        return None if r.status == 200 else f"REST GetTask {r.status}: {(await r.text())[:200]}"


async def _read_jsonrpc(session: aiohttp.ClientSession, base: str, rpc: str, params: dict[str, Any]) -> Any:
    envelope = {"jsonrpc": "2.0", "id": 1, "method": rpc, "params": params}
    async with session.post(base + "/", json=envelope, headers={"A2A-Version": "1.0"}) as r:
        body = await r.json(content_type=None)
    return body


async def _list_all(session: aiohttp.ClientSession, base: str, stub: Any, tenant: str) -> dict[str, set[str]]:
    """The ids ListTasks (with artifacts) answers on each binding, page by page."""
    seen: dict[str, set[str]] = {"grpc": set(), "jsonrpc": set(), "rest": set()}
    for binding in seen:
        token = ""
        while True:
            params = {"tenant": tenant, "pageSize": 100, "includeArtifacts": True, "pageToken": token}
            if binding == "grpc":
                resp = await stub.ListTasks(
                    pb.ListTasksRequest(
                        **{"tenant": tenant, "page_size": 100, "include_artifacts": True, "page_token": token}
                    ),
                    metadata=(("a2a-version", "1.0"),),
                )
                ids, token = [t.id for t in resp.tasks], resp.next_page_token
            elif binding == "jsonrpc":
                body = (await _read_jsonrpc(session, base, "ListTasks", params))["result"]
                ids, token = [t["id"] for t in body["tasks"]], body["nextPageToken"]
            else:
                pre = f"/{quote(tenant, safe='')}" if tenant else ""
                query = f"?pageSize=100&includeArtifacts=true&pageToken={quote(token, safe='')}"
                async with session.get(f"{base}{pre}/tasks{query}", headers={"A2A-Version": "1.0"}) as r:
                    assert r.status == 200, (tenant, r.status, await r.text())
                    body = await r.json(content_type=None)
                ids, token = [t["id"] for t in body["tasks"]], body["nextPageToken"]
            seen[binding].update(ids)
            if not token:
                break
    return seen


async def check_store(served: Served, report: Report) -> int:
    """Reads every stored task on every binding; returns how many there are."""
    tasks = stored_tasks(served)
    base = f"http://127.0.0.1:{served.http_port}"
    async with (
        aiohttp.ClientSession() as session,
        grpc.aio.insecure_channel(
            f"127.0.0.1:{served.grpc_port}", options=[("grpc.max_receive_message_length", 64 << 20)]
        ) as channel,
    ):
        stub = _stub(channel)
        sem = asyncio.Semaphore(8)

        async def read(tenant: str, tid: str) -> None:
            try:
                await read_everywhere(tenant, tid)
            except Exception as exc:  # an answer that is not even an error
                report.problem("store", tid, f"stored task unreadable: {exc!r}")

        async def read_everywhere(tenant: str, tid: str) -> None:
            async with sem:
                try:
                    await stub.GetTask(
                        pb.GetTaskRequest(id=tid, tenant=tenant), metadata=(("a2a-version", "1.0"),)
                    )
                except grpc.aio.AioRpcError as exc:
                    report.problem("grpc", tid, f"stored task unreadable: {exc.code().name} {exc.details()}")
                body = await _read_jsonrpc(session, base, "GetTask", {"id": tid, "tenant": tenant})
                if "result" not in body:
                    report.problem("jsonrpc", tid, f"stored task unreadable: {body}")
                problem = await _read_rest(session, base, tenant, tid)
                if problem:
                    report.problem("rest", tid, f"stored task unreadable: {problem}")

        await asyncio.gather(*(read(tenant, tid) for tenant, tid in tasks))
        for tenant in sorted({t for t, _ in tasks}):
            want = {tid for t, tid in tasks if t == tenant}
            try:
                listed = await _list_all(session, base, stub, tenant)
            except Exception as exc:
                report.problem("store", tenant, f"ListTasks of tenant {tenant!r} failed: {exc!r}")
                continue
            for binding, got in listed.items():
                if got != want:
                    report.problem(
                        binding, tenant, f"ListTasks of tenant {tenant!r}: {len(got)} of {len(want)}"
                    )
    return len(tasks)


def _stub(channel: grpc.aio.Channel) -> Any:
    from a2a_grpc.types import pb_grpc

    return pb_grpc.A2AServiceStub(channel)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=100_000, help="inputs per binding")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Served(Path(tmp)) as served:
        start = time.monotonic()
        report = asyncio.run(fuzz(served, args.inputs, args.seed, concurrency=args.concurrency))
        elapsed = time.monotonic() - start
        stored = asyncio.run(check_store(served, report))
        tracebacks = served.log_tracebacks()
    print(
        json.dumps(
            {
                "inputs": dict(report.sent),
                "seconds": round(elapsed, 1),
                "stored_tasks": stored,
                "answers": dict(sorted(report.answers.items())),
                "problems": report.problems[:50],
                "log_traceback_lines": len(tracebacks),
            },
            indent=1,
        )
    )
    return 1 if report.problems or tracebacks else 0


if __name__ == "__main__":
    sys.exit(main())
