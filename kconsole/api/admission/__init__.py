"""Admission plugins, in the order the API server runs them.

Mutating (defaulting and allocation) runs before validation; validating plugins run after it and
may only refuse. Every plugin is a class with a ``name`` (what the audit log names as the stage
that refused a request) and ``admit`` or ``validate``.
"""

from __future__ import annotations

from kconsole.api.admission.defaults import Defaults
from kconsole.api.admission.limitranger import LimitRanger
from kconsole.api.admission.metadata import ObjectMetaDefaults
from kconsole.api.admission.namespacelifecycle import NamespaceLifecycle
from kconsole.api.admission.noderestriction import NodeRestriction
from kconsole.api.admission.podsecurity import PodSecurity
from kconsole.api.admission.priority import Priority
from kconsole.api.admission.resourcequota import ResourceQuota
from kconsole.api.admission.runtimeclass import RuntimeClass
from kconsole.api.admission.serviceaccount import ServiceAccount
from kconsole.api.admission.services import ServiceAllocation
from kconsole.api.admission.storageclass import DefaultStorageClass
from kconsole.api.admission.storageprotection import StorageObjectInUseProtection
from kconsole.api.admission.tolerations import DefaultTolerationSeconds
from kconsole.api.stages import MutatingAdmission, ValidatingAdmission

__all__ = ["mutating_plugins", "validating_plugins"]


def mutating_plugins() -> list[MutatingAdmission]:
    """NamespaceLifecycle first (a missing namespace is 404 before any work), then ObjectMeta (the
    Job selector needs the uid), scheme defaults, allocation, the Pod plugins in upstream order, then
    DefaultStorageClass, StorageObjectInUseProtection and RuntimeClass."""
    return [
        NamespaceLifecycle(),
        ObjectMetaDefaults(),
        Defaults(),
        LimitRanger(),
        ServiceAllocation(),
        ServiceAccount(),
        Priority(),
        DefaultTolerationSeconds(),
        DefaultStorageClass(),
        StorageObjectInUseProtection(),
        RuntimeClass(),
    ]


def validating_plugins() -> list[ValidatingAdmission]:
    return [NamespaceLifecycle(), LimitRanger(), NodeRestriction(), PodSecurity(), Priority(), RuntimeClass(),
            ResourceQuota()]
