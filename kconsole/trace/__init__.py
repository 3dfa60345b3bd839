"""Record, replay, compare and fork (issue #29 section 4).

* :mod:`.recorder` keeps the user-level inputs of a running cluster beside its store, as they
  arrive at the API server and the fault catalog;
* :mod:`.fileformat` is the trace file (JSON lines, documented in docs/history.md, "Traces");
* :mod:`.export` writes a trace from the history read path and the recorded inputs;
* :mod:`.film` plays a trace back as a film (no cluster), :mod:`.filmapp` shows it;
* :mod:`.rerun` re-executes a trace's inputs against a fresh cluster on the virtual clock and
  :mod:`.outcome` compares what happened;
* :mod:`.fork` starts a new data folder from a past revision.
"""
