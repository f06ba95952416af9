"""The env service account's admission policy (deploy/k8s/base/env.yaml, halo.cli.k8s), evaluated: the
ValidatingAdmissionPolicy and its binding as `kubectl kustomize` renders them, their CEL run by a CEL
implementation (cel-python) on the requests an API server would hand them. RBAC lets the env's account
patch any pod of the namespace (a Role cannot name a pod before it exists); this policy is what keeps
it to its own pod's deletion-cost annotation. Kubernetes' own CEL environment (its type checker, the
API server's enforcement) is not run here: no cluster."""

from __future__ import annotations

import copy
from typing import Any

import celpy
import pytest
from celpy import celtypes

from halo.cli import k8s
from halo.env.podcost import ANNOTATION

from .test_k8s import by_kind, kustomize, user_overlay

NOT_MATCHED = "not matched"


def json_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386, as the API server applies halo.env.podcost's application/merge-patch+json."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = json_merge_patch(out.get(key), value)
    return out


class Admission:
    """One policy and its binding, applied as the API server's admission step does: the binding's
    namespace selector and the policy's match constraints and match conditions choose the requests;
    every validation must be true (an evaluation error counts as a failure: failurePolicy Fail)."""

    def __init__(self, objects: list[dict]) -> None:
        (self.policy,) = by_kind(objects, "ValidatingAdmissionPolicy").values()
        (self.binding,) = by_kind(objects, "ValidatingAdmissionPolicyBinding").values()
        self.namespaces = {n: o["metadata"].get("labels", {}) for n, o in by_kind(objects, "Namespace").items()}
        self.cel = celpy.Environment()

    def _true(self, expression: str, activation: dict[str, Any]) -> bool:
        """The expression's value is true; an evaluation error is not (failurePolicy Fail: refused)."""
        try:
            value = self.cel.program(self.cel.compile(expression)).evaluate(activation)
        except celpy.CELEvalError:
            return False
        return isinstance(value, celtypes.BoolType) and bool(value)

    def review(self, request: dict, obj: dict, old: dict) -> str | list[str]:
        """NOT_MATCHED, or the messages of the validations that fail ([] = admitted)."""
        spec = self.policy["spec"]
        assert self.binding["spec"]["policyName"] == self.policy["metadata"]["name"]
        assert self.binding["spec"]["validationActions"] == ["Deny"] and spec["failurePolicy"] == "Fail"
        selector = self.binding["spec"]["matchResources"]["namespaceSelector"]["matchLabels"]
        labels = {**self.namespaces.get(request["namespace"], {}), "kubernetes.io/metadata.name": request["namespace"]}
        if any(labels.get(k) != v for k, v in selector.items()):
            return NOT_MATCHED
        resource = request["resource"]
        if not any(resource["group"] in r["apiGroups"] and resource["version"] in r["apiVersions"]
                   and resource["resource"] in r["resources"] and request["operation"] in r["operations"]
                   for r in spec["matchConstraints"]["resourceRules"]):
            return NOT_MATCHED
        activation: dict[str, Any] = {"request": celpy.json_to_cel(request), "object": celpy.json_to_cel(obj),
                                      "oldObject": celpy.json_to_cel(old)}
        for condition in spec.get("matchConditions", []):
            try:
                matched = self.cel.program(self.cel.compile(condition["expression"])).evaluate(activation)
            except celpy.CELEvalError as exc:   # failurePolicy Fail: refused
                return [f"match condition {condition['name']}: {exc}"]
            if not (isinstance(matched, celtypes.BoolType) and bool(matched)):
                return NOT_MATCHED
        activation["variables"] = celtypes.MapType({
            celtypes.StringType(v["name"]): self.cel.program(self.cel.compile(v["expression"])).evaluate(activation)
            for v in spec.get("variables", [])})
        return [v["message"] for v in spec["validations"] if not self._true(v["expression"], activation)]


@pytest.fixture(scope="module")
def admission() -> Admission:
    return Admission(kustomize("cpu"))


