"""The fidelity suite: kubectl scenarios with upstream's expected output, run against any kubeconfig."""
