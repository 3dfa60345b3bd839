"""controllers layer (kube-controller-manager); see ../shared/DESIGN.md.

What the composition root builds (``kconsole/cluster.py``)::

    from kconsole.controllers.manager import ControllerManagerReplica, CONTROLLERS

    replica = ControllerManagerReplica(
        client,                 # a Client acting as system:kube-controller-manager
        clock,
        identity="cp-1",        # holderIdentity in kube-system/kube-controller-manager
        rng=random.Random(seed),
        settings={"node-lifecycle-controller": {"grace_period": 50}},  # per controller, optional
        controllers=None,       # names from CONTROLLERS; None = every available one
    )
    await replica.start()       # competes for the Lease; runs every controller while leading
    await replica.stop()        # crash-like: no renewals; the Lease expires on its own (15 s)
    replica.running, replica.is_leader, replica.active  # handle state for the console

``CONTROLLERS`` maps upstream names (``deployment-controller``, ``node-lifecycle-controller``, ...) to
classes, imported lazily; ``unavailable_controllers()`` says which cannot load and why.

Every controller is ``Controller(ctx: ControllerContext)`` (``base.py``): informers from the
context's shared factory, a workqueue, workers, an event recorder under upstream's source name.
Settings understood (``settings[<name>]``):

* ``node-lifecycle-controller``: monitor_period 5, grace_period 50, startup_grace_period 60,
  eviction_qps 0.1, secondary_eviction_qps 0.01, large_cluster_threshold 50,
  unhealthy_zone_threshold 0.55
* ``pod-garbage-collector-controller``: threshold 12500 (0 disables), period 20, quarantine 40
* ``endpointslice-controller``: max_endpoints_per_slice 100
* ``serviceaccount-controller``: accounts ("default",)
* ``horizontal-pod-autoscaler-controller``: sync-period 15, tolerance 0.1, downscale-stabilization 300

Workload controllers (one module each): ``DeploymentController`` (deployment.py),
``ReplicaSetController`` (replicaset.py), ``DaemonSetsController`` (daemonset.py),
``StatefulSetController`` (statefulset.py), ``JobController`` (job.py), ``CronJobController``
(cronjob.py), ``TTLAfterFinishedController`` (ttlafterfinished.py), ``HorizontalController`` (hpa.py); shared pieces: ``expectations.py`` (upstream's
ControllerExpectations) and ``podcontrol.py`` (PodControl, adoption/release, deletion ranking).
The HPA reads pod usage from the annotations ``kconsole.dev/cpu-usage`` / ``kconsole.dev/memory-usage``.
"""