def pod_of(objects: list[dict], app: str, name: str, uid: str, namespace: str = "halo") -> dict:
    """A pod as its ReplicaSet creates it from the rendered Deployment's template."""
    template = by_kind(objects, "Deployment")[app]["spec"]["template"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "namespace": namespace, "uid": uid, "labels": dict(template["metadata"]["labels"]),
        "annotations": dict(template["metadata"].get("annotations", {})),
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-5d8c7", "uid": "rs-1",
                             "controller": True, "blockOwnerDeletion": True}],
    }, "spec": copy.deepcopy(template["spec"])}


def request_by(username: str, pod: dict, bound_to: dict | None = None) -> dict:
    """An UPDATE of `pod` (a PATCH reaches admission as one) by `username`, whose token is bound to
    the pod `bound_to` (the extra a pod-bound service-account token carries), or to none."""
    extra = {} if bound_to is None else {
        "authentication.kubernetes.io/pod-name": [bound_to["metadata"]["name"]],
        "authentication.kubernetes.io/pod-uid": [bound_to["metadata"]["uid"]],
        "authentication.kubernetes.io/node-name": ["node-1"],
        "authentication.kubernetes.io/credential-id": ["JTI=0f1e2d3c"]}
    user: dict[str, Any] = {"username": username, "uid": "sa-uid", "groups": ["system:serviceaccounts", "system:authenticated"]}
    if extra:
        user["extra"] = extra
    return {"uid": "req-1", "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"}, "name": pod["metadata"]["name"],
            "namespace": pod["metadata"]["namespace"], "operation": "UPDATE", "userInfo": user}


ENV_ACCOUNT = "system:serviceaccount:halo:env"


@pytest.fixture(scope="module")
def pods() -> dict[str, dict]:
    objects = kustomize("cpu")
    return {"own": pod_of(objects, "env", "env-5d8c7-x2x9q", "uid-own"),
            "peer": pod_of(objects, "env", "env-5d8c7-abcde", "uid-peer"),
            "trainer": pod_of(objects, "trainer", "trainer-7f9b8-zzzzz", "uid-trainer")}


def cost_patch(value: int | None) -> dict:
    """halo.env.podcost's body (None: the annotation removed)."""
    return {"metadata": {"annotations": {ANNOTATION: None if value is None else str(value)}}}


def test_the_policy_guards_the_annotation_halo_env_podcost_writes(admission):
    assert k8s.DELETION_COST == ANNOTATION
    assert ANNOTATION in admission.policy["spec"]["validations"][2]["expression"]


def test_the_env_account_may_set_its_own_pods_deletion_cost(admission, pods):
    own = pods["own"]
    first = json_merge_patch(own, cost_patch(3))
    assert admission.review(request_by(ENV_ACCOUNT, own, own), first, own) == []
    later = json_merge_patch(first, cost_patch(0))
    assert admission.review(request_by(ENV_ACCOUNT, own, own), later, first) == []
    negative = json_merge_patch(first, cost_patch(-2))
    assert admission.review(request_by(ENV_ACCOUNT, own, own), negative, first) == []
    removed = json_merge_patch(first, cost_patch(None))
    assert admission.review(request_by(ENV_ACCOUNT, own, own), removed, first) == []


@pytest.mark.parametrize("target", ["peer", "trainer"])
def test_the_env_account_may_not_touch_another_pod(admission, pods, target):
    own, other = pods["own"], pods[target]
    patched = json_merge_patch(other, cost_patch(1))
    failed = admission.review(request_by(ENV_ACCOUNT, other, own), patched, other)
    assert failed == ["the env service account may change only its own pod (the pod its token is bound to)"]
    # nor with a token bound to no pod (a TokenRequest of its own, a legacy Secret token)
    assert admission.review(request_by(ENV_ACCOUNT, other, None), patched, other)
    # a pod of the same name but not the same pod (its token outlived it; the name came back)
    reborn = copy.deepcopy(own)
    reborn["metadata"]["uid"] = "uid-later"
    assert admission.review(request_by(ENV_ACCOUNT, reborn, own), json_merge_patch(reborn, cost_patch(1)), reborn)


