"""kconsole: a Kubernetes control plane you can watch think."""

__version__ = "0.1.0"
