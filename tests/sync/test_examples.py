"""The shipped examples/ folder, synced whole: every drill's files are accepted by the API server,
and each file of the deliberately broken folder reports the problem it is there to show."""

from __future__ import annotations

from pathlib import Path

from sync_env import Env

from kconsole.sync import ManifestSync

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: file -> (reason, line, words in the message)
BROKEN = {
    "broken/syntax.yaml": ("YAMLSyntax", 9, "YAML syntax error"),
    "broken/unknown-kind.yaml": ("NotFound", 3, 'no matches for kind "Deploymnet"'),
    "broken/invalid.yaml": ("Invalid", 9, "spec.replicas"),
    "broken/denied.yaml": ("Forbidden", 3, 'violates PodSecurity "restricted:latest"'),
    "broken/twice.yaml": ("Duplicate", 5, "also declared in broken/fine.yaml"),
}


async def test_examples_folder_syncs_with_only_the_broken_files_failing(env: Env) -> None:
    sync = ManifestSync(env.sync_client, EXAMPLES, data_dir=env.data_dir, clock=env.clock, watch=False)
    await sync.start()
    try:
        failing = {p: st for p, st in sync.files.items() if st.status != "applied"}
        assert set(failing) == set(BROKEN), {p: st.summary() for p, st in failing.items()}
        for path, (reason, line, words) in BROKEN.items():
            err = failing[path].error
            assert err is not None and err.reason == reason and err.line == line and words in err.message, str(err)
        assert sync.files["quickstart/deployment.yaml"].status == "applied"
        kinds = {o.kind for st in sync.files.values() for o in st.objects}
        assert {"Namespace", "Deployment", "Service", "Job", "CronJob", "PriorityClass", "RoleBinding",
                "ServiceAccount", "HorizontalPodAutoscaler", "ConfigMap"} <= kinds
        # The preemption example's high-priority pod waits for the user: applied with the folder it
        # would be scheduled before the filler pods exist, and nothing would be preempted.
        assert "scheduling/preemption/urgent.yaml.later" not in sync.files
        hpa_deploy = await env.admin.get("deployments", "php-apache", "hpa-demo")
        assert hpa_deploy["spec"]["replicas"] == 1  # defaulted; the file leaves it to the HPA
    finally:
        await sync.stop()