def _image(pod: dict) -> dict:
    changed = copy.deepcopy(pod)
    changed["spec"]["containers"][0]["image"] = "attacker.example/halo-env:owned"
    return changed


def _labels(pod: dict) -> dict:
    return json_merge_patch(pod, {"metadata": {"labels": {"app.kubernetes.io/name": "trainer"}}})


def _other_annotation(pod: dict) -> dict:
    return json_merge_patch(pod, {"metadata": {"annotations": {"prometheus.io/scrape": "false"}}})


def _new_annotation(pod: dict) -> dict:
    return json_merge_patch(pod, {"metadata": {"annotations": {"example.com/x": "1"}}})


def _dropped_annotation(pod: dict) -> dict:
    return json_merge_patch(pod, {"metadata": {"annotations": {"halo/sizing": None}}})


def _owners(pod: dict) -> dict:
    return json_merge_patch(pod, {"metadata": {"ownerReferences": None}})


def _finalizer(pod: dict) -> dict:
    return json_merge_patch(pod, {"metadata": {"finalizers": ["example.com/keep"]}})


def _not_a_number(pod: dict) -> dict:
    return json_merge_patch(pod, cost_patch(1) | {"metadata": {"annotations": {ANNOTATION: "1e9; rm"}}})


@pytest.mark.parametrize("change", [_image, _labels, _other_annotation, _new_annotation, _dropped_annotation,
                                   _owners, _finalizer, _not_a_number])
def test_the_env_account_may_change_nothing_else_of_its_own_pod(admission, pods, change):
    own = pods["own"]
    changed = change(json_merge_patch(own, cost_patch(2)))    # with the deletion cost too: still refused
    failed = admission.review(request_by(ENV_ACCOUNT, own, own), changed, own)
    assert failed and failed != NOT_MATCHED, change.__name__
    assert not any("its own pod" in m for m in failed)        # it is its own pod: the other rules refuse


@pytest.mark.parametrize("username", ["system:serviceaccount:halo:prometheus", "system:serviceaccount:halo:default",
                                      "system:serviceaccount:kube-system:replicaset-controller", "alice@example.com",
                                      "system:serviceaccount:other:env"])
def test_requests_by_anyone_else_are_not_the_policys(admission, pods, username):
    trainer = pods["trainer"]
    changed = _image(trainer)
    assert admission.review(request_by(username, trainer, None), changed, trainer) == NOT_MATCHED


def test_other_operations_and_namespaces_are_not_the_policys(admission, pods):
    own = pods["own"]
    request = request_by(ENV_ACCOUNT, own, own)
    assert admission.review({**request, "operation": "CREATE"}, own, own) == NOT_MATCHED   # RBAC: patch only
    elsewhere = json_merge_patch(own, {"metadata": {"namespace": "default"}})
    assert admission.review({**request_by("system:serviceaccount:default:env", elsewhere, elsewhere),
                             "namespace": "default"}, _image(elsewhere), elsewhere) == NOT_MATCHED


def test_the_policy_follows_the_tree_into_another_namespace(tmp_path):
    """The tree built into namespace `lab` (a user's overlay with `namespace: lab`): the binding
    selects it by its Namespace object's label and the policy names the caller by the request's
    namespace, so the env account of `lab` is held to the same rules (no namespace is written into
    the two objects)."""
    objects = kustomize(user_overlay(tmp_path / "lab", "cpu", namespace="lab"))
    lab = Admission(objects)
    assert set(lab.namespaces) == {"lab"}
    own = pod_of(objects, "env", "env-1-aaaaa", "u1", namespace="lab")
    peer = pod_of(objects, "env", "env-1-bbbbb", "u2", namespace="lab")
    account = "system:serviceaccount:lab:env"
    assert lab.review(request_by(account, own, own), json_merge_patch(own, cost_patch(4)), own) == []
    assert lab.review(request_by(account, peer, own), json_merge_patch(peer, cost_patch(4)), peer)
    assert lab.review(request_by(account, own, own), _image(own), own)
