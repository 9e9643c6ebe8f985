"""A property-based fuzzer over the OpenAPI schema (issue 15, item 9).

Every operation the schema lists gets requests built by hypothesis: bodies generated
from the operation's JSON schema (:func:`from_schema`, the subset FastAPI emits), then mutated with hostile
values (lone surrogates, NaN, 4,300-digit numbers, BIDI and zero-width characters, wrong
types, deep nesting), hostile path, query and header values, and valid, foreign and
garbage credentials. The server is a real uvicorn on a real Redis. Any 5xx fails the
test; every 4xx must carry the one error shape. Bounded: ``FUZZ_EXAMPLES`` requests per
operation (``CALLASSIST_FUZZ_EXAMPLES`` raises it for a longer run).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.asyncio import Redis

from app.main import create_app
from presets.owners import OwnerStore

from .conftest import make_settings
from .helpers import RedisProcess, ServerThread, serve

FUZZ_EXAMPLES = int(os.environ.get("CALLASSIST_FUZZ_EXAMPLES", "120"))
OPS_TOKEN = "fuzz-ops-token-0123456789abcdef"

HOSTILE_STRINGS = [
    "\ud800",
    "a\udfffb",
    "\udc00\ud800",
    "nan",
    "NaN",
    "inf",
    "-Infinity",
    "1e309",
    "9" * 4301,
    "-" + "9" * 5000,
    "\u202eevil\u202c",
    "\u2066x\u2069",
    "\u200b",
    "\u200b\u200b\ufeff",
    "\x00",
    "a\x00b",
    "\r\n\r\nX-Injected: 1",
    "../../../../etc/passwd",
    "%00%ff",
    "' OR 1=1 --",
    "<script>alert(1)</script>",
    "{{7*7}}",
    "😀" * 60,
    "𝕏" * 300,
    "²³",
    "٣",
    "sip:alex@127.0.0.1",
    "sip:",
    "+",
    'W/"7"',
    " ",
    "",
    "A" * 20_000,
]
HOSTILE_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    2**63,
    -(2**80),
    1e308,
    [],
    {},
    [[[[[[[[[[[]]]]]]]]]]],
    {"a": {"b": {"c": {"d": {}}}}},
    ["\ud800"],
]


def _hostile() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(HOSTILE_STRINGS),
        st.sampled_from(HOSTILE_VALUES),
        st.text(max_size=40),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
    )


@st.composite
def _mutated(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with one part replaced (or added) by something hostile."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: draw(_mutated(value[key]))}
    if isinstance(value, dict) and draw(st.integers(0, 4)) == 0:
        return {**value, draw(st.sampled_from(["extra", "\ud800", "__proto__", ""])): draw(_hostile())}
    if isinstance(value, list) and value and draw(st.booleans()):
        i = draw(st.integers(0, len(value) - 1))
        return [*value[:i], draw(_mutated(value[i])), *value[i + 1 :]]
    return draw(_hostile())


def _resolve(schema: Any, components: dict[str, Any], depth: int = 0) -> Any:
    """Inline ``$ref``s (hypothesis-jsonschema wants one self-contained schema)."""
    if depth > 20:
        return {}
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            return _resolve(components[ref.rsplit("/", 1)[1]], components, depth + 1)
        return {k: _resolve(v, components, depth + 1) for k, v in schema.items() if k not in ("examples", "example")}
    if isinstance(schema, list):
        return [_resolve(v, components, depth + 1) for v in schema]
    return schema


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid for the JSON Schema subset FastAPI emits (refs already inlined)."""
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return st.one_of([from_schema(s) for s in schema[key]])
    if "allOf" in schema:
        return from_schema(schema["allOf"][0])
    kind = schema.get("type")
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(schema.get("minimum"), schema.get("maximum"))
    if kind == "number":
        return st.floats(schema.get("minimum"), schema.get("maximum"), allow_nan=False, allow_infinity=False)
    if kind == "string":
        return st.text(min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 60), 60))
    if kind == "array":
        items = from_schema(schema.get("items", {}))
        return st.lists(items, min_size=schema.get("minItems", 0), max_size=min(schema.get("maxItems", 4), 4))
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        required = [k for k in schema.get("required", []) if k in props]
        optional = [k for k in props if k not in required]
        return st.fixed_dictionaries(
            {k: from_schema(props[k]) for k in required}, optional={k: from_schema(props[k]) for k in optional}
        )
    return st.one_of(st.none(), st.text(max_size=20), st.integers())


