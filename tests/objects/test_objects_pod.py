from hypothesis import given, settings
from hypothesis import strategies as st

from kconsole.objects.meta import format_time, parse_time
from kconsole.objects.pod import (
    RequiredNodeAffinity,
    find_untolerated_taint,
    host_ports,
    host_ports_conflict,
    is_node_ready,
    is_pod_active,
    is_pod_available,
    is_pod_ready,
    is_terminal,
    no_execute_toleration_seconds,
    node_allocatable,
    node_zone,
    node_zone_key,
    pod_limits,
    pod_matches_node,
    pod_phase,
    pod_requests,
    taint_string,
    tolerates,
)


def container(name, cpu=None, memory=None, restart_policy=None, **extra):
    requests = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    c = {"name": name, "image": "busybox", "resources": {"requests": requests} if requests else {}, **extra}
    if restart_policy:
        c["restartPolicy"] = restart_policy
    return c


def pod(containers=(), init=(), overhead=None, **spec):
    s = {"containers": list(containers), **spec}
    if init:
        s["initContainers"] = list(init)
    if overhead:
        s["overhead"] = overhead
    return {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": s}


# --- state ------------------------------------------------------------------------------------


def test_phase_and_activity():
    p = pod()
    assert pod_phase(p) == "Pending"
    assert is_pod_active(p)
    for phase, active in (("Running", True), ("Succeeded", False), ("Failed", False), ("Unknown", True)):
        q = {**p, "status": {"phase": phase}}
        assert is_pod_active(q) is active
        assert is_terminal(q) is (not active)
    deleting = {**p, "metadata": {**p["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}}
    assert not is_pod_active(deleting)


def test_ready_and_available():
    t = parse_time("2026-01-01T00:00:00Z")
    p = {**pod(), "status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": format_time(t)}]}}
    assert is_pod_ready(p)
    assert is_pod_available(p, 0, t)
    assert not is_pod_available(p, 10, t + 9)
    assert is_pod_available(p, 10, t + 10)
    not_ready = {**p, "status": {"conditions": [{"type": "Ready", "status": "False"}]}}
    assert not is_pod_ready(not_ready) and not is_pod_available(not_ready, 0, t)
    assert not is_pod_ready(pod())


# --- requests ---------------------------------------------------------------------------------


def test_requests_sum_containers_and_convert_units():
    p = pod([container("a", "100m", "128Mi"), container("b", "0.5", "1G")], overhead={"cpu": "10m"})
    assert pod_requests(p) == {"cpu": 610, "memory": 134217728 + 10**9}


def test_init_containers_take_the_max_not_the_sum():
    p = pod([container("app", "500m", "1Gi")], init=[container("i1", "2", "100Mi"), container("i2", "1", "2Gi")])
    assert pod_requests(p) == {"cpu": 2000, "memory": 2 * 2**30}


def test_sidecars_keep_running_alongside_later_init_containers_and_apps():
    p = pod(
        [container("app", "1", "1Gi")],
        init=[
            container("sidecar", "200m", "100Mi", restart_policy="Always"),
            container("migrate", "2", "50Mi"),
        ],
    )
    # apps + sidecar = 1.2 cpu; migrate runs next to the sidecar: 2.2 cpu
    assert pod_requests(p) == {"cpu": 2200, "memory": 2**30 + 100 * 2**20}


def test_non_zero_requests_default_for_scoring():
    p = pod([container("a"), container("b", "300m")])
    assert pod_requests(p) == {"cpu": 300}
    assert pod_requests(p, non_zero=True) == {"cpu": 400, "memory": 2 * 200 * 2**20}


def test_limits_add_overhead_only_where_limited():
    c = {"name": "a", "resources": {"limits": {"cpu": "1"}}}
    assert pod_limits(pod([c], overhead={"cpu": "100m", "memory": "10Mi"})) == {"cpu": 1100}


def test_node_allocatable_ints():
    node = {"status": {"allocatable": {"cpu": "3800m", "memory": "15Gi", "pods": "110"}, "capacity": {"cpu": "4"}}}
    assert node_allocatable(node) == {"cpu": 3800, "memory": 15 * 2**30, "pods": 110}
    assert node_allocatable({"status": {"capacity": {"cpu": "4"}}}) == {"cpu": 4000}


# --- ports ------------------------------------------------------------------------------------


def test_host_ports_default_ip_and_protocol():
    c = container("a", ports=[{"containerPort": 80, "hostPort": 8080}, {"containerPort": 53, "protocol": "UDP"}])
    p = pod([c])
    assert host_ports(p) == [("0.0.0.0", "TCP", 8080)]
    assert host_ports_conflict(("0.0.0.0", "TCP", 8080), ("10.0.0.1", "TCP", 8080))
    assert not host_ports_conflict(("10.0.0.2", "TCP", 8080), ("10.0.0.1", "TCP", 8080))
    assert not host_ports_conflict(("0.0.0.0", "UDP", 8080), ("0.0.0.0", "TCP", 8080))


# --- taints -----------------------------------------------------------------------------------

UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}
NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}
GPU = {"key": "gpu", "value": "true", "effect": "NoSchedule"}


