"""deploy/ and docker-compose.yml, tested without a Docker engine: promtool checks and
alert unit tests, a real Prometheus (Debian's) scraping a running app, the Grafana
dashboard's queries run in that Prometheus, and the compose file against the Compose
Specification's JSON schema (vendored in tests/data, see its SOURCE.md)."""

from __future__ import annotations

import asyncio
import json
import re
import runpy
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import yaml
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from app.main import create_app
from app.ops import OpsOptions
from app.ops.series import Buckets, histogram_quantile

from .conftest import create_owner, make_settings
from .helpers import RedisProcess, ServerThread, free_port, serve

ROOT = Path(__file__).resolve().parents[1]
PROM_DIR = ROOT / "deploy" / "prometheus"
GRAFANA_DIR = ROOT / "deploy" / "grafana"
OPS_TOKEN = "ops-prometheus-token-0123456789"
ALERTS = {
    "CallAssistMedianTTFTOver1s", "CallAssistLLMEndpointMedianTTFTOver1s",
    "CallAssistLLMEndpointOutOfService", "CallAssistVoiceToVoiceP90Over1500ms",
    "CallAssistErrorRate", "CallAssistTTFTFallbacksHigh", "CallAssistRedisDown", "CallAssistDown",
}  # fmt: skip


def _tool(name: str) -> str:
    path = shutil.which(name) or f"/usr/bin/{name}"
    if not Path(path).exists():
        pytest.fail(f"Debian's {name} is needed (scripts/install.sh test installs prometheus)")
    return path


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=60, check=False)


# --------------------------------------------------------------- promtool ----


def _config_for(tmp: Path, target: str) -> Path:
    """deploy/prometheus/prometheus.yml pointed at ``target`` with files under ``tmp``."""
    config = yaml.safe_load((PROM_DIR / "prometheus.yml").read_text())
    token_file = tmp / "ops_token"
    token_file.write_text(OPS_TOKEN)
    config["global"]["evaluation_interval"] = "1s"
    config["rule_files"] = [str(PROM_DIR / name) for name in config["rule_files"]]
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    app_job = jobs["callassist"]
    assert app_job["authorization"]["credentials_file"] == "/run/secrets/ops_token"
    app_job["authorization"]["credentials_file"] = str(token_file)
    app_job["static_configs"] = [{"targets": [target]}]
    app_job["scrape_interval"] = "1s"
    app_job["scrape_timeout"] = "1s"
    config["scrape_configs"] = [app_job]
    path = tmp / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_promtool_checks_config_and_rules(tmp_path: Path) -> None:
    promtool = _tool("promtool")
    syntax = _run(promtool, "check", "config", "--syntax-only", str(PROM_DIR / "prometheus.yml"))
    assert syntax.returncode == 0, syntax.stdout + syntax.stderr
    # The full check (rule files, credentials file) on the same config with local paths.
    full = _run(promtool, "check", "config", str(_config_for(tmp_path, "127.0.0.1:1")))
    assert full.returncode == 0, full.stdout + full.stderr
    rules = _run(promtool, "check", "rules", str(PROM_DIR / "alerts.yml"))
    assert rules.returncode == 0, rules.stdout + rules.stderr
    assert f"SUCCESS: {len(ALERTS)} rules found" in rules.stdout


def test_alerts_fire_on_synthetic_series() -> None:
    result = _run(_tool("promtool"), "test", "rules", "alerts.test.yml", cwd=PROM_DIR)
    assert result.returncode == 0, result.stdout + result.stderr
    tested = set(re.findall(r"alertname: (\w+)", (PROM_DIR / "alerts.test.yml").read_text()))
    assert tested == ALERTS  # every alert has a unit test


# ----------------------------------------------------- a real Prometheus ----


class PrometheusProcess:
    def __init__(self, config: Path, data: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = data.parent / "prometheus.log"
        self._log_file = self.log.open("wb")
        self.proc = subprocess.Popen(
            [
                _tool("prometheus"), f"--config.file={config}", f"--storage.tsdb.path={data}",
                f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn",
            ],
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
        )  # fmt: skip

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/-/ready", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError("prometheus did not become ready")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log_file.close()


@pytest.fixture
def app_server(clean_redis: RedisProcess, tmp_path: Path) -> Iterator[ServerThread]:
    app = create_app(make_settings(clean_redis.url, tmp_path, ops_token=OPS_TOKEN))
    app.state.ops_options = OpsOptions(sample_interval_s=1.0)
    with serve(app) as server:
        yield server


@pytest.fixture
def prometheus(app_server: ServerThread, tmp_path: Path) -> Iterator[PrometheusProcess]:
    config = _config_for(tmp_path, f"127.0.0.1:{app_server.port}")
    prom = PrometheusProcess(config, tmp_path / "tsdb")
    try:
        prom.wait_ready()
        yield prom
    finally:
        prom.stop()


@pytest.fixture
async def prom_api(prometheus: PrometheusProcess) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=prometheus.url + "/api/v1", timeout=10) as client:
        yield client


