"""Drills: rehearsals as code. A YAML file sets up a cluster, acts, injects faults, asks the learner
to predict, and checks what the control plane did.

Modules: ``spec`` (the file format, every key documented, ``file:line:col`` errors), ``runner``
(a headless run on the virtual clock, observable step by step), ``expect`` (conditions and their
simulated-time bounds), ``history`` (the recorded event stream), ``kubectl`` (the kubectl-like
command subset a step may run), ``referee`` (checkers over what the run recorded through the API,
on in every run), ``chaos`` (seeded fault schedules over a busy workload), ``cmd`` (``kconsole
drill``). Built-in drills live in ``builtin/``.

Drills act through the API and the fault catalog, like a user; checkers read recorded histories.
"""
