"""The SSRF guard and the create-time config checks (issue 5 §4, spec §13.2)."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.push import AddressPolicy, PushDispatcher
from a2a_grpc.push._ssrf import blocked_reason
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb

# A tiny DNS server: names -> addresses. Anything else does not resolve.
ZONE = {
    "public.example": ["93.184.216.34"],
    "public6.example": ["2606:4700::6810:84e5"],
    "evil.example": ["127.0.0.1"],
    "mixed.example": ["93.184.216.34", "10.0.0.5"],
    "metadata.example": ["169.254.169.254"],
    "mapped.example": ["::ffff:169.254.169.254"],
    "ula.example": ["fd00::1"],
    "a.corp.example": ["10.1.2.3"],
    "corp.example": ["10.1.2.4"],
}


async def fake_getaddrinfo(host: str, port: int, family: int) -> list[tuple[Any, ...]]:
    addrs = ZONE.get(host.rstrip(".").lower())
    if addrs is None:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    out: list[tuple[Any, ...]] = []
    for a in addrs:
        ip = ipaddress.ip_address(a)
        if ip.version == 4:
            out.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)))
        else:
            out.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (a, port, 0, 0)))
    return out


def dispatcher(allow: tuple[str, ...] = ()) -> PushDispatcher:
    return PushDispatcher(InMemoryTaskStore(), allow=allow, getaddrinfo=fake_getaddrinfo)


def config(url: str, **kw: Any) -> pb.TaskPushNotificationConfig:
    return pb.TaskPushNotificationConfig(task_id="t1", id="c1", url=url, **kw)


async def violations(d: PushDispatcher, cfg: pb.TaskPushNotificationConfig) -> dict[str, str]:
    with pytest.raises(A2AError) as info:
        await d.check_config(cfg)
    err = info.value
    assert err.code is ErrorCode.INVALID_PARAMS
    return {v.field: v.description for v in err.field_violations}


BLOCKED_URLS = [
    # loopback, and every other way of writing it
    "http://127.0.0.1/hook",
    "http://127.10.20.30:8080/",
    "http://[::1]/",
    "http://localhost/",
    "http://LOCALHOST./",
    "http://2130706433/",  # decimal
    "http://0177.0.0.1/",  # octal
    "http://0x7f.1/",  # hex, short form
    "http://0x7f000001/",
    "http://017700000001/",
    "http://127.1/",
    "http://0/",
    # private, CGNAT, link-local and the cloud metadata address
    "http://10.0.0.1/",
    "http://172.16.5.4/",
    "http://172.31.255.255/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]/",
    "http://[fe80::1%25eth0]/",
    "http://[fc00::1]/",
    "http://[fd12:3456::1]/",
    "http://[fec0::1]/",
    # unspecified, multicast, broadcast, reserved, benchmark, documentation
    "http://0.0.0.0/",
    "http://[::]/",
    "http://224.0.0.1/",
    "http://239.255.255.250/",
    "http://[ff02::1]/",
    "http://255.255.255.255/",
    "http://240.0.0.1/",
    "http://198.18.0.1/",
    "http://192.0.2.1/",
    "http://198.51.100.7/",
    "http://203.0.113.9/",
    "http://192.0.0.8/",
    "http://[2001:db8::1]/",
    # IPv6 forms that carry a blocked IPv4 address
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:a9fe:a9fe]/",  # ::ffff:169.254.169.254
    "http://[::ffff:10.0.0.1]/",
    "http://[::127.0.0.1]/",  # IPv4-compatible (deprecated)
    "http://[::8.8.8.8]/",
    "http://[2002:7f00:1::1]/",  # 6to4 of 127.0.0.1
    "http://[2002:a9fe:a9fe::]/",  # 6to4 of 169.254.169.254
    "http://[64:ff9b::7f00:1]/",  # NAT64 of 127.0.0.1
    "http://[64:ff9b:1::a00:1]/",  # local-use NAT64 of 10.0.0.1
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",  # Teredo
    # names resolving to blocked addresses (every address is checked)
    "http://evil.example/",
    "http://mixed.example/",
    "http://metadata.example/",
    "http://mapped.example/",
    "http://ula.example/",
    # not http(s), userinfo tricks, junk
    "ftp://public.example/",
    "file:///etc/passwd",
    "gopher://public.example:70/_x",
    "javascript:alert(1)",
    "http://user:pw@public.example/",
    "http://public.example@127.0.0.1/",
    "http://public.example%40127.0.0.1/",
    "http://127.0.0.1\\@public.example/",
    "http://public.example:0/",
    "http://pub lic.example/",
    "http://public.example/\r\nX-Evil: 1",
    "http:///nohost",
    "http://nxdomain.example/",
    "not a url",
    "",
]


@pytest.mark.parametrize("url", BLOCKED_URLS)
async def test_blocked_url_is_invalid_params_on_url(url: str) -> None:
    got = await violations(dispatcher(), config(url))
    assert set(got) == {"url"}
    assert got["url"]  # a reason the client can read


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://169.254.169.254/", "link-local"),
        ("http://10.0.0.1/", "private"),
        ("http://100.64.0.1/", "carrier-grade NAT"),
        ("http://0x7f.1/", "non-canonical IPv4 spelling (it means 127.0.0.1)"),
        ("http://2130706433/", "it means 127.0.0.1"),
        ("ftp://public.example/", "must be http or https"),
        ("http://user:pw@public.example/", "userinfo"),
        ("http://mixed.example/", "resolves to a blocked address: 10.0.0.5 is private"),
        ("http://[::ffff:127.0.0.1]/", "embeds 127.0.0.1 is loopback"),
        ("http://nxdomain.example/", "cannot be resolved"),
    ],
)
async def test_reasons_are_clear(url: str, words: str) -> None:
    with pytest.raises(A2AError) as info:
        await dispatcher().check_config(config(url))
    assert words in info.value.message
    assert info.value.message.startswith("url: ")


def test_userinfo_reason_does_not_echo_credentials() -> None:
    with pytest.raises(ValueError) as info:
        AddressPolicy().parse_url("http://admin:hunter2@public.example/")
    assert "hunter2" not in str(info.value)


@pytest.mark.parametrize(
    "url",
    [
        "http://public.example/hook",
        "https://public.example:8443/a2a/hook?x=1",
        "https://PUBLIC.example./hook",
        "http://public6.example/",
        "http://93.184.216.34/",
        "http://8.8.8.8:8080/",
        "http://[2606:4700::1]/",
        "http://[::ffff:8.8.8.8]/",
        "http://[2002:0808:0808::1]/",  # 6to4 of a public address
        "http://100.128.0.1/",  # just outside CGNAT
        "http://172.32.0.1/",  # just outside 172.16/12
    ],
)
async def test_public_targets_pass(url: str) -> None:
    await dispatcher().check_config(config(url))


@pytest.mark.parametrize(
    ("allow", "url"),
    [
        (("127.0.0.1",), "http://127.0.0.1:8080/hook"),
        (("127.0.0.0/8",), "http://127.9.9.9/"),
        (("127.0.0.1",), "http://[::ffff:127.0.0.1]/"),
        (("::1",), "http://[::1]:9/"),
        (("10.0.0.0/8",), "http://mixed.example/"),
        (("evil.example",), "http://evil.example/"),
        (("*.corp.example",), "http://a.corp.example/"),
        (("127.0.0.1, 10.0.0.0/8",), "http://10.2.3.4/"),
    ],
)
async def test_allow_list_admits_trusted_targets(allow: tuple[str, ...], url: str) -> None:
    from a2a_grpc.push._ssrf import split_allow

    d = PushDispatcher(InMemoryTaskStore(), allow=split_allow(allow), getaddrinfo=fake_getaddrinfo)
    await d.check_config(config(url))


@pytest.mark.parametrize(
    ("allow", "url"),
    [
        (("127.0.0.1",), "http://127.0.0.2/"),
        (("127.0.0.1",), "http://localhost./"),  # a name is not its address
        (("10.0.0.0/8",), "http://192.168.0.1/"),
        (("*.corp.example",), "http://corp.example/"),
        (("evil.example",), "http://mapped.example/"),
        (("127.0.0.1",), "http://2130706433/"),  # odd spellings stay refused
    ],
)
async def test_allow_list_is_exact(allow: tuple[str, ...], url: str) -> None:
    got = await violations(dispatcher(allow), config(url))
    assert "url" in got


@pytest.mark.parametrize("entry", ["not a host!", "10.0.0.0/33", "*.", "-bad-.example"])
def test_bad_allow_entries_are_refused(entry: str) -> None:
    with pytest.raises(ValueError):
        AddressPolicy([entry])


@pytest.mark.parametrize(
    ("auth", "token", "field"),
    [
        (
            pb.AuthenticationInfo(scheme="Bearer", credentials="abc\r\nX-Evil: 1"),
            "",
            "authentication.credentials",
        ),
        (pb.AuthenticationInfo(scheme="Bearer", credentials="abc\n"), "", "authentication.credentials"),
        (pb.AuthenticationInfo(scheme="Bearer", credentials="a\x00b"), "", "authentication.credentials"),
        (pb.AuthenticationInfo(scheme="Bearer", credentials="é"), "", "authentication.credentials"),
        (pb.AuthenticationInfo(scheme="Bearer\r\nX-Evil:", credentials="x"), "", "authentication.scheme"),
        (pb.AuthenticationInfo(scheme="Bear er", credentials="x"), "", "authentication.scheme"),
        (pb.AuthenticationInfo(scheme="", credentials="x"), "", "authentication.scheme"),
        (None, "tok\r\nX-Evil: 1", "token"),
        (None, "tok\n", "token"),
        (None, "tok\x7f", "token"),
    ],
)
async def test_header_injection_is_refused(
    auth: pb.AuthenticationInfo | None, token: str, field: str
) -> None:
    cfg = config("http://public.example/", token=token)
    if auth is not None:
        cfg.authentication.CopyFrom(auth)
    got = await violations(dispatcher(), cfg)
    assert set(got) == {field}
    assert "hunter" not in got[field]


async def test_every_problem_is_reported() -> None:
    cfg = config("http://127.0.0.1/", token="a\nb")
    cfg.authentication.CopyFrom(pb.AuthenticationInfo(scheme="Basic", credentials="x\r\n"))
    got = await violations(dispatcher(), cfg)
    assert set(got) == {"url", "token", "authentication.credentials"}


async def test_valid_credentials_pass() -> None:
    cfg = config("https://public.example/hook", token="opaque-token_123.~+/=")
    cfg.authentication.CopyFrom(pb.AuthenticationInfo(scheme="Basic", credentials="dXNlcjpwYXNz"))
    await dispatcher().check_config(cfg)


@pytest.mark.parametrize(
    ("ip", "blocked"),
    [
        ("8.8.8.8", False),
        ("127.0.0.1", True),
        ("::ffff:8.8.8.8", False),
        ("::ffff:192.168.0.1", True),
        ("64:ff9b::808:808", False),
        ("64:ff9b::a9fe:a9fe", True),
        ("2002:c0a8:1::", True),
        ("2a00:1450::1", False),
        ("fe80::1", True),
        ("ff02::1", True),
    ],
)
def test_blocked_reason(ip: str, blocked: bool) -> None:
    assert (blocked_reason(ipaddress.ip_address(ip)) is not None) is blocked


async def test_rebinding_name_is_checked_at_every_resolve() -> None:
    answers = iter([["93.184.216.34"], ["127.0.0.1"]])

    async def rebinding(host: str, port: int, family: int) -> list[tuple[Any, ...]]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in next(answers)]

    policy = AddressPolicy(getaddrinfo=rebinding)
    target = await policy.check_url("http://rebind.example/")
    assert target.host == "rebind.example"
    with pytest.raises(ValueError, match="loopback"):
        await policy.resolve("rebind.example", 80)


async def test_localhost_through_the_real_resolver_is_loopback() -> None:
    d = PushDispatcher(InMemoryTaskStore())
    got = await violations(d, config("http://localhost:8080/hook"))
    assert "resolves to a blocked address" in got["url"]
    assert "loopback" in got["url"]