async def _query(api: httpx.AsyncClient, expr: str) -> list[dict[str, Any]]:
    r = await api.get("/query", params={"query": expr})
    body = r.json()
    assert r.status_code == 200 and body["status"] == "success", (expr, body)
    result: list[dict[str, Any]] = body["data"]["result"]
    return result


async def _until(api: httpx.AsyncClient, expr: str, ok: Any, within_s: float = 20) -> list[dict[str, Any]]:
    deadline = time.monotonic() + within_s
    result: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        result = await _query(api, expr)
        if result and ok(result):
            return result
        await asyncio.sleep(0.25)
    raise AssertionError(f"{expr}: {result}")


def _dashboard_exprs() -> list[str]:
    dashboard = json.loads((GRAFANA_DIR / "dashboards" / "callassist.json").read_text())
    return [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]


async def test_prometheus_scrapes_the_app_with_the_ops_token(
    prom_api: httpx.AsyncClient, app_server: ServerThread, clean_redis: RedisProcess
) -> None:
    # The app's /metrics wants the token: Prometheus sends it from the credentials file.
    async with httpx.AsyncClient(base_url=app_server.base_url, timeout=10) as app:
        assert (await app.get("/metrics")).status_code == 401
        await _until(prom_api, "callassist_redis_up", lambda r: r[0]["value"][1] == "1")
        targets = (await prom_api.get("/targets")).json()["data"]["activeTargets"]
        assert [t["health"] for t in targets] == ["up"], targets

        # Calls show up in Prometheus.
        owner = await create_owner(app, clean_redis.url)
        h = {"Authorization": owner["auth"]}
        call_id = (await app.post("/v1/calls/text", json={"lang": "en"}, headers=h)).json()["call_id"]
        for text in ("Hi, I have a parcel for Alex.", "Where should I leave it?"):
            await app.post(f"/v1/calls/{call_id}/turns", json={"text": text}, headers=h)
        metrics = (await app.get("/metrics", headers={"Authorization": f"Bearer {OPS_TOKEN}"})).text
    count = next(
        s.value
        for f in text_string_to_metric_families(metrics)
        if f.name == "callassist_decision_seconds"
        for s in f.samples
        if s.name.endswith("_count")
    )
    await _until(prom_api, "sum(callassist_decision_seconds_count)", lambda r: float(r[0]["value"][1]) == count)
    assert float((await _query(prom_api, "sum(callassist_turns_total)"))[0]["value"][1]) >= 2

    # /ops computes percentiles as Prometheus does: same buckets, same answer.
    buckets = await _query(prom_api, "sum by (le) (callassist_decision_seconds_bucket)")
    pairs = sorted((float(b["metric"]["le"]), float(b["value"][1])) for b in buckets)
    ours = histogram_quantile(0.9, Buckets(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)))
    theirs = await _query(prom_api, "histogram_quantile(0.9, sum by (le) (callassist_decision_seconds_bucket))")
    assert ours == pytest.approx(float(theirs[0]["value"][1]))

    # The alert rules are loaded, and quiet.
    groups = (await prom_api.get("/rules")).json()["data"]["groups"]
    loaded = {r["name"] for g in groups for r in g["rules"]}
    assert loaded == ALERTS
    firing = (await prom_api.get("/alerts")).json()["data"]["alerts"]
    assert [a for a in firing if a["state"] == "firing"] == []

    # Every Grafana panel's query runs in this Prometheus.
    for expr in _dashboard_exprs():
        await _query(prom_api, expr.replace("$__rate_interval", "1m").replace("$__range", "5m"))


# ----------------------------------------------------------------- Grafana ----