def _json_strategy(schema: dict[str, Any] | None) -> st.SearchStrategy[Any]:
    if not schema:
        return st.just({})
    valid = from_schema(schema)
    return st.one_of(valid, valid.flatmap(_mutated), _hostile())


class FuzzEnv:
    def __init__(self, server: ServerThread, auth: dict[str, str], ids: dict[str, list[str]]) -> None:
        self.server = server
        self.auth = auth  # "owner", "other", "call_token"
        self.ids = ids  # known ids per path parameter


@pytest.fixture(scope="module")
def fuzz_env(redis_server: RedisProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FuzzEnv]:
    async def owners() -> tuple[str, str]:
        r = Redis.from_url(redis_server.url, decode_responses=True)
        try:
            store = OwnerStore(r)
            _, key = await store.create_owner("Fuzz Owner", "en")
            _, other = await store.create_owner("Other Owner", "zh")
            return key, other
        finally:
            await r.aclose()

    key, other = asyncio.run(owners())
    settings_ = make_settings(redis_server.url, tmp_path_factory.mktemp("fuzz"), ops_token=OPS_TOKEN)
    with serve(create_app(settings_)) as server, httpx.Client(base_url=server.base_url, timeout=10) as c:
        h = {"Authorization": f"Bearer {key}"}
        assert c.put("/v1/lines/+14155550100", headers=h).status_code in (200, 201)
        assert c.put("/v1/presets/regular/takeout", headers=h, json={"response": "Leave it at the door."}).is_success
        preset = c.post("/v1/presets/emergent", headers=h, json={"trigger": "where is he", "response": "Out."})
        resp = c.post("/v1/calls/text", headers=h, json={"lang": "en"})
        for _ in range(3):  # a 503 "retry shortly" while the first call loads the models
            if resp.status_code != 503:
                break
            time.sleep(1.0)
            resp = c.post("/v1/calls/text", headers=h, json={"lang": "en"})
        call = resp.json()
        ids = {
            "call_id": [call["call_id"], "call_00000000000000000000"],
            "preset_id": [preset.json()["id"], "em_0000"],
            "line": ["+14155550100", "sip:alex", "alex-door"],
            "scene": ["takeout", "taxi", "work"],
        }
        auth = {"owner": f"Bearer {key}", "other": f"Bearer {other}", "call_token": f"Bearer {call['call_token']}"}
        yield FuzzEnv(server, auth, ids)


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, op)
        for path, ops in sorted(spec["paths"].items())
        for method, op in sorted(ops.items())
        if method in ("get", "put", "post", "patch", "delete") and not _streams(op)
    ]


def _streams(op: dict[str, Any]) -> bool:
    """A never-ending response (``GET /v1/events``, SSE): a request would not return."""
    return "text/event-stream" in op.get("responses", {}).get("200", {}).get("content", {})


def _q(value: str) -> str:
    return quote(value.encode("utf-8", "surrogatepass"), safe="")


def _wire(value: str) -> str:
    raw = value.encode("utf-8", "surrogatepass").decode("latin-1")
    return "".join(ch for ch in raw if ch >= " " and ch != "\x7f").strip() or "x"


def _wire_headers(headers: dict[str, str]) -> dict[str, bytes]:
    return {k: v.encode("latin-1") for k, v in headers.items()}