def test_toleration_semantics():
    assert tolerates({"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}, GPU)
    assert tolerates({"key": "gpu", "value": "true"}, GPU)  # empty operator is Equal, empty effect matches all
    assert not tolerates({"key": "gpu", "value": "false"}, GPU)
    assert tolerates({"key": "gpu", "operator": "Exists"}, GPU)
    assert not tolerates({"key": "gpu", "operator": "Exists", "effect": "NoExecute"}, GPU)
    assert tolerates({"operator": "Exists"}, GPU)  # empty key + Exists tolerates everything
    assert tolerates({"operator": "Exists"}, UNREACHABLE)
    assert not tolerates({"key": "other", "operator": "Exists"}, GPU)
    assert not tolerates({"key": "gpu", "operator": "Gt", "value": "1"}, GPU)


def test_find_untolerated_taint_filters_by_effect():
    taints = [GPU, NOT_READY]
    assert find_untolerated_taint(taints, [], ["NoSchedule", "NoExecute"]) is GPU
    assert find_untolerated_taint(taints, [{"key": "gpu", "operator": "Exists"}], ["NoSchedule", "NoExecute"]) is NOT_READY
    assert find_untolerated_taint(taints, [{"key": "gpu", "operator": "Exists"}], ["NoSchedule"]) is None
    assert find_untolerated_taint(taints, [], lambda t: t["key"] == "gpu") is GPU
    assert taint_string(GPU) == "gpu=true:NoSchedule"
    assert taint_string(UNREACHABLE) == "node.kubernetes.io/unreachable:NoExecute"


def test_no_execute_toleration_seconds():
    default_tols = [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    ]
    assert no_execute_toleration_seconds([UNREACHABLE], default_tols) == 300
    assert no_execute_toleration_seconds([UNREACHABLE, GPU], default_tols) == 300
    assert no_execute_toleration_seconds([{"key": "x", "effect": "NoExecute"}], default_tols) == 0.0
    assert no_execute_toleration_seconds([UNREACHABLE], [{"operator": "Exists"}]) is None
    assert no_execute_toleration_seconds([], []) is None
    shortest = default_tols + [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 30}]
    assert no_execute_toleration_seconds([UNREACHABLE], shortest) == 30


taint_st = st.fixed_dictionaries(
    {"key": st.sampled_from(["a", "b"]), "effect": st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])},
    optional={"value": st.sampled_from(["", "x", "y"])},
)
tol_st = st.fixed_dictionaries(
    {},
    optional={
        "key": st.sampled_from(["", "a", "b"]),
        "operator": st.sampled_from(["", "Equal", "Exists"]),
        "value": st.sampled_from(["", "x", "y"]),
        "effect": st.sampled_from(["", "NoSchedule", "PreferNoSchedule", "NoExecute"]),
    },
)


@settings(deadline=None, max_examples=80)
@given(tol_st, taint_st)
def test_toleration_agrees_with_a_reference_reading_of_upstream(tol, taint):
    effect_ok = not tol.get("effect") or tol["effect"] == taint["effect"]
    key_ok = not tol.get("key") or tol["key"] == taint["key"]
    if tol.get("operator") == "Exists":
        value_ok = True
    else:
        value_ok = tol.get("value", "") == taint.get("value", "")
    assert tolerates(tol, taint) is (effect_ok and key_ok and value_ok)


@settings(deadline=None, max_examples=80)
@given(st.lists(taint_st, max_size=4), st.lists(tol_st, max_size=4))
def test_untolerated_taint_is_none_exactly_when_all_are_tolerated(taints, tols):
    found = find_untolerated_taint(taints, tols)
    all_tolerated = all(any(tolerates(t, taint) for t in tols) for taint in taints)
    assert (found is None) is all_tolerated
    if found is not None:
        assert not any(tolerates(t, found) for t in tols)


# --- nodes ------------------------------------------------------------------------------------


def node(name, ready="True", **labels):
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"conditions": [{"type": "Ready", "status": ready}]},
    }


def test_node_readiness_and_zone():
    assert is_node_ready(node("n1"))
    assert not is_node_ready(node("n1", ready="Unknown"))
    assert not is_node_ready({"metadata": {"name": "n"}})
    n = node("n1", **{"topology.kubernetes.io/zone": "z1", "topology.kubernetes.io/region": "r1"})
    assert node_zone(n) == "z1"
    assert node_zone_key(n) == "r1:\x00:z1"
    assert node_zone(node("n2", **{"failure-domain.beta.kubernetes.io/zone": "old"})) == "old"
    assert node_zone(node("n3")) == "" and node_zone_key(node("n3")) == ""


def test_required_node_affinity_combines_node_selector_and_affinity():
    p = pod(
        nodeSelector={"disk": "ssd"},
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}
                    ]
                }
            }
        },
    )
    assert pod_matches_node(p, node("n1", disk="ssd", **{"topology.kubernetes.io/zone": "a"}))
    assert not pod_matches_node(p, node("n2", disk="hdd", **{"topology.kubernetes.io/zone": "a"}))
    assert not pod_matches_node(p, node("n3", disk="ssd", **{"topology.kubernetes.io/zone": "b"}))
    assert RequiredNodeAffinity(pod()).matches(node("any"))