def test_grafana_dashboard_is_generated_and_matches_ops() -> None:
    module = runpy.run_path(str(GRAFANA_DIR / "dashboard.py"))
    text = (GRAFANA_DIR / "dashboards" / "callassist.json").read_text()
    assert text == module["render"](), "run: .venv/bin/python deploy/grafana/dashboard.py"
    dashboard = json.loads(text)
    titles = {p["title"] for p in dashboard["panels"]}
    # The panels of /ops.
    for title in (
        "Active calls", "Median TTFT against the 1000 ms line", "Fallbacks and interventions",
        "Voice-to-voice (end of speech → first audio)", "ASR", "Decision (coordinator)",
        "Realizer TTFT", "TTS first audio", "Safety interventions by constraint",
        "TTFT-guard fallbacks by reason", "Recent calls",
    ):  # fmt: skip
        assert title in titles, title
    ttft = next(p for p in dashboard["panels"] if p["title"] == "Median TTFT against the 1000 ms line")
    assert ttft["fieldConfig"]["defaults"]["thresholds"]["steps"][1]["value"] == 1.0  # 1000 ms
    # Grid positions do not overlap.
    cells: set[tuple[int, int]] = set()
    for p in dashboard["panels"]:
        g = p["gridPos"]
        mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        assert not cells & mine, p["title"]
        assert g["x"] + g["w"] <= 24
        cells |= mine

    # Every metric a query names exists in the app.
    known: set[str] = set()
    for family in REGISTRY.collect():
        suffixes = {"histogram": ("_bucket", "_sum", "_count"), "counter": ("_total",)}
        known |= {family.name + s for s in suffixes.get(family.type, ("",))}
    for expr in _dashboard_exprs():
        for name in re.findall(r"callassist_\w+", expr):
            assert name in known, (name, expr)
    for expr in re.findall(r"expr: \|?\s*(.+)", (PROM_DIR / "alerts.yml").read_text()):
        for name in re.findall(r"callassist_\w+", expr):
            assert name in known, name


def test_grafana_provisioning_points_at_the_dashboard() -> None:
    prov = GRAFANA_DIR / "provisioning"
    ds = yaml.safe_load((prov / "datasources" / "prometheus.yml").read_text())["datasources"][0]
    assert ds["type"] == "prometheus" and ds["url"] == "http://prometheus:9090"
    dashboard = json.loads((GRAFANA_DIR / "dashboards" / "callassist.json").read_text())
    uids = {t["datasource"]["uid"] for p in dashboard["panels"] for t in p.get("targets", [])}
    assert uids == {ds["uid"]}
    provider = yaml.safe_load((prov / "dashboards" / "callassist.yml").read_text())["providers"][0]
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    mounts = {v.split(":")[0]: v.split(":")[1] for v in compose["services"]["grafana"]["volumes"]}
    assert mounts["./deploy/grafana/dashboards"] == provider["options"]["path"]
    assert mounts["./deploy/grafana/provisioning"] == "/etc/grafana/provisioning"


# ----------------------------------------------------------------- compose ----


def test_compose_file_is_valid_against_the_compose_spec() -> None:
    schema = json.loads((ROOT / "tests" / "data" / "compose-spec.schema.json").read_text())
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    # Its $schema is spelled "https://json-schema.org/draft-07/schema", which jsonschema
    # does not look up by that name; it is draft-07.
    assert "draft-07" in schema["$schema"]
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(compose)]
    assert errors == []
    # The schema does catch mistakes (so the check above means something).
    broken = {**compose, "services": {**compose["services"], "app": {**compose["services"]["app"], "imag": "x"}}}
    assert any(True for _ in validator.iter_errors(broken))

    services = compose["services"]
    assert {"app", "redis", "prometheus", "grafana", "llama", "vllm"} <= set(services)
    assert "--appendonly" in services["redis"]["command"]
    assert services["redis"]["command"][services["redis"]["command"].index("--appendonly") + 1] == "yes"
    assert services["llama"]["profiles"] == ["llm"] and services["vllm"]["profiles"] == ["vllm"]
    assert "profiles" not in services["app"]  # the core stack runs without a profile
    env = services["app"]["environment"]
    assert {"CALLASSIST_REALIZER", "CALLASSIST_LLM_BASE_URL", "CALLASSIST_OPS_TOKEN"} <= set(env)
    gpu = services["vllm"]["deploy"]["resources"]["reservations"]["devices"][0]
    assert gpu["capabilities"] == ["gpu"]
    # Prometheus gets the ops token as the file its config reads.
    assert compose["secrets"]["ops_token"] == {"environment": "CALLASSIST_OPS_TOKEN"}
    assert services["prometheus"]["secrets"] == ["ops_token"]
    # Every file or folder the stack mounts or builds from is in the repo.
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith("./deploy"):
                assert (ROOT / source).exists(), (name, source)
    assert (ROOT / services["app"]["build"]["dockerfile"]).is_file()


def test_dockerfile_is_multi_stage_and_non_root() -> None:
    lines = [
        line.strip()
        for line in (ROOT / "deploy" / "Dockerfile").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    stages = [i for i, line in enumerate(lines) if line.startswith("FROM ")]
    assert len(stages) >= 2
    final = lines[stages[-1] :]
    users = [line.split()[1] for line in final if line.startswith("USER ")]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert any(line.startswith("COPY --from=") for line in final)
    assert any(line.startswith("HEALTHCHECK") for line in final)