@st.composite
def _request(
    draw: st.DrawFn, env: FuzzEnv, path: str, op: dict[str, Any], components: dict[str, Any]
) -> dict[str, Any]:
    url = path
    params: dict[str, str] = {}
    headers: dict[str, str] = {}
    for p in op.get("parameters", []):
        name, where = p["name"], p["in"]
        schema = _resolve(p.get("schema", {}), components)
        if where == "path":
            raw = draw(st.one_of(st.sampled_from(env.ids.get(name, ["x"])), st.sampled_from(HOSTILE_STRINGS[:20])))
            url = url.replace("{" + name + "}", _q(str(raw)))
        elif where == "query" and draw(st.booleans()):
            value = draw(st.one_of(_json_strategy(schema), st.sampled_from(HOSTILE_STRINGS)))
            params[name] = value if isinstance(value, str) else json.dumps(value)
        elif where == "header" and name != "authorization" and draw(st.booleans()):
            headers[name] = draw(st.sampled_from([*HOSTILE_STRINGS, '"1"', "*", 'W/"1"', "1" * 19]))
    who = draw(st.sampled_from(["owner", "owner", "owner", "other", "call_token", "none", "garbage"]))
    if who in env.auth:
        headers["authorization"] = env.auth[who]
    elif who == "garbage":
        headers["authorization"] = draw(st.sampled_from(["Bearer ", "Basic x", "Bearer " + "A" * 5000, "Bearer \x7f"]))
    if path.startswith("/ops/"):
        headers["authorization"] = f"Bearer {OPS_TOKEN}" if who != "garbage" else headers.get("authorization", "")
    content: bytes | None = None
    body_schema = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body_schema is not None:
        kind = draw(st.integers(0, 9))
        if kind == 0:
            content = draw(st.sampled_from([b"", b"{", b"null", b"[]", b'"x"', b"\xff\xfe", b'{"a":' * 600]))
        else:
            body = draw(_json_strategy(_resolve(body_schema, components)))
            content = json.dumps(body, allow_nan=True).encode()
        headers["content-type"] = draw(
            st.sampled_from(["application/json"] * 5 + ["text/plain", "application/x-www-form-urlencoded"])
        )
    # Header values are latin-1 on the wire, without control characters or outer spaces
    # (the client refuses to send those at all).
    headers = {k: _wire(v) for k, v in headers.items()}
    if params:  # encoded by hand: the client refuses lone surrogates
        url += "?" + "&".join(f"{k}={_q(v)}" for k, v in params.items())
    return {"url": url, "headers": headers, "content": content}


def _fuzz_operation(
    client: httpx.Client, method: str, requests: st.SearchStrategy[dict[str, Any]], statuses: Counter[int]
) -> None:
    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(req=requests)
    def one(req: dict[str, Any]) -> None:
        r = client.request(method, req["url"], headers=_wire_headers(req["headers"]), content=req["content"])
        statuses[r.status_code] += 1
        # 503 + Retry-After is a deliberate "not here" (voice off in this server), not an error.
        unavailable = r.status_code == 503 and "retry-after" in r.headers
        assert r.status_code < 500 or unavailable, f"{method} {req} -> {r.status_code} {r.text[:300]}"
        if r.status_code >= 400 and r.headers.get("content-type", "").startswith("application/json"):
            assert "error" in r.json() and "code" in r.json()["error"], r.text[:300]

    one()


def test_no_server_error_from_any_input(fuzz_env: FuzzEnv) -> None:
    started = time.monotonic()
    statuses: Counter[int] = Counter()
    with httpx.Client(base_url=fuzz_env.server.base_url, timeout=20) as client:
        spec = client.get("/openapi.json").json()
        components = spec.get("components", {}).get("schemas", {})
        operations = _operations(spec)
        assert len(operations) >= 20
        for method, path, op in operations:
            _fuzz_operation(client, method, _request(fuzz_env, path, op, components), statuses)
        assert client.get("/healthz").status_code == 200  # still standing
    total = sum(statuses.values())
    print(
        f"\nAPI fuzz: {total} requests over {len(operations)} operations in {time.monotonic() - started:.1f} s; "
        f"status counts {dict(sorted(statuses.items()))} (503 = voice off, with Retry-After)"
    )
    assert total >= len(operations) * min(FUZZ_EXAMPLES, 10)


@pytest.mark.parametrize(
    ("method", "url", "kwargs"),
    [
        ("PUT", "/v1/profile", {"content": b'{"display_name": "\\ud800"}'}),
        ("POST", "/v1/presets/emergent", {"content": b'{"trigger": "a\\udfffb", "response": "ok"}'}),
        ("GET", "/v1/calls?before=nan", {}),
        ("GET", "/v1/calls?before=inf", {}),
        ("PUT", "/v1/presets/regular/taxi", {"json": {"response": "ok"}, "headers": {"If-Match": "9" * 4301}}),
        ("POST", "/v1/presets/emergent", {"json": {"trigger": "\u200b\u200b", "response": "ok"}}),
        ("POST", "/v1/presets/emergent", {"json": {"trigger": "\u202eevil", "response": "ok"}}),
    ],
)
def test_reported_inputs_get_a_4xx_naming_the_field(
    fuzz_env: FuzzEnv, method: str, url: str, kwargs: dict[str, Any]
) -> None:
    headers = {"Authorization": fuzz_env.auth["owner"], "Content-Type": "application/json", **kwargs.pop("headers", {})}
    with httpx.Client(base_url=fuzz_env.server.base_url, timeout=10) as client:
        r = client.request(method, url, headers=headers, **kwargs)
    assert 400 <= r.status_code < 500, r.text
    assert r.json()["error"]["field"] in ("display_name", "trigger", "before", "If-Match"), r.text
