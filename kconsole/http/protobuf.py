"""Decode kubectl's protobuf request bodies into plain-dict objects.

kubectl's typed commands (``create deployment``, ``run``, ``expose``, ``auth can-i`` ...) POST
``application/vnd.kubernetes.protobuf``: the magic ``k8s\\x00`` then a ``runtime.Unknown``
(1: typeMeta{1: apiVersion, 2: kind}, 2: raw, 3: contentEncoding, 4: contentType) whose ``raw`` is
the object in k8s.io/api's ``generated.proto`` encoding. This module is a small wire-format reader
plus a table of those messages' public field numbers, producing the same dict the JSON body would
have been. Zero values of non-pointer fields are dropped (Go's ``omitempty``), as JSON would.

Schema syntax, one field per ``;``-separated entry: ``NUM name[*|{}][:Type][?|!]`` where ``*`` is
repeated, ``{}`` is ``map<string, Type>``, ``?`` marks a pointer field (kept even when zero), ``!`` a
field JSON always prints, and a name starting with ``^`` is an embedded struct inlined into its parent.
Scalar types: ``str`` (default), ``bool``, ``int``, ``bytes``, ``time``, ``qty``, ``intstr``, ``raw``.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone
from typing import Any

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


class ProtobufError(ValueError):
    """The body is not a well-formed Kubernetes protobuf object; the message says what is wrong."""


_META = {
    "ObjectMeta": "1 name; 2 generateName; 3 namespace; 4 selfLink; 5 uid; 6 resourceVersion; 7 generation:int;"
    " 8 creationTimestamp:time; 9 deletionTimestamp:time; 10 deletionGracePeriodSeconds:int?;"
    " 11 labels{}; 12 annotations{}; 13 ownerReferences*:OwnerReference; 14 finalizers*;"
    " 17 managedFields*:ManagedFieldsEntry",
    "OwnerReference": "1 kind!; 3 name!; 4 uid!; 5 apiVersion!; 6 controller:bool?; 7 blockOwnerDeletion:bool?",
    "ManagedFieldsEntry": "1 manager; 2 operation; 3 apiVersion; 4 time:time; 6 fieldsType; 7 fieldsV1:FieldsV1;"
    " 8 subresource",
    "FieldsV1": "1 ^raw:raw",
    "LabelSelector": "1 matchLabels{}; 2 matchExpressions*:LabelSelectorRequirement",
    "LabelSelectorRequirement": "1 key!; 2 operator!; 3 values*",
    "DeleteOptions": "1 gracePeriodSeconds:int?; 2 preconditions:Preconditions; 3 orphanDependents:bool?;"
    " 4 propagationPolicy?; 5 dryRun*",
    "Preconditions": "1 uid?; 2 resourceVersion?",
    "Condition": "1 type!; 2 status!; 3 observedGeneration:int; 4 lastTransitionTime:time!; 5 reason!; 6 message!",
}

_CORE = {
    "Namespace": "1 metadata:ObjectMeta; 2 spec:NamespaceSpec; 3 status:NamespaceStatus",
    "NamespaceSpec": "1 finalizers*",
    "NamespaceStatus": "1 phase",
    "ConfigMap": "1 metadata:ObjectMeta; 4 immutable:bool?; 2 data{}; 3 binaryData{}:bytes",
    "Secret": "1 metadata:ObjectMeta; 5 immutable:bool?; 2 data{}:bytes; 4 stringData{}; 3 type",
    "ServiceAccount": "1 metadata:ObjectMeta; 2 secrets*:ObjectReference; 3 imagePullSecrets*:LocalObjectReference;"
    " 4 automountServiceAccountToken:bool?",
    "ObjectReference": "1 kind; 2 namespace; 3 name; 4 uid; 5 apiVersion; 6 resourceVersion; 7 fieldPath",
    "LocalObjectReference": "1 name",
    "Binding": "1 metadata:ObjectMeta; 2 target:ObjectReference",
    "Service": "1 metadata:ObjectMeta; 2 spec:ServiceSpec; 3 status:ServiceStatus",
    "ServiceSpec": "1 ports*:ServicePort; 2 selector{}; 3 clusterIP; 18 clusterIPs*; 4 type; 5 externalIPs*;"
    " 7 sessionAffinity; 8 loadBalancerIP; 9 loadBalancerSourceRanges*; 10 externalName;"
    " 11 externalTrafficPolicy; 12 healthCheckNodePort:int; 13 publishNotReadyAddresses:bool;"
    " 14 sessionAffinityConfig:SessionAffinityConfig; 19 ipFamilies*; 17 ipFamilyPolicy?;"
    " 20 allocateLoadBalancerNodePorts:bool?; 21 loadBalancerClass?; 22 internalTrafficPolicy?;"
    " 23 trafficDistribution?",
    "ServicePort": "1 name; 2 protocol; 6 appProtocol?; 3 port:int!; 4 targetPort:intstr; 5 nodePort:int",
    "SessionAffinityConfig": "1 clientIP:ClientIPConfig",
    "ClientIPConfig": "1 timeoutSeconds:int?",
    "ServiceStatus": "1 loadBalancer:LoadBalancerStatus; 2 conditions*:Condition",
    "LoadBalancerStatus": "1 ingress*:LoadBalancerIngress",
    "LoadBalancerIngress": "1 ip; 2 hostname; 3 ipMode?; 4 ports*:PortStatus",
    "PortStatus": "1 port:int!; 2 protocol!; 3 error?",
    "Pod": "1 metadata:ObjectMeta; 2 spec:PodSpec; 3 status:PodStatus",
    "PodStatus": "1 phase; 3 message; 4 reason; 11 nominatedNodeName; 5 hostIP; 6 podIP; 7 startTime:time; 9 qosClass",
    "PodTemplateSpec": "1 metadata:ObjectMeta; 2 spec:PodSpec",
    "PodSpec": "1 volumes*:Volume; 20 initContainers*:Container; 2 containers*:Container!;"
    " 34 ephemeralContainers*:EphemeralContainer; 3 restartPolicy; 4 terminationGracePeriodSeconds:int?;"
    " 5 activeDeadlineSeconds:int?; 6 dnsPolicy; 7 nodeSelector{}; 8 serviceAccountName; 9 serviceAccount;"
    " 21 automountServiceAccountToken:bool?; 10 nodeName; 11 hostNetwork:bool; 12 hostPID:bool; 13 hostIPC:bool;"
    " 27 shareProcessNamespace:bool?; 14 securityContext:PodSecurityContext;"
    " 15 imagePullSecrets*:LocalObjectReference; 16 hostname; 17 subdomain; 18 affinity:Affinity;"
    " 19 schedulerName; 22 tolerations*:Toleration; 23 hostAliases*:HostAlias; 24 priorityClassName;"
    " 25 priority:int?; 26 dnsConfig:PodDNSConfig; 28 readinessGates*:PodReadinessGate; 29 runtimeClassName?;"
    " 30 enableServiceLinks:bool?; 31 preemptionPolicy?; 32 overhead{}:qty;"
    " 33 topologySpreadConstraints*:TopologySpreadConstraint; 35 setHostnameAsFQDN:bool?; 36 os:PodOS;"
    " 37 hostUsers:bool?; 38 schedulingGates*:PodSchedulingGate",
    "PodOS": "1 name!",
    "PodSchedulingGate": "1 name!",
    "PodReadinessGate": "1 conditionType!",
    "HostAlias": "1 ip; 2 hostnames*",
    "PodDNSConfig": "1 nameservers*; 2 searches*; 3 options*:PodDNSConfigOption",
    "PodDNSConfigOption": "1 name; 2 value?",
    "Container": "1 name!; 2 image; 3 command*; 4 args*; 5 workingDir; 6 ports*:ContainerPort;"
    " 19 envFrom*:EnvFromSource; 7 env*:EnvVar; 8 resources:ResourceRequirements;"
    " 23 resizePolicy*:ContainerResizePolicy; 24 restartPolicy?; 9 volumeMounts*:VolumeMount;"
    " 21 volumeDevices*:VolumeDevice; 10 livenessProbe:Probe; 11 readinessProbe:Probe; 22 startupProbe:Probe;"
    " 12 lifecycle:Lifecycle; 13 terminationMessagePath; 20 terminationMessagePolicy; 14 imagePullPolicy;"
    " 15 securityContext:SecurityContext; 16 stdin:bool; 17 stdinOnce:bool; 18 tty:bool",
    "EphemeralContainer": "1 ^ephemeralContainerCommon:Container; 2 targetContainerName",
    "ContainerResizePolicy": "1 resourceName!; 2 restartPolicy!",
    "ContainerPort": "1 name; 2 hostPort:int; 3 containerPort:int!; 4 protocol; 5 hostIP",
    "EnvFromSource": "1 prefix; 2 configMapRef:ConfigMapEnvSource; 3 secretRef:SecretEnvSource",
    "ConfigMapEnvSource": "1 ^localObjectReference:LocalObjectReference; 2 optional:bool?",
    "SecretEnvSource": "1 ^localObjectReference:LocalObjectReference; 2 optional:bool?",
    "EnvVar": "1 name!; 2 value; 3 valueFrom:EnvVarSource",
    "EnvVarSource": "1 fieldRef:ObjectFieldSelector; 2 resourceFieldRef:ResourceFieldSelector;"
    " 3 configMapKeyRef:ConfigMapKeySelector; 4 secretKeyRef:SecretKeySelector",
    "ObjectFieldSelector": "1 apiVersion; 2 fieldPath!",
    "ResourceFieldSelector": "1 containerName; 2 resource!; 3 divisor:qty",
    "ConfigMapKeySelector": "1 ^localObjectReference:LocalObjectReference; 2 key!; 3 optional:bool?",
    "SecretKeySelector": "1 ^localObjectReference:LocalObjectReference; 2 key!; 3 optional:bool?",
    "ResourceRequirements": "1 limits{}:qty; 2 requests{}:qty; 3 claims*:ResourceClaim",
    "ResourceClaim": "1 name!; 2 request",
    "VolumeMount": "1 name!; 2 readOnly:bool; 7 recursiveReadOnly?; 3 mountPath!; 4 subPath;"
    " 5 mountPropagation?; 6 subPathExpr",
    "VolumeDevice": "1 name!; 2 devicePath!",
    "Probe": "1 ^handler:ProbeHandler; 2 initialDelaySeconds:int; 3 timeoutSeconds:int; 4 periodSeconds:int;"
    " 5 successThreshold:int; 6 failureThreshold:int; 7 terminationGracePeriodSeconds:int?",
    "ProbeHandler": "1 exec:ExecAction; 2 httpGet:HTTPGetAction; 3 tcpSocket:TCPSocketAction; 4 grpc:GRPCAction",
    "LifecycleHandler": "1 exec:ExecAction; 2 httpGet:HTTPGetAction; 3 tcpSocket:TCPSocketAction;"
    " 4 sleep:SleepAction",
    "Lifecycle": "1 postStart:LifecycleHandler; 2 preStop:LifecycleHandler; 3 stopSignal?",
    "ExecAction": "1 command*",
    "HTTPGetAction": "1 path; 2 port:intstr!; 3 host; 4 scheme; 5 httpHeaders*:HTTPHeader",
    "HTTPHeader": "1 name!; 2 value!",
    "TCPSocketAction": "1 port:intstr!; 2 host",
    "GRPCAction": "1 port:int!; 2 service?",
    "SleepAction": "1 seconds:int!",
    "SecurityContext": "1 capabilities:Capabilities; 2 privileged:bool?; 3 seLinuxOptions:SELinuxOptions;"
    " 10 windowsOptions:WindowsSecurityContextOptions; 4 runAsUser:int?; 8 runAsGroup:int?;"
    " 5 runAsNonRoot:bool?; 6 readOnlyRootFilesystem:bool?; 7 allowPrivilegeEscalation:bool?; 9 procMount?;"
    " 11 seccompProfile:SeccompProfile; 12 appArmorProfile:AppArmorProfile",
    "PodSecurityContext": "1 seLinuxOptions:SELinuxOptions; 8 windowsOptions:WindowsSecurityContextOptions;"
    " 2 runAsUser:int?; 6 runAsGroup:int?; 3 runAsNonRoot:bool?; 4 supplementalGroups*:int;"
    " 12 supplementalGroupsPolicy?; 5 fsGroup:int?; 7 sysctls*:Sysctl; 9 fsGroupChangePolicy?;"
    " 10 seccompProfile:SeccompProfile; 11 appArmorProfile:AppArmorProfile; 13 seLinuxChangePolicy?",
    "Capabilities": "1 add*; 2 drop*",
    "SELinuxOptions": "1 user; 2 role; 3 type; 4 level",
    "WindowsSecurityContextOptions": "1 gmsaCredentialSpecName?; 2 gmsaCredentialSpec?; 3 runAsUserName?;"
    " 4 hostProcess:bool?",
    "SeccompProfile": "1 type!; 2 localhostProfile?",
    "AppArmorProfile": "1 type!; 2 localhostProfile?",
    "Sysctl": "1 name!; 2 value!",
    "Toleration": "1 key; 2 operator; 3 value; 4 effect; 5 tolerationSeconds:int?",
    "Affinity": "1 nodeAffinity:NodeAffinity; 2 podAffinity:PodAffinity; 3 podAntiAffinity:PodAntiAffinity",
    "NodeAffinity": "1 requiredDuringSchedulingIgnoredDuringExecution:NodeSelector;"
    " 2 preferredDuringSchedulingIgnoredDuringExecution*:PreferredSchedulingTerm",
    "NodeSelector": "1 nodeSelectorTerms*:NodeSelectorTerm!",
    "NodeSelectorTerm": "1 matchExpressions*:NodeSelectorRequirement; 2 matchFields*:NodeSelectorRequirement",
    "NodeSelectorRequirement": "1 key!; 2 operator!; 3 values*",
    "PreferredSchedulingTerm": "1 weight:int!; 2 preference:NodeSelectorTerm!",
    "PodAffinity": "1 requiredDuringSchedulingIgnoredDuringExecution*:PodAffinityTerm;"
    " 2 preferredDuringSchedulingIgnoredDuringExecution*:WeightedPodAffinityTerm",
    "PodAntiAffinity": "1 requiredDuringSchedulingIgnoredDuringExecution*:PodAffinityTerm;"
    " 2 preferredDuringSchedulingIgnoredDuringExecution*:WeightedPodAffinityTerm",
    "PodAffinityTerm": "1 labelSelector:LabelSelector; 2 namespaces*; 3 topologyKey!;"
    " 4 namespaceSelector:LabelSelector; 5 matchLabelKeys*; 6 mismatchLabelKeys*",
    "WeightedPodAffinityTerm": "1 weight:int!; 2 podAffinityTerm:PodAffinityTerm!",
    "TopologySpreadConstraint": "1 maxSkew:int!; 2 topologyKey!; 3 whenUnsatisfiable!;"
    " 4 labelSelector:LabelSelector; 5 minDomains:int?; 6 nodeAffinityPolicy?; 7 nodeTaintsPolicy?;"
    " 8 matchLabelKeys*",
    "Volume": "1 name!; 2 ^volumeSource:VolumeSource",
    "VolumeSource": "1 hostPath:HostPathVolumeSource; 2 emptyDir:EmptyDirVolumeSource; 6 secret:SecretVolumeSource;"
    " 10 persistentVolumeClaim:PersistentVolumeClaimVolumeSource; 16 downwardAPI:DownwardAPIVolumeSource;"
    " 19 configMap:ConfigMapVolumeSource; 26 projected:ProjectedVolumeSource; 28 csi:CSIVolumeSource;"
    " 7 nfs:NFSVolumeSource",
    "HostPathVolumeSource": "1 path!; 2 type?",
    "EmptyDirVolumeSource": "1 medium; 2 sizeLimit:qty",
    "NFSVolumeSource": "1 server!; 2 path!; 3 readOnly:bool",
    "SecretVolumeSource": "1 secretName; 2 items*:KeyToPath; 3 defaultMode:int?; 4 optional:bool?",
    "ConfigMapVolumeSource": "1 ^localObjectReference:LocalObjectReference; 2 items*:KeyToPath;"
    " 3 defaultMode:int?; 4 optional:bool?",
    "PersistentVolumeClaimVolumeSource": "1 claimName!; 2 readOnly:bool",
    "DownwardAPIVolumeSource": "1 items*:DownwardAPIVolumeFile; 2 defaultMode:int?",
    "DownwardAPIVolumeFile": "1 path!; 2 fieldRef:ObjectFieldSelector; 3 resourceFieldRef:ResourceFieldSelector;"
    " 4 mode:int?",
    "KeyToPath": "1 key!; 2 path!; 3 mode:int?",
    "ProjectedVolumeSource": "1 sources*:VolumeProjection; 2 defaultMode:int?",
    "VolumeProjection": "1 secret:SecretProjection; 2 downwardAPI:DownwardAPIProjection;"
    " 3 configMap:ConfigMapProjection; 4 serviceAccountToken:ServiceAccountTokenProjection",
    "SecretProjection": "1 ^localObjectReference:LocalObjectReference; 2 items*:KeyToPath; 4 optional:bool?",
    "ConfigMapProjection": "1 ^localObjectReference:LocalObjectReference; 2 items*:KeyToPath; 4 optional:bool?",
    "DownwardAPIProjection": "1 items*:DownwardAPIVolumeFile",
    "ServiceAccountTokenProjection": "1 audience; 2 expirationSeconds:int?; 3 path!",
    "CSIVolumeSource": "1 driver!; 2 readOnly:bool?; 3 fsType?; 4 volumeAttributes{};"
    " 5 nodePublishSecretRef:LocalObjectReference",
}

_APPS = {
    "Deployment": "1 metadata:ObjectMeta; 2 spec:DeploymentSpec; 3 status:DeploymentStatus",
    "DeploymentSpec": "1 replicas:int?; 2 selector:LabelSelector; 3 template:PodTemplateSpec!;"
    " 4 strategy:DeploymentStrategy; 5 minReadySeconds:int; 6 revisionHistoryLimit:int?; 7 paused:bool;"
    " 9 progressDeadlineSeconds:int?",
    "DeploymentStrategy": "1 type; 2 rollingUpdate:RollingUpdateDeployment",
    "RollingUpdateDeployment": "1 maxUnavailable:intstr?; 2 maxSurge:intstr?",
    "DeploymentStatus": "1 observedGeneration:int; 2 replicas:int; 3 updatedReplicas:int; 7 readyReplicas:int;"
    " 4 availableReplicas:int; 5 unavailableReplicas:int",
}

_BATCH = {
    "Job": "1 metadata:ObjectMeta; 2 spec:JobSpec; 3 status:JobStatus",
    "JobSpec": "1 parallelism:int?; 2 completions:int?; 3 activeDeadlineSeconds:int?;"
    " 11 podFailurePolicy:PodFailurePolicy; 16 successPolicy:SuccessPolicy; 7 backoffLimit:int?;"
    " 12 backoffLimitPerIndex:int?; 13 maxFailedIndexes:int?; 4 selector:LabelSelector; 5 manualSelector:bool?;"
    " 6 template:PodTemplateSpec!; 8 ttlSecondsAfterFinished:int?; 9 completionMode?; 10 suspend:bool?;"
    " 14 podReplacementPolicy?; 15 managedBy?",
    "PodFailurePolicy": "1 rules*:PodFailurePolicyRule!",
    "PodFailurePolicyRule": "1 action!; 2 onExitCodes:PodFailurePolicyOnExitCodesRequirement;"
    " 3 onPodConditions*:PodFailurePolicyOnPodConditionsPattern",
    "PodFailurePolicyOnExitCodesRequirement": "1 containerName?; 2 operator!; 3 values*:int!",
    "PodFailurePolicyOnPodConditionsPattern": "1 type!; 2 status!",
    "SuccessPolicy": "1 rules*:SuccessPolicyRule!",
    "SuccessPolicyRule": "1 succeededIndexes?; 2 succeededCount:int?",
    "JobStatus": "2 startTime:time; 3 completionTime:time; 4 active:int; 5 succeeded:int; 6 failed:int",
    "CronJob": "1 metadata:ObjectMeta; 2 spec:CronJobSpec; 3 status:CronJobStatus",
    "CronJobSpec": "1 schedule!; 8 timeZone?; 2 startingDeadlineSeconds:int?; 3 concurrencyPolicy; 4 suspend:bool?;"
    " 5 jobTemplate:JobTemplateSpec!; 6 successfulJobsHistoryLimit:int?; 7 failedJobsHistoryLimit:int?",
    "JobTemplateSpec": "1 metadata:ObjectMeta; 2 spec:JobSpec",
    "CronJobStatus": "1 active*:ObjectReference; 4 lastScheduleTime:time; 5 lastSuccessfulTime:time",
}

_RBAC = {
    "Role": "1 metadata:ObjectMeta; 2 rules*:PolicyRule!",
    "ClusterRole": "1 metadata:ObjectMeta; 2 rules*:PolicyRule!; 3 aggregationRule:AggregationRule",
    "AggregationRule": "1 clusterRoleSelectors*:LabelSelector",
    "PolicyRule": "1 verbs*!; 2 apiGroups*; 3 resources*; 4 resourceNames*; 5 nonResourceURLs*",
    "RoleBinding": "1 metadata:ObjectMeta; 2 subjects*:Subject; 3 roleRef:RoleRef!",
    "ClusterRoleBinding": "1 metadata:ObjectMeta; 2 subjects*:Subject; 3 roleRef:RoleRef!",
    "Subject": "1 kind!; 2 apiGroup; 3 name!; 4 namespace",
    "RoleRef": "1 apiGroup!; 2 kind!; 3 name!",
}

_OTHER = {
    "CertificateSigningRequest": "1 metadata:ObjectMeta; 2 spec:CertificateSigningRequestSpec;"
    " 3 status:CertificateSigningRequestStatus",
    "CertificateSigningRequestSpec": "1 request:bytes; 7 signerName; 8 expirationSeconds:int?; 5 usages*;"
    " 2 username; 3 uid; 4 groups*; 6 extra{}:ExtraValue",
    "ExtraValue": "1 items*",
    "CertificateSigningRequestStatus": "1 conditions*:CertificateSigningRequestCondition; 2 certificate:bytes",
    "CertificateSigningRequestCondition": "1 type!; 6 status!; 2 reason; 3 message; 4 lastUpdateTime:time;"
    " 5 lastTransitionTime:time",
    "PriorityClass": "1 metadata:ObjectMeta; 2 value:int!; 3 globalDefault:bool; 4 description; 5 preemptionPolicy?",
    "PodDisruptionBudget": "1 metadata:ObjectMeta; 2 spec:PodDisruptionBudgetSpec; 3 status:PodDisruptionBudgetStatus",
    "PodDisruptionBudgetSpec": "1 minAvailable:intstr?; 2 selector:LabelSelector; 3 maxUnavailable:intstr?;"
    " 4 unhealthyPodEvictionPolicy?",
    "PodDisruptionBudgetStatus": "1 observedGeneration:int; 3 disruptionsAllowed:int!; 4 currentHealthy:int!;"
    " 5 desiredHealthy:int!; 6 expectedPods:int!",
    "Eviction": "1 metadata:ObjectMeta; 2 deleteOptions:DeleteOptions",
    "SelfSubjectAccessReview": "1 metadata:ObjectMeta; 2 spec:SelfSubjectAccessReviewSpec!;"
    " 3 status:SubjectAccessReviewStatus",
    "SelfSubjectAccessReviewSpec": "1 resourceAttributes:ResourceAttributes;"
    " 2 nonResourceAttributes:NonResourceAttributes",
    "ResourceAttributes": "1 namespace; 2 verb; 3 group; 4 version; 5 resource; 6 subresource; 7 name",
    "NonResourceAttributes": "1 path; 2 verb",
    "SubjectAccessReviewStatus": "1 allowed:bool!; 4 denied:bool; 2 reason; 3 evaluationError",
    "SelfSubjectRulesReview": "1 metadata:ObjectMeta; 2 spec:SelfSubjectRulesReviewSpec!",
    "SelfSubjectRulesReviewSpec": "1 namespace",
    "SelfSubjectReview": "1 metadata:ObjectMeta; 2 status:SelfSubjectReviewStatus",
    "SelfSubjectReviewStatus": "1 userInfo:UserInfo",
    "UserInfo": "1 username; 2 uid; 3 groups*",
    "ResourceQuota": "1 metadata:ObjectMeta; 2 spec:ResourceQuotaSpec; 3 status:ResourceQuotaStatus",
    "ResourceQuotaSpec": "1 hard{}:qty; 2 scopes*; 3 scopeSelector:ScopeSelector",
    "ScopeSelector": "1 matchExpressions*:ScopedResourceSelectorRequirement",
    "ScopedResourceSelectorRequirement": "1 scopeName; 2 operator; 3 values*",
    "ResourceQuotaStatus": "1 hard{}:qty; 2 used{}:qty",
    "Ingress": "1 metadata:ObjectMeta; 2 spec:IngressSpec",
    "IngressSpec": "4 ingressClassName?; 1 defaultBackend:IngressBackend; 2 tls*:IngressTLS; 3 rules*:IngressRule",
    "IngressBackend": "4 service:IngressServiceBackend; 3 resource:TypedLocalObjectReference",
    "IngressServiceBackend": "1 name!; 2 port:ServiceBackendPort",
    "ServiceBackendPort": "1 name; 2 number:int",
    "TypedLocalObjectReference": "1 apiGroup?; 2 kind!; 3 name!",
    "IngressTLS": "1 hosts*; 2 secretName",
    "IngressRule": "1 host; 2 ^ingressRuleValue:IngressRuleValue",
    "IngressRuleValue": "1 http:HTTPIngressRuleValue",
    "HTTPIngressRuleValue": "1 paths*:HTTPIngressPath!",
    "HTTPIngressPath": "1 path; 3 pathType?; 2 backend:IngressBackend!",
    "TokenRequest": "1 metadata:ObjectMeta; 2 spec:TokenRequestSpec!",
    "TokenRequestSpec": "1 audiences*; 4 expirationSeconds:int?; 3 boundObjectRef:BoundObjectReference",
    "BoundObjectReference": "1 kind; 2 apiVersion; 3 name; 4 uid",
    "HorizontalPodAutoscalerV1": "1 metadata:ObjectMeta; 2 spec:HorizontalPodAutoscalerSpecV1",
    "HorizontalPodAutoscalerSpecV1": "1 scaleTargetRef:CrossVersionObjectReference; 2 minReplicas:int?;"
    " 3 maxReplicas:int!; 4 targetCPUUtilizationPercentage:int?",
    "CrossVersionObjectReference": "1 kind!; 2 name!; 3 apiVersion",
    "Scale": "1 metadata:ObjectMeta; 2 spec:ScaleSpec; 3 status:ScaleStatus",
    "ScaleSpec": "1 replicas:int",
    "ScaleStatus": "1 replicas:int!; 2 selector",
}

_SCALARS = {"str", "bool", "int", "bytes", "time", "qty", "intstr", "raw"}


class _Field:
    __slots__ = ("name", "type", "repeated", "map", "pointer", "always", "inline")

    def __init__(self, spec: str) -> None:
        name, _, typ = spec.partition(":")
        self.pointer = name.endswith("?") or typ.endswith("?")
        self.always = name.endswith("!") or typ.endswith("!")
        name, typ = name.rstrip("?!"), typ.rstrip("?!")
        self.repeated = name.endswith("*")
        self.map = name.endswith("{}")
        name = name.rstrip("*").removesuffix("{}")
        self.inline = name.startswith("^")
        self.name = name.lstrip("^")
        self.type = typ or "str"


def _parse_schema(*tables: dict[str, str]) -> dict[str, dict[int, _Field]]:
    schema: dict[str, dict[int, _Field]] = {}
    for table in tables:
        for message, text in table.items():
            fields: dict[int, _Field] = {}
            for entry in text.split(";"):
                num, spec = entry.split(None, 1)
                fields[int(num)] = _Field(spec.strip())
            schema[message] = fields
    for message, fields in schema.items():
        for f in fields.values():
            if f.type not in _SCALARS and f.type not in schema:
                raise AssertionError(f"protobuf schema: {message}.{f.name} refers to unknown message {f.type}")
    return schema


SCHEMA = _parse_schema(_META, _CORE, _APPS, _BATCH, _RBAC, _OTHER)

#: apiVersion/kind -> top-level message. Keyed by kind; the group is checked by the caller's routing.
KINDS: dict[str, str] = {
    name: name
    for name in (
        "Namespace", "ConfigMap", "Secret", "ServiceAccount", "Service", "Pod", "Binding", "Deployment", "Job",
        "CronJob", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "PriorityClass",
        "PodDisruptionBudget", "Eviction", "SelfSubjectAccessReview", "SelfSubjectRulesReview", "SelfSubjectReview",
        "Scale", "Ingress", "TokenRequest", "ResourceQuota", "CertificateSigningRequest",
        "DeleteOptions",
    )
}

#: Kinds whose message differs by version: kind -> apiVersion -> message.
VERSIONED: dict[str, dict[str, str]] = {
    "HorizontalPodAutoscaler": {"autoscaling/v1": "HorizontalPodAutoscalerV1"},
}

_GO_ZERO_TIME = -62135596800  # time.Time{}.Unix(): a zero metav1.Time, JSON null


# --------------------------------------------------------------------------- wire format


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise ProtobufError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ProtobufError("varint longer than 10 bytes")


def _fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) in order; length-delimited values stay bytes."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    end = len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        num, wire = key >> 3, key & 7
        if num == 0:
            raise ProtobufError("field number 0 is invalid")
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            size, pos = _varint(buf, pos)
            if pos + size > end:
                raise ProtobufError(f"field {num}: length {size} runs past the end of the message")
            value = buf[pos:pos + size]
            pos += size
        elif wire == 1:
            if pos + 8 > end:
                raise ProtobufError(f"field {num}: truncated 64-bit value")
            value = int.from_bytes(buf[pos:pos + 8], "little")
            pos += 8
        elif wire == 5:
            if pos + 4 > end:
                raise ProtobufError(f"field {num}: truncated 32-bit value")
            value = int.from_bytes(buf[pos:pos + 4], "little")
            pos += 4
        else:
            raise ProtobufError(f"field {num}: unsupported wire type {wire}")
        out.append((num, wire, value))
    return out


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


# --------------------------------------------------------------------------- typed decoding


def _rfc3339(seconds: int, nanos: int = 0) -> str | None:
    if seconds == _GO_ZERO_TIME and not nanos:
        return None
    dt = datetime.fromtimestamp(seconds, tz=timezone.utc)
    if nanos:
        return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def _as_text(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ProtobufError(f"{where}: string is not valid UTF-8") from err


def _scalar(f: _Field, wire: int, value: Any, where: str) -> Any:
    typ = f.type
    if typ == "str":
        if wire != 2:
            raise ProtobufError(f"{where}: expected a string, got wire type {wire}")
        return _as_text(value, where)
    if typ == "bool":
        if wire != 0:
            raise ProtobufError(f"{where}: expected a bool, got wire type {wire}")
        return bool(value)
    if typ == "int":
        if wire != 0:
            raise ProtobufError(f"{where}: expected an integer, got wire type {wire}")
        return _signed(value)
    if wire != 2:
        raise ProtobufError(f"{where}: expected a length-delimited value, got wire type {wire}")
    if typ == "bytes":
        return base64.b64encode(value).decode("ascii")
    if typ == "time":
        if not value:
            return None  # metav1.Time marshals its zero value as an empty message: JSON null
        secs = nanos = 0
        for num, w, v in _fields(value):
            if num == 1 and w == 0:
                secs = _signed(v)
            elif num == 2 and w == 0:
                nanos = _signed(v)
        return _rfc3339(secs, nanos)
    if typ == "qty":
        for num, w, v in _fields(value):
            if num == 1 and w == 2:
                return _as_text(v, where)
        return "0"
    if typ == "intstr":
        kind, ival, sval = 0, 0, ""
        for num, w, v in _fields(value):
            if num == 1 and w == 0:
                kind = v
            elif num == 2 and w == 0:
                ival = _signed(v)
            elif num == 3 and w == 2:
                sval = _as_text(v, where)
        return sval if kind == 1 else ival
    if typ == "raw":
        if not value:
            return None
        try:
            return json.loads(value)
        except ValueError as err:
            raise ProtobufError(f"{where}: embedded raw value is not JSON: {err}") from err
    raise AssertionError(typ)


def _is_zero(value: Any) -> bool:
    return value is None or value == "" or value is False or (type(value) is int and value == 0)


def decode_message(message: str, buf: bytes, where: str = "") -> dict[str, Any]:
    """Decode one message of :data:`SCHEMA` into its JSON-shaped dict."""
    fields = SCHEMA[message]
    where = where or message
    out: dict[str, Any] = {}
    for num, wire, value in _fields(buf):
        f = fields.get(num)
        if f is None:
            continue  # unknown (newer) field: skipped, as proto readers do
        path = f"{where}.{f.name}"
        if f.map:
            if wire != 2:
                raise ProtobufError(f"{path}: map entry must be length-delimited")
            key, val = "", None
            for n, w, v in _fields(value):
                if n == 1 and w == 2:
                    key = _as_text(v, path)
                elif n == 2:
                    val = _decode_value(f, w, v, f"{path}[{key}]")
            if val is None:
                val = "" if f.type in ("str", "bytes") else ({} if f.type not in _SCALARS else None)
            out.setdefault(f.name, {})[key] = val
            continue
        if f.repeated and f.type in ("int", "bool") and wire == 2:
            items = []
            pos = 0
            while pos < len(value):
                v, pos = _varint(value, pos)
                items.append(_signed(v) if f.type == "int" else bool(v))
            out.setdefault(f.name, []).extend(items)
            continue
        decoded = _decode_value(f, wire, value, path)
        if f.repeated:
            out.setdefault(f.name, []).append(decoded)
        elif f.inline:
            if isinstance(decoded, dict):
                out.update(decoded)
        else:
            out[f.name] = decoded
    for f in fields.values():
        if f.repeated or f.map or f.inline or f.pointer or f.always or f.type not in _SCALARS:
            continue
        if f.name in out and _is_zero(out[f.name]):
            del out[f.name]
    return out


def _decode_value(f: _Field, wire: int, value: Any, path: str) -> Any:
    if f.type in _SCALARS:
        return _scalar(f, wire, value, path)
    if wire != 2:
        raise ProtobufError(f"{path}: expected an embedded message, got wire type {wire}")
    return decode_message(f.type, value, path)


def decode(body: bytes) -> dict[str, Any]:
    """Decode a ``k8s\\x00`` + runtime.Unknown body into the object dict, with apiVersion and kind."""
    if not body.startswith(MAGIC):
        raise ProtobufError("protobuf body does not start with the Kubernetes magic prefix k8s\\x00")
    api_version = kind = ""
    raw = b""
    encoding = ""
    for num, wire, value in _fields(body[len(MAGIC):]):
        if num == 1 and wire == 2:
            for n, w, v in _fields(value):
                if n == 1 and w == 2:
                    api_version = _as_text(v, "typeMeta.apiVersion")
                elif n == 2 and w == 2:
                    kind = _as_text(v, "typeMeta.kind")
        elif num == 2 and wire == 2:
            raw = value
        elif num == 3 and wire == 2:
            encoding = _as_text(value, "contentEncoding")
    if encoding:
        raise ProtobufError(f"unsupported protobuf content encoding {encoding!r}")
    if not kind:
        raise ProtobufError("protobuf body carries no kind in its typeMeta")
    message = KINDS.get(kind) if kind not in VERSIONED else VERSIONED[kind].get(api_version)
    if message is None:
        raise ProtobufError(f"no protobuf decoder for kind {kind!r} ({api_version}); send JSON instead")
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    obj.update(decode_message(message, raw, kind))
    return obj
