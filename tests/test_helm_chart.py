"""The Helm chart renders with Helm itself (helm-python-sdk binds Helm's Go SDK) and every
manifest validates against the Kubernetes schemas (kubernetes-validate), offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

helm = pytest.importorskip("helm_python")
kv = pytest.importorskip("kubernetes_validate")

CHART = Path(__file__).resolve().parents[1] / "deploy" / "helm" / "callassist"
K8S_VERSION = "1.30.0"
BASE = {"redis": {"url": "redis://redis-master:6379/0"}, "secrets": {"opsToken": "t" * 32}}


def render(values: dict[str, Any]) -> list[dict[str, Any]]:
    with helm.Chart.load(str(CHART)) as chart:
        files = chart.render(values=values, name="ca", namespace="calls")
    docs: list[dict[str, Any]] = []
    for name, text in files.items():
        if name.endswith("NOTES.txt"):
            continue
        docs.extend(d for d in yaml.safe_load_all(text) if d)
    return docs


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def _check_crd(doc: dict[str, Any]) -> None:
    """KEDA and Prometheus Operator kinds: no schema ships offline; check the fields those
    controllers require."""
    spec = doc["spec"]
    if doc["kind"] == "ScaledObject":
        assert doc["apiVersion"] == "keda.sh/v1alpha1"
        assert spec["scaleTargetRef"]["name"]
        assert 1 <= spec["minReplicaCount"] <= spec["maxReplicaCount"]
        (trigger,) = spec["triggers"]
        assert trigger["type"] == "prometheus"
        assert set(trigger["metadata"]) >= {"serverAddress", "query", "threshold"}
        assert isinstance(trigger["metadata"]["threshold"], str)  # KEDA wants strings
        assert "callassist_active_calls" in trigger["metadata"]["query"]
    elif doc["kind"] == "ServiceMonitor":
        assert doc["apiVersion"] == "monitoring.coreos.com/v1"
        assert spec["selector"]["matchLabels"]
        (endpoint,) = spec["endpoints"]
        assert endpoint["path"] == "/metrics" and endpoint["port"] == "http"
        assert endpoint["bearerTokenSecret"]["key"] == "ops-token"
    else:
        raise AssertionError(f"unexpected custom kind {doc['kind']}")


VARIANTS = {
    "defaults": {},
    "sentinel": {"redis": {"url": "", "sentinel": {"enabled": True, "hosts": ["s0:26379", "s1:26379", "s2:26379"]}}},
    "hpa": {"autoscaling": {"keda": {"enabled": False}, "hpa": {"enabled": True}}},
    "no-sip": {"sip": {"enabled": False}, "serviceMonitor": {"enabled": False}},
    "existing-secrets": {
        "secrets": {"existingSecret": "callassist-prod", "opsToken": ""},
        "redis": {"url": "", "existingSecret": "redis-url"},
    },
}


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_chart_renders_and_validates(variant: str) -> None:
    docs = render(_merge(BASE, VARIANTS[variant]))
    errors = []
    for doc in docs:
        if doc["apiVersion"].split("/")[0] in ("keda.sh", "monitoring.coreos.com"):
            _check_crd(doc)
            continue
        try:
            kv.validate(doc, K8S_VERSION, strict=True)
        except kv.ValidationError as exc:
            errors.append(f"{doc['kind']}/{doc['metadata']['name']}: {exc.message}")
    assert errors == []


def test_deployment_drains_probes_and_sizes_from_values() -> None:
    docs = render(_merge(BASE, {"maxCallSeconds": 900, "voiceCallsPerPod": 5}))
    (dep,) = [d for d in by_kind(docs, "Deployment") if d["metadata"]["name"] == "ca-callassist"]
    pod = dep["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == 930  # the longest call + 30 s to save and exit
    (c,) = pod["containers"]
    env = {e["name"]: e for e in c["env"]}
    assert env["CALLASSIST_MAX_CALL_S"]["value"] == "900"
    assert env["CALLASSIST_MAX_VOICE_CALLS"]["value"] == "5"
    assert env["CALLASSIST_OPS_TOKEN"]["valueFrom"]["secretKeyRef"]["key"] == "ops-token"
    assert env["CALLASSIST_SIP_ADVERTISE_HOST"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert c["startupProbe"]["failureThreshold"] * c["startupProbe"]["periodSeconds"] >= 120
    assert "replicas" not in dep["spec"]  # the autoscaler owns the replica count
    (pdb,) = by_kind(docs, "PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"] == dep["spec"]["selector"]["matchLabels"]
    (so,) = by_kind(docs, "ScaledObject")
    assert so["spec"]["scaleTargetRef"]["name"] == dep["metadata"]["name"]


def test_sentinel_url_and_secret_handling() -> None:
    docs = render(_merge(BASE, VARIANTS["sentinel"]))
    (dep,) = [d for d in by_kind(docs, "Deployment") if d["metadata"]["name"] == "ca-callassist"]
    env = {e["name"]: e for e in dep["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["CALLASSIST_REDIS_URL"]["value"] == "redis+sentinel://s0:26379,s1:26379,s2:26379/mymaster/0"
    docs = render(_merge(BASE, VARIANTS["existing-secrets"]))
    assert by_kind(docs, "Secret") == []  # the operator's own Secret is used, none is created
    (dep,) = [d for d in by_kind(docs, "Deployment") if d["metadata"]["name"] == "ca-callassist"]
    env = {e["name"]: e for e in dep["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["CALLASSIST_OPS_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == "callassist-prod"
    assert env["CALLASSIST_REDIS_URL"]["valueFrom"]["secretKeyRef"]["name"] == "redis-url"


def test_kamailio_front_carries_the_repo_config_and_the_dispatcher_sidecar() -> None:
    docs = render(BASE)
    (cm,) = by_kind(docs, "ConfigMap")
    assert cm["data"]["kamailio.cfg"].strip() == (CHART.parents[1] / "kamailio" / "kamailio.cfg").read_text().strip()
    (front,) = [d for d in by_kind(docs, "Deployment") if d["metadata"]["name"].endswith("-kamailio")]
    names = [c["name"] for c in front["spec"]["template"]["spec"]["containers"]]
    assert names == ["kamailio", "dispatcher-sync"]
    sync = front["spec"]["template"]["spec"]["containers"][1]["args"]
    assert sync[:3] == ["callassist", "sip", "dispatcher-sync"]
    assert "ca-callassist-sip.calls.svc.cluster.local" in sync
    (headless,) = [d for d in by_kind(docs, "Service") if d["metadata"]["name"] == "ca-callassist-sip"]
    assert headless["spec"]["clusterIP"] == "None" and headless["spec"]["publishNotReadyAddresses"] is False


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"secrets": {"opsToken": "t" * 32}}, "redis"),
        ({"redis": {"url": "redis://r:6379"}}, "opsToken"),
        (_merge(BASE, {"autoscaling": {"hpa": {"enabled": True}}}), "either autoscaling.keda or autoscaling.hpa"),
    ],
)
def test_chart_refuses_incomplete_values(values: dict[str, Any], message: str) -> None:
    with pytest.raises(helm.HelmError) as err:
        render(values)
    assert message in str(err.value)
