"""The console (Textual): live panels over one cluster, keyboard fault injection, themes.

Public API:

* :func:`kconsole.tui.launch.run_console(args) -> int` — ``kconsole [DIR]`` (called by ``kconsole/cli.py``):
  builds :class:`kconsole.cluster.Cluster` from the flags, opens the console, stops everything on quit.
* :func:`kconsole.tui.launch.run_drill_console(args) -> int` — ``kconsole drill NAME``: the console on a
  drill's cluster with the Drill panel (:mod:`kconsole.tui.drillrun`, :mod:`kconsole.tui.panels.drill`).
* :class:`kconsole.tui.app.ConsoleApp(cluster, *, theme=None, readonly=False, keymap_overrides=None,
  theme_dirs=None, refresh_interval=0.25, sample_interval=1.0, live=True, watch_themes=True, drill=None)`
  — the app; ``drill`` is a :class:`kconsole.tui.drillrun.DrillSession` whose cluster is ``cluster``.
  ``cluster`` may be started already (tests) or not (the app starts it after the first paint).
  ``render_pending(force=False)`` redraws panels whose caches moved; ``sample_now()`` takes one
  sampling round; ``await shutdown()`` stops the caches and the cluster.
* Handles the console reads from the cluster (duck-typed): ``api_client(user)``, ``clock``, ``etcd``
  (``member_status()``, ``quorum()``, ``status()``), ``proxies[node].rules()``, ``sync.report``
  (files, version), ``faults`` (see :mod:`kconsole.tui.faultview`), ``kubeconfig_path``.
* Keys on the selected object (:mod:`kconsole.tui.objectkeys`): ``l`` logs, ``e`` edit through
  ``$EDITOR`` (:mod:`kconsole.tui.edit`), ``ctrl+d`` delete, ``1``-``9`` namespace favourites kept in
  the data folder (:mod:`kconsole.tui.favourites`); ``d`` prints :func:`kconsole.objects.describe.describe`.
* :mod:`kconsole.web` — ``kconsole web [DIR]``: the same console in a browser (textual-serve).
* Config file: ``console: {theme, readonly, refresh, keymap: {binding id: keys}}`` (ids in
  :mod:`kconsole.tui.keymap`); themes are ``themes/*.yaml`` (:mod:`kconsole.tui.themes`).

Layer rule: imports kconsole.client, kconsole.objects, kconsole.clock, kconsole.cluster and
kconsole.api.types only; and kconsole.drills (the runner, which acts through the API) for drills.
"""
