"""StorageClass helpers shared by the API server and the printers."""

from __future__ import annotations

from typing import Any

#: The annotations that make a StorageClass the default (GA and beta), as upstream's IsDefaultAnnotation.
DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                             "storageclass.beta.kubernetes.io/is-default-class")


def is_default_class(sc: dict[str, Any]) -> bool:
    annotations = (sc.get("metadata") or {}).get("annotations") or {}
    return any(annotations.get(key) == "true" for key in DEFAULT_CLASS_ANNOTATIONS)
