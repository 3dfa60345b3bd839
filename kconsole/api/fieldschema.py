"""Every field of the kinds kconsole serves, for ``fieldValidation`` (generated from the official
Python client's models; a superset of 1.32's fields, so no field kubectl 1.32 sends is refused).

``TYPES[type]`` is ``"field field:T ..."``: a bare name is a string; ``T`` is another type's name or a
scalar code (``i`` int32, ``l`` int64, ``b`` boolean, ``n`` number, ``t`` time, ``o`` free-form,
``s`` string, ``m`` MicroTime, ``q`` Quantity, ``x`` IntOrString, ``y`` base64 bytes), prefixed ``[]`` for a list of
them or ``{}`` for a map of them. The API's decoder (:mod:`kconsole.api.decodetypes`), its field
validation (:mod:`kconsole.api.fieldvalidation`) and the OpenAPI schemas it serves
(:mod:`kconsole.http.schemas`) all read this one table.
"""

from __future__ import annotations

KINDS: dict[str, str] = {
    "Namespace": "Namespace",
    "Node": "Node",
    "Pod": "Pod",
    "ConfigMap": "ConfigMap",
    "Secret": "Secret",
    "ServiceAccount": "ServiceAccount",
    "Service": "Service",
    "Endpoints": "Endpoints",
    "Event": "Event",
    "Deployment": "Deployment",
    "ReplicaSet": "ReplicaSet",
    "DaemonSet": "DaemonSet",
    "StatefulSet": "StatefulSet",
    "Job": "Job",
    "CronJob": "CronJob",
    "Lease": "Lease",
    "EndpointSlice": "EndpointSlice",
    "Role": "Role",
    "RoleBinding": "RoleBinding",
    "ClusterRole": "ClusterRole",
    "ClusterRoleBinding": "ClusterRoleBinding",
    "HorizontalPodAutoscaler": "HorizontalPodAutoscaler",
    "PodDisruptionBudget": "PodDisruptionBudget",
    "PriorityClass": "PriorityClass",
    "PersistentVolumeClaim": "PersistentVolumeClaim",
    "PersistentVolume": "PersistentVolume",
    "ReplicationController": "ReplicationController",
    "Ingress": "Ingress",
    "ControllerRevision": "ControllerRevision",
    "ResourceQuota": "ResourceQuota",
    "LimitRange": "LimitRange",
    "NetworkPolicy": "NetworkPolicy",
    "ComponentStatus": "ComponentStatus",
    "RuntimeClass": "RuntimeClass",
    "CertificateSigningRequest": "CertificateSigningRequest",
    "FlowSchema": "FlowSchema",
    "PriorityLevelConfiguration": "PriorityLevelConfiguration",
    "ValidatingAdmissionPolicy": "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding": "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration": "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration": "MutatingWebhookConfiguration",
}

#: Kinds whose name another group's kind also has: (group, kind) -> table type.
GROUP_KINDS: dict[tuple[str, str], str] = {
    ("events.k8s.io", "Event"): "EventsV1Event",
}


def root_type(group: str, kind: str) -> str | None:
    """The table type of ``kind`` as ``group`` serves it (None: a kind the table does not know)."""
    return GROUP_KINDS.get((group, kind)) or KINDS.get(kind)

TYPES: dict[str, str] = {
    "AWSElasticBlockStoreVolumeSource": "fsType partition:i readOnly:b volumeID",
    "Affinity": "nodeAffinity:NodeAffinity podAffinity:PodAffinity podAntiAffinity:PodAntiAffinity",
    "AggregationRule": "clusterRoleSelectors:[]LabelSelector",
    "AppArmorProfile": "localhostProfile type",
    "AttachedVolume": "devicePath name",
    "AzureDiskVolumeSource": "cachingMode diskName diskURI fsType kind readOnly:b",
    "AzureFilePersistentVolumeSource": "readOnly:b secretName secretNamespace shareName",
    "AzureFileVolumeSource": "readOnly:b secretName shareName",
    "CSIPersistentVolumeSource": "controllerExpandSecretRef:SecretReference "
                                 "controllerPublishSecretRef:SecretReference driver fsType "
                                 "nodeExpandSecretRef:SecretReference nodePublishSecretRef:SecretReference "
                                 "nodeStageSecretRef:SecretReference readOnly:b volumeAttributes:{}s volumeHandle",
    "CSIVolumeSource": "driver fsType nodePublishSecretRef:LocalObjectReference readOnly:b volumeAttributes:{}s",
    "Capabilities": "add:[]s drop:[]s",
    "CephFSPersistentVolumeSource": "monitors:[]s path readOnly:b secretFile secretRef:SecretReference user",
    "CephFSVolumeSource": "monitors:[]s path readOnly:b secretFile secretRef:LocalObjectReference user",
    "CinderPersistentVolumeSource": "fsType readOnly:b secretRef:SecretReference volumeID",
    "CinderVolumeSource": "fsType readOnly:b secretRef:LocalObjectReference volumeID",
    "ClientIPConfig": "timeoutSeconds:i",
    "ClusterRole": "aggregationRule:AggregationRule apiVersion kind metadata:ObjectMeta rules:[]PolicyRule",
    "ClusterRoleBinding": "apiVersion kind metadata:ObjectMeta roleRef:RoleRef subjects:[]Subject",
    "ClusterTrustBundleProjection": "labelSelector:LabelSelector name optional:b path signerName user:i",
    "Condition": "lastTransitionTime:t message observedGeneration:l reason status type",
    "ComponentCondition": "error message status type",
    "ComponentStatus": "apiVersion conditions:[]ComponentCondition kind metadata:ObjectMeta",
    "ConfigMap": "apiVersion binaryData:{}y data:{}s immutable:b kind metadata:ObjectMeta",
    "ConfigMapEnvSource": "name optional:b",
    "ConfigMapKeySelector": "key name optional:b",
    "ConfigMapNodeConfigSource": "kubeletConfigKey name namespace resourceVersion uid",
    "ConfigMapProjection": "items:[]KeyToPath name optional:b",
    "ConfigMapVolumeSource": "defaultMode:i defaultUser:i items:[]KeyToPath name optional:b",
    "Container": "args:[]s command:[]s env:[]EnvVar envFrom:[]EnvFromSource image imagePullPolicy "
                 "lifecycle:Lifecycle livenessProbe:Probe name ports:[]ContainerPort readinessProbe:Probe "
                 "resizePolicy:[]ContainerResizePolicy resources:ResourceRequirements restartPolicy "
                 "restartPolicyRules:[]ContainerRestartRule securityContext:SecurityContext startupProbe:Probe "
                 "stdin:b stdinOnce:b terminationMessagePath terminationMessagePolicy tty:b "
                 "volumeDevices:[]VolumeDevice volumeMounts:[]VolumeMount workingDir",
    "ContainerExtendedResourceRequest": "containerName requestName resourceName",
    "ContainerImage": "names:[]s sizeBytes:i",
    "ContainerPort": "containerPort:i hostIP hostPort:i name protocol",
    "ContainerResizePolicy": "resourceName restartPolicy",
    "ContainerResourceMetricSource": "container name target:MetricTarget",
    "ContainerResourceMetricStatus": "container current:MetricValueStatus name",
    "ContainerRestartRule": "action exitCodes:ContainerRestartRuleOnExitCodes",
    "ContainerRestartRuleOnExitCodes": "operator values:[]i",
    "ContainerState": "running:ContainerStateRunning terminated:ContainerStateTerminated "
                      "waiting:ContainerStateWaiting",
    "ContainerStateRunning": "startedAt:t",
    "ContainerStateTerminated": "containerID exitCode:i finishedAt:t message reason signal:i startedAt:t",
    "ContainerStateWaiting": "message reason",
    "ContainerStatus": "allocatedResources:{}q allocatedResourcesStatus:[]ResourceStatus containerID image "
                       "imageID lastState:ContainerState name ready:b resources:ResourceRequirements "
                       "restartCount:i started:b state:ContainerState stopSignal user:ContainerUser "
                       "volumeMounts:[]VolumeMountStatus",
    "ContainerUser": "linux:LinuxContainerUser",
    "ControllerRevision": "apiVersion data:o kind metadata:ObjectMeta revision:l",
    "CoreV1EndpointPort": "appProtocol name port:i protocol",
    "CronJob": "apiVersion kind metadata:ObjectMeta spec:CronJobSpec status:CronJobStatus",
    "CronJobSpec": "concurrencyPolicy failedJobsHistoryLimit:i jobTemplate:JobTemplateSpec schedule "
                   "startingDeadlineSeconds:l successfulJobsHistoryLimit:i suspend:b timeZone",
    "CronJobStatus": "active:[]ObjectReference lastScheduleTime:t lastSuccessfulTime:t",
    "CrossVersionObjectReference": "apiVersion kind name",
    "DaemonEndpoint": "Port:i",
    "DaemonSet": "apiVersion kind metadata:ObjectMeta spec:DaemonSetSpec status:DaemonSetStatus",
    "DaemonSetCondition": "lastTransitionTime:t message reason status type",
    "DaemonSetSpec": "minReadySeconds:i revisionHistoryLimit:i selector:LabelSelector template:PodTemplateSpec "
                     "updateStrategy:DaemonSetUpdateStrategy",
    "DaemonSetStatus": "collisionCount:i conditions:[]DaemonSetCondition currentNumberScheduled:i "
                       "desiredNumberScheduled:i numberAvailable:i numberMisscheduled:i numberReady:i "
                       "numberUnavailable:i observedGeneration:l updatedNumberScheduled:i",
    "DaemonSetUpdateStrategy": "rollingUpdate:RollingUpdateDaemonSet type",
    "Deployment": "apiVersion kind metadata:ObjectMeta spec:DeploymentSpec status:DeploymentStatus",
    "DeploymentCondition": "lastTransitionTime:t lastUpdateTime:t message reason status type",
    "DeploymentSpec": "minReadySeconds:i paused:b progressDeadlineSeconds:i replicas:i revisionHistoryLimit:i "
                      "selector:LabelSelector strategy:DeploymentStrategy template:PodTemplateSpec",
    "DeploymentStatus": "availableReplicas:i collisionCount:i conditions:[]DeploymentCondition "
                        "observedGeneration:l readyReplicas:i replicas:i terminatingReplicas:i "
                        "unavailableReplicas:i updatedReplicas:i",
    "DeploymentStrategy": "rollingUpdate:RollingUpdateDeployment type",
    "DiscoveryV1EndpointPort": "appProtocol name port:i protocol",
    "DownwardAPIProjection": "items:[]DownwardAPIVolumeFile",
    "DownwardAPIVolumeFile": "fieldRef:ObjectFieldSelector mode:i path resourceFieldRef:ResourceFieldSelector "
                             "user:i",
    "DownwardAPIVolumeSource": "defaultMode:i defaultUser:i items:[]DownwardAPIVolumeFile",
    "EmptyDirVolumeSource": "medium mode:i sizeLimit:q",
    "Endpoint": "addresses:[]s conditions:EndpointConditions deprecatedTopology:{}s hints:EndpointHints hostname "
                "nodeName targetRef:ObjectReference zone",
    "EndpointAddress": "hostname ip nodeName targetRef:ObjectReference",
    "EndpointConditions": "ready:b serving:b terminating:b",
    "EndpointHints": "forNodes:[]ForNode forZones:[]ForZone",
    "EndpointSlice": "addressType apiVersion endpoints:[]Endpoint kind metadata:ObjectMeta "
                     "ports:[]DiscoveryV1EndpointPort",
    "EndpointSubset": "addresses:[]EndpointAddress notReadyAddresses:[]EndpointAddress ports:[]CoreV1EndpointPort",
    "Endpoints": "apiVersion kind metadata:ObjectMeta subsets:[]EndpointSubset",
    "EnvFromSource": "configMapRef:ConfigMapEnvSource prefix secretRef:SecretEnvSource",
    "EnvVar": "name value valueFrom:EnvVarSource",
    "EnvVarSource": "configMapKeyRef:ConfigMapKeySelector fieldRef:ObjectFieldSelector fileKeyRef:FileKeySelector "
                    "resourceFieldRef:ResourceFieldSelector secretKeyRef:SecretKeySelector",
    "EphemeralContainer": "args:[]s command:[]s env:[]EnvVar envFrom:[]EnvFromSource image imagePullPolicy "
                          "lifecycle:Lifecycle livenessProbe:Probe name ports:[]ContainerPort "
                          "readinessProbe:Probe resizePolicy:[]ContainerResizePolicy "
                          "resources:ResourceRequirements restartPolicy restartPolicyRules:[]ContainerRestartRule "
                          "securityContext:SecurityContext startupProbe:Probe stdin:b stdinOnce:b "
                          "targetContainerName terminationMessagePath terminationMessagePolicy tty:b "
                          "volumeDevices:[]VolumeDevice volumeMounts:[]VolumeMount workingDir",
    "EphemeralVolumeSource": "volumeClaimTemplate:PersistentVolumeClaimTemplate",
    "Event": "action apiVersion count:i eventTime:m firstTimestamp:t involvedObject:ObjectReference kind "
             "lastTimestamp:t message metadata:ObjectMeta reason related:ObjectReference reportingComponent "
             "reportingInstance series:EventSeries source:EventSource type",
    "EventSeries": "count:i lastObservedTime:m",
    "EventSource": "component host",
    "EvictionResponder": "name priority:i",
    "ExecAction": "command:[]s",
    "ExternalMetricSource": "metric:MetricIdentifier target:MetricTarget",
    "ExternalMetricStatus": "current:MetricValueStatus metric:MetricIdentifier",
    "FCVolumeSource": "fsType lun:i readOnly:b targetWWNs:[]s wwids:[]s",
    "FileKeySelector": "key optional:b path volumeName",
    "FlexPersistentVolumeSource": "driver fsType options:{}s readOnly:b secretRef:SecretReference",
    "FlexVolumeSource": "driver fsType options:{}s readOnly:b secretRef:LocalObjectReference",
    "FlockerVolumeSource": "datasetName datasetUUID",
    "ForNode": "name",
    "ForZone": "name",
    "GCEPersistentDiskVolumeSource": "fsType partition:i pdName readOnly:b",
    "GRPCAction": "mode port:i service",
    "GitRepoVolumeSource": "directory repository revision",
    "GlusterfsPersistentVolumeSource": "endpoints endpointsNamespace path readOnly:b",
    "GlusterfsVolumeSource": "endpoints path readOnly:b",
    "HPAScalingPolicy": "periodSeconds:i type value:i",
    "HPAScalingRules": "policies:[]HPAScalingPolicy selectPolicy stabilizationWindowSeconds:i tolerance",
    "HTTPGetAction": "host httpHeaders:[]HTTPHeader path port:x protocol scheme",
    "HTTPHeader": "name value",
    "HTTPIngressPath": "backend:IngressBackend path pathType",
    "HTTPIngressRuleValue": "paths:[]HTTPIngressPath",
    "HorizontalPodAutoscaler": "apiVersion kind metadata:ObjectMeta spec:HorizontalPodAutoscalerSpec "
                               "status:HorizontalPodAutoscalerStatus",
    "HorizontalPodAutoscalerBehavior": "scaleDown:HPAScalingRules scaleUp:HPAScalingRules",
    "HorizontalPodAutoscalerCondition": "lastTransitionTime:t message observedGeneration:i reason status type",
    "HorizontalPodAutoscalerSpec": "behavior:HorizontalPodAutoscalerBehavior maxReplicas:i metrics:[]MetricSpec "
                                   "minReplicas:i scaleTargetRef:CrossVersionObjectReference",
    "HorizontalPodAutoscalerStatus": "conditions:[]HorizontalPodAutoscalerCondition currentMetrics:[]MetricStatus "
                                     "currentReplicas:i desiredReplicas:i lastScaleTime:t observedGeneration:l",
    "HostAlias": "hostnames:[]s ip",
    "HostIP": "ip",
    "HostPathVolumeSource": "path type",
    "ISCSIPersistentVolumeSource": "chapAuthDiscovery:b chapAuthSession:b fsType initiatorName iqn iscsiInterface "
                                   "lun:i portals:[]s readOnly:b secretRef:SecretReference targetPortal",
    "ISCSIVolumeSource": "chapAuthDiscovery:b chapAuthSession:b fsType initiatorName iqn iscsiInterface lun:i "
                         "portals:[]s readOnly:b secretRef:LocalObjectReference targetPortal",
    "ImageVolumeSource": "pullPolicy reference",
    "ImageVolumeStatus": "imageRef",
    "Ingress": "apiVersion kind metadata:ObjectMeta spec:IngressSpec status:IngressStatus",
    "IngressBackend": "resource:TypedLocalObjectReference service:IngressServiceBackend",
    "IngressLoadBalancerIngress": "hostname ip ports:[]IngressPortStatus",
    "IngressLoadBalancerStatus": "ingress:[]IngressLoadBalancerIngress",
    "IngressPortStatus": "error port:i protocol",
    "IngressRule": "host http:HTTPIngressRuleValue",
    "IngressServiceBackend": "name port:ServiceBackendPort",
    "IngressSpec": "defaultBackend:IngressBackend ingressClassName rules:[]IngressRule tls:[]IngressTLS",
    "IngressStatus": "loadBalancer:IngressLoadBalancerStatus",
    "IngressTLS": "hosts:[]s secretName",
    "Job": "apiVersion kind metadata:ObjectMeta spec:JobSpec status:JobStatus",
    "JobCondition": "lastProbeTime:t lastTransitionTime:t message reason status type",
    "JobSchedulingConfiguration": "disruptionMode:WorkloadPodGroupDisruptionMode "
                                  "resourceClaims:[]WorkloadPodGroupResourceClaim "
                                  "schedulingConstraints:WorkloadPodGroupSchedulingConstraints "
                                  "schedulingPolicy:WorkloadPodGroupSchedulingPolicy",
    "JobSpec": "activeDeadlineSeconds:l backoffLimit:i backoffLimitPerIndex:i completionMode completions:i "
               "managedBy manualSelector:b maxFailedIndexes:i parallelism:i podFailurePolicy:PodFailurePolicy "
               "podReplacementPolicy scheduling:JobSchedulingConfiguration selector:LabelSelector "
               "successPolicy:SuccessPolicy suspend:b template:PodTemplateSpec ttlSecondsAfterFinished:i",
    "JobStatus": "active:i completedIndexes completionTime:t conditions:[]JobCondition failed:i failedIndexes "
                 "ready:i startTime:t succeeded:i terminating:i uncountedTerminatedPods:UncountedTerminatedPods",
    "JobTemplateSpec": "metadata:ObjectMeta spec:JobSpec",
    "KeyToPath": "key mode:i path user:i",
    "LabelSelector": "matchExpressions:[]LabelSelectorRequirement matchLabels:{}s",
    "LabelSelectorRequirement": "key operator values:[]s",
    "Lease": "apiVersion kind metadata:ObjectMeta spec:LeaseSpec",
    "LeaseSpec": "acquireTime:m holderIdentity leaseDurationSeconds:i leaseTransitions:i preferredHolder "
                 "renewTime:m strategy",
    "Lifecycle": "postStart:LifecycleHandler preStop:LifecycleHandler stopSignal",
    "LifecycleHandler": "exec:ExecAction httpGet:HTTPGetAction sleep:SleepAction tcpSocket:TCPSocketAction",
    "LinuxContainerUser": "gid:l supplementalGroups:[]l uid:l",
    "LoadBalancerIngress": "hostname ip ipMode ports:[]PortStatus",
    "LoadBalancerStatus": "ingress:[]LoadBalancerIngress",
    "LocalObjectReference": "name",
    "LocalVolumeSource": "fsType path",
    "ManagedFieldsEntry": "apiVersion fieldsType fieldsV1:o manager operation subresource time:t",
    "MetricIdentifier": "name selector:LabelSelector",
    "MetricSpec": "containerResource:ContainerResourceMetricSource external:ExternalMetricSource "
                  "object:ObjectMetricSource pods:PodsMetricSource resource:ResourceMetricSource type",
    "MetricStatus": "containerResource:ContainerResourceMetricStatus external:ExternalMetricStatus "
                    "object:ObjectMetricStatus pods:PodsMetricStatus resource:ResourceMetricStatus type",
    "MetricTarget": "averageUtilization:i averageValue:q type value:q",
    "MetricValueStatus": "averageUtilization:i averageValue:q value:q",
    "ModifyVolumeStatus": "status targetVolumeAttributesClassName",
    "NFSVolumeSource": "path readOnly:b server",
    "Namespace": "apiVersion kind metadata:ObjectMeta spec:NamespaceSpec status:NamespaceStatus",
    "NamespaceCondition": "lastTransitionTime:t message reason status type",
    "NamespaceSpec": "finalizers:[]s",
    "NamespaceStatus": "conditions:[]NamespaceCondition phase",
    "Node": "apiVersion kind metadata:ObjectMeta spec:NodeSpec status:NodeStatus",
    "NodeAddress": "address type",
    "NodeAffinity": "preferredDuringSchedulingIgnoredDuringExecution:[]PreferredSchedulingTerm "
                    "requiredDuringSchedulingIgnoredDuringExecution:NodeSelector",
    "NodeAllocatableMappedResources": "name quantity",
    "NodeAllocatableOverheadResources": "name perContainer perPod",
    "NodeAllocatableResourceClaimStatus": "containers:[]s mapping:[]NodeAllocatableMappedResources "
                                          "overhead:[]NodeAllocatableOverheadResources resourceClaimName",
    "NodeCondition": "lastHeartbeatTime:t lastTransitionTime:t message reason status type",
    "NodeConfigSource": "configMap:ConfigMapNodeConfigSource",
    "NodeConfigStatus": "active:NodeConfigSource assigned:NodeConfigSource error lastKnownGood:NodeConfigSource",
    "NodeDaemonEndpoints": "kubeletEndpoint:DaemonEndpoint",
    "NodeFeatures": "supplementalGroupsPolicy:b",
    "NodePodPreemptionPolicy": "disableResizePreemption:[]s",
    "NodeRuntimeHandler": "features:NodeRuntimeHandlerFeatures name",
    "NodeRuntimeHandlerFeatures": "recursiveReadOnlyMounts:b userNamespaces:b",
    "NodeSelector": "nodeSelectorTerms:[]NodeSelectorTerm",
    "NodeSelectorRequirement": "key operator values:[]s",
    "NodeSelectorTerm": "matchExpressions:[]NodeSelectorRequirement matchFields:[]NodeSelectorRequirement",
    "NodeSpec": "configSource:NodeConfigSource externalID podCIDR podCIDRs:[]s "
                "podPreemptionPolicy:NodePodPreemptionPolicy providerID taints:[]Taint unschedulable:b",
    "NodeStatus": "addresses:[]NodeAddress allocatable:{}q capacity:{}q conditions:[]NodeCondition "
                  "config:NodeConfigStatus daemonEndpoints:NodeDaemonEndpoints declaredFeatures:[]s "
                  "features:NodeFeatures images:[]ContainerImage nodeInfo:NodeSystemInfo phase "
                  "runtimeHandlers:[]NodeRuntimeHandler volumesAttached:[]AttachedVolume volumesInUse:[]s",
    "NodeSwapStatus": "capacity:i",
    "NodeSystemInfo": "architecture bootID containerRuntimeVersion kernelVersion kubeProxyVersion kubeletVersion "
                      "machineID operatingSystem osImage runningInUserNamespace:b swap:NodeSwapStatus systemUUID",
    "ObjectFieldSelector": "apiVersion fieldPath",
    "ObjectMeta": "annotations:{}s creationTimestamp:t deletionGracePeriodSeconds:l deletionTimestamp:t "
                  "finalizers:[]s generateName generation:l labels:{}s managedFields:[]ManagedFieldsEntry name "
                  "namespace ownerReferences:[]OwnerReference resourceVersion selfLink uid",
    "ObjectMetricSource": "describedObject:CrossVersionObjectReference metric:MetricIdentifier "
                          "target:MetricTarget",
    "ObjectMetricStatus": "current:MetricValueStatus describedObject:CrossVersionObjectReference "
                          "metric:MetricIdentifier",
    "ObjectReference": "apiVersion fieldPath kind name namespace resourceVersion uid",
    "OwnerReference": "apiVersion blockOwnerDeletion:b controller:b kind name uid",
    "PersistentVolume": "apiVersion kind metadata:ObjectMeta spec:PersistentVolumeSpec "
                        "status:PersistentVolumeStatus",
    "PersistentVolumeClaim": "apiVersion kind metadata:ObjectMeta spec:PersistentVolumeClaimSpec "
                             "status:PersistentVolumeClaimStatus",
    "PersistentVolumeClaimCondition": "lastProbeTime:t lastTransitionTime:t message reason status type",
    "PersistentVolumeClaimSpec": "accessModes:[]s dataSource:TypedLocalObjectReference "
                                 "dataSourceRef:TypedObjectReference resources:VolumeResourceRequirements "
                                 "selector:LabelSelector storageClassName volumeAttributesClassName volumeMode "
                                 "volumeName",
    "PersistentVolumeClaimStatus": "accessModes:[]s allocatedResourceStatuses:{}s allocatedResources:{}q "
                                   "capacity:{}q conditions:[]PersistentVolumeClaimCondition "
                                   "currentVolumeAttributesClassName healthStatus:VolumeHealthStatus "
                                   "modifyVolumeStatus:ModifyVolumeStatus phase",
    "PersistentVolumeClaimTemplate": "metadata:ObjectMeta spec:PersistentVolumeClaimSpec",
    "PersistentVolumeClaimVolumeSource": "claimName readOnly:b",
    "PersistentVolumeSpec": "accessModes:[]s awsElasticBlockStore:AWSElasticBlockStoreVolumeSource "
                            "azureDisk:AzureDiskVolumeSource azureFile:AzureFilePersistentVolumeSource "
                            "capacity:{}q cephfs:CephFSPersistentVolumeSource cinder:CinderPersistentVolumeSource "
                            "claimRef:ObjectReference csi:CSIPersistentVolumeSource fc:FCVolumeSource "
                            "flexVolume:FlexPersistentVolumeSource flocker:FlockerVolumeSource "
                            "gcePersistentDisk:GCEPersistentDiskVolumeSource "
                            "glusterfs:GlusterfsPersistentVolumeSource hostPath:HostPathVolumeSource "
                            "iscsi:ISCSIPersistentVolumeSource local:LocalVolumeSource mountOptions:[]s "
                            "nfs:NFSVolumeSource nodeAffinity:VolumeNodeAffinity persistentVolumeReclaimPolicy "
                            "photonPersistentDisk:PhotonPersistentDiskVolumeSource "
                            "portworxVolume:PortworxVolumeSource quobyte:QuobyteVolumeSource "
                            "rbd:RBDPersistentVolumeSource scaleIO:ScaleIOPersistentVolumeSource storageClassName "
                            "storageos:StorageOSPersistentVolumeSource volumeAttributesClassName volumeMode "
                            "vsphereVolume:VsphereVirtualDiskVolumeSource",
    "PersistentVolumeStatus": "lastPhaseTransitionTime:t message phase reason",
    "PhotonPersistentDiskVolumeSource": "fsType pdID",
    "Pod": "apiVersion kind metadata:ObjectMeta spec:PodSpec status:PodStatus",
    "PodAffinity": "preferredDuringSchedulingIgnoredDuringExecution:[]WeightedPodAffinityTerm "
                   "requiredDuringSchedulingIgnoredDuringExecution:[]PodAffinityTerm",
    "PodAffinityTerm": "labelSelector:LabelSelector matchLabelKeys:[]s mismatchLabelKeys:[]s "
                       "namespaceSelector:LabelSelector namespaces:[]s topologyKey",
    "PodAntiAffinity": "preferredDuringSchedulingIgnoredDuringExecution:[]WeightedPodAffinityTerm "
                       "requiredDuringSchedulingIgnoredDuringExecution:[]PodAffinityTerm",
    "PodCertificateProjection": "certificateChainPath credentialBundlePath keyPath keyType maxExpirationSeconds:i "
                                "signerName user:i userAnnotations:{}s",
    "PodCondition": "lastProbeTime:t lastTransitionTime:t message observedGeneration:l reason status type",
    "PodDNSConfig": "nameservers:[]s options:[]PodDNSConfigOption searches:[]s",
    "PodDNSConfigOption": "name value",
    "PodDisruptionBudget": "apiVersion kind metadata:ObjectMeta spec:PodDisruptionBudgetSpec "
                           "status:PodDisruptionBudgetStatus",
    "PodDisruptionBudgetSpec": "maxUnavailable:x minAvailable:x selector:LabelSelector unhealthyPodEvictionPolicy",
    "PodDisruptionBudgetStatus": "conditions:[]Condition currentHealthy:i desiredHealthy:i disruptedPods:{}t "
                                 "disruptionsAllowed:i expectedPods:i observedGeneration:l",
    "PodExtendedResourceClaimStatus": "requestMappings:[]ContainerExtendedResourceRequest resourceClaimName",
    "PodFailurePolicy": "rules:[]PodFailurePolicyRule",
    "PodFailurePolicyOnExitCodesRequirement": "containerName operator values:[]i",
    "PodFailurePolicyOnPodConditionsPattern": "status type",
    "PodFailurePolicyRule": "action onExitCodes:PodFailurePolicyOnExitCodesRequirement "
                            "onPodConditions:[]PodFailurePolicyOnPodConditionsPattern",
    "PodIP": "ip",
    "PodOS": "name",
    "PodReadinessGate": "conditionType",
    "PodResourceClaim": "name resourceClaimName resourceClaimTemplateName",
    "PodResourceClaimStatus": "name resourceClaimName",
    "PodSchedulingGate": "name",
    "PodSchedulingGroup": "podGroupName",
    "PodSecurityContext": "appArmorProfile:AppArmorProfile fsGroup:l fsGroupChangePolicy runAsGroup:l "
                          "runAsNonRoot:b runAsUser:l seLinuxChangePolicy seLinuxOptions:SELinuxOptions "
                          "seccompProfile:SeccompProfile supplementalGroups:[]l supplementalGroupsPolicy "
                          "sysctls:[]Sysctl windowsOptions:WindowsSecurityContextOptions",
    "PodSpec": "activeDeadlineSeconds:l affinity:Affinity automountServiceAccountToken:b containers:[]Container "
               "dnsConfig:PodDNSConfig dnsPolicy enableServiceLinks:b ephemeralContainers:[]EphemeralContainer "
               "evictionResponders:[]EvictionResponder hostAliases:[]HostAlias hostIPC:b hostNetwork:b hostPID:b "
               "hostUsers:b hostname hostnameOverride imagePullSecrets:[]LocalObjectReference "
               "initContainers:[]Container nodeName nodeSelector:{}s os:PodOS overhead:{}q preemptionPolicy "
               "priority:i priorityClassName readinessGates:[]PodReadinessGate resourceClaims:[]PodResourceClaim "
               "resources:ResourceRequirements restartPolicy runtimeClassName schedulerName "
               "schedulingGates:[]PodSchedulingGate schedulingGroup:PodSchedulingGroup "
               "securityContext:PodSecurityContext serviceAccount serviceAccountName setHostnameAsFQDN:b "
               "shareProcessNamespace:b subdomain terminationGracePeriodSeconds:l tolerations:[]Toleration "
               "topologySpreadConstraints:[]TopologySpreadConstraint volumes:[]Volume",
    "PodStatus": "allocatedResources:{}s conditions:[]PodCondition containerStatuses:[]ContainerStatus "
                 "ephemeralContainerStatuses:[]ContainerStatus "
                 "extendedResourceClaimStatus:PodExtendedResourceClaimStatus hostIP hostIPs:[]HostIP "
                 "initContainerStatuses:[]ContainerStatus message "
                 "nodeAllocatableResourceClaimStatuses:[]NodeAllocatableResourceClaimStatus nominatedNodeName "
                 "observedGeneration:i phase podIP podIPs:[]PodIP qosClass reason resize "
                 "resourceClaimStatuses:[]PodResourceClaimStatus resources:ResourceRequirements startTime:t "
                 "volumeHealth:[]PodVolumeHealth",
    "PodTemplateSpec": "metadata:ObjectMeta spec:PodSpec",
    "PodVolumeHealth": "healthConditions:[]VolumeHealthCondition lastTransitionTime:t name",
    "PodsMetricSource": "metric:MetricIdentifier target:MetricTarget",
    "PodsMetricStatus": "current:MetricValueStatus metric:MetricIdentifier",
    "PolicyRule": "apiGroups:[]s nonResourceURLs:[]s resourceNames:[]s resources:[]s verbs:[]s",
    "PortStatus": "error port:i protocol",
    "PortworxVolumeSource": "fsType readOnly:b volumeID",
    "PreferredSchedulingTerm": "preference:NodeSelectorTerm weight:i",
    "PriorityClass": "apiVersion description globalDefault:b kind metadata:ObjectMeta preemptionPolicy value:i",
    "Probe": "exec:ExecAction failureThreshold:i grpc:GRPCAction httpGet:HTTPGetAction initialDelaySeconds:i "
             "periodSeconds:i successThreshold:i tcpSocket:TCPSocketAction terminationGracePeriodSeconds:l "
             "timeoutSeconds:i",
    "ProjectedVolumeSource": "defaultMode:i defaultUser:i sources:[]VolumeProjection",
    "QuobyteVolumeSource": "group readOnly:b registry tenant user volume",
    "RBDPersistentVolumeSource": "fsType image keyring monitors:[]s pool readOnly:b secretRef:SecretReference "
                                 "user",
    "RBDVolumeSource": "fsType image keyring monitors:[]s pool readOnly:b secretRef:LocalObjectReference user",
    "ReplicaSet": "apiVersion kind metadata:ObjectMeta spec:ReplicaSetSpec status:ReplicaSetStatus",
    "ReplicaSetCondition": "lastTransitionTime:t message reason status type",
    "ReplicaSetSpec": "minReadySeconds:i replicas:i selector:LabelSelector template:PodTemplateSpec",
    "ReplicaSetStatus": "availableReplicas:i conditions:[]ReplicaSetCondition fullyLabeledReplicas:i "
                        "observedGeneration:l readyReplicas:i replicas:i terminatingReplicas:i",
    "ReplicationController": "apiVersion kind metadata:ObjectMeta spec:ReplicationControllerSpec "
                             "status:ReplicationControllerStatus",
    "ReplicationControllerCondition": "lastTransitionTime:t message reason status type",
    "ReplicationControllerSpec": "minReadySeconds:i replicas:i selector:{}s template:PodTemplateSpec",
    "ReplicationControllerStatus": "availableReplicas:i conditions:[]ReplicationControllerCondition "
                                   "fullyLabeledReplicas:i observedGeneration:l readyReplicas:i replicas:i",
    "ResourceClaim": "name request",
    "ResourceFieldSelector": "containerName divisor:q resource",
    "ResourceHealth": "health message resourceID",
    "ResourceMetricSource": "name target:MetricTarget",
    "ResourceMetricStatus": "current:MetricValueStatus name",
    "ResourceRequirements": "claims:[]ResourceClaim limits:{}q requests:{}q",
    "ResourceStatus": "name resources:[]ResourceHealth",
    "Role": "apiVersion kind metadata:ObjectMeta rules:[]PolicyRule",
    "RoleBinding": "apiVersion kind metadata:ObjectMeta roleRef:RoleRef subjects:[]Subject",
    "RoleRef": "apiGroup kind name",
    "RollingUpdateDaemonSet": "maxSurge:x maxUnavailable:x",
    "RollingUpdateDeployment": "maxSurge:x maxUnavailable:x",
    "RollingUpdateStatefulSetStrategy": "maxUnavailable:x partition:i",
    "SELinuxOptions": "level role type user",
    "ScaleIOPersistentVolumeSource": "fsType gateway protectionDomain readOnly:b secretRef:SecretReference "
                                     "sslEnabled:b storageMode storagePool system volumeName",
    "ScaleIOVolumeSource": "fsType gateway protectionDomain readOnly:b secretRef:LocalObjectReference "
                           "sslEnabled:b storageMode storagePool system volumeName",
    "SeccompProfile": "localhostProfile type",
    "Secret": "apiVersion data:{}y immutable:b kind metadata:ObjectMeta stringData:{}s type",
    "SecretEnvSource": "name optional:b",
    "SecretKeySelector": "key name optional:b",
    "SecretProjection": "items:[]KeyToPath name optional:b",
    "SecretReference": "name namespace",
    "SecretVolumeSource": "defaultMode:i defaultUser:i items:[]KeyToPath optional:b secretName",
    "SecurityContext": "allowPrivilegeEscalation:b appArmorProfile:AppArmorProfile capabilities:Capabilities "
                       "privileged:b procMount readOnlyRootFilesystem:b runAsGroup:l runAsNonRoot:b runAsUser:l "
                       "seLinuxOptions:SELinuxOptions seccompProfile:SeccompProfile "
                       "windowsOptions:WindowsSecurityContextOptions",
    "Service": "apiVersion kind metadata:ObjectMeta spec:ServiceSpec status:ServiceStatus",
    "ServiceAccount": "apiVersion automountServiceAccountToken:b imagePullSecrets:[]LocalObjectReference kind "
                      "metadata:ObjectMeta secrets:[]ObjectReference",
    "ServiceAccountTokenProjection": "audience expirationSeconds:l path user:i",
    "ServiceBackendPort": "name number:i",
    "ServicePort": "appProtocol name nodePort:i port:i protocol targetPort:x",
    "ServiceSpec": "allocateLoadBalancerNodePorts:b clusterIP clusterIPs:[]s externalIPs:[]s externalName "
                   "externalTrafficPolicy healthCheckNodePort:i internalTrafficPolicy ipFamilies:[]s "
                   "ipFamilyPolicy loadBalancerClass loadBalancerIP loadBalancerSourceRanges:[]s "
                   "ports:[]ServicePort publishNotReadyAddresses:b selector:{}s sessionAffinity "
                   "sessionAffinityConfig:SessionAffinityConfig trafficDistribution type",
    "ServiceStatus": "conditions:[]Condition loadBalancer:LoadBalancerStatus",
    "SessionAffinityConfig": "clientIP:ClientIPConfig",
    "SleepAction": "seconds:l",
    "StatefulSet": "apiVersion kind metadata:ObjectMeta spec:StatefulSetSpec status:StatefulSetStatus",
    "StatefulSetCondition": "lastTransitionTime:t message reason status type",
    "StatefulSetOrdinals": "start:i",
    "StatefulSetPersistentVolumeClaimRetentionPolicy": "whenDeleted whenScaled",
    "StatefulSetSpec": "minReadySeconds:i ordinals:StatefulSetOrdinals "
                       "persistentVolumeClaimRetentionPolicy:StatefulSetPersistentVolumeClaimRetentionPolicy "
                       "podManagementPolicy replicas:i revisionHistoryLimit:i selector:LabelSelector serviceName "
                       "template:PodTemplateSpec updateStrategy:StatefulSetUpdateStrategy "
                       "volumeClaimTemplates:[]PersistentVolumeClaim",
    "StatefulSetStatus": "availableReplicas:i collisionCount:i conditions:[]StatefulSetCondition "
                         "currentReplicas:i currentRevision observedGeneration:l readyReplicas:i replicas:i "
                         "updateRevision updatedReplicas:i",
    "StatefulSetUpdateStrategy": "rollingUpdate:RollingUpdateStatefulSetStrategy type",
    "StorageOSPersistentVolumeSource": "fsType readOnly:b secretRef:ObjectReference volumeName volumeNamespace",
    "StorageOSVolumeSource": "fsType readOnly:b secretRef:LocalObjectReference volumeName volumeNamespace",
    "Subject": "apiGroup kind name namespace",
    "SuccessPolicy": "rules:[]SuccessPolicyRule",
    "SuccessPolicyRule": "succeededCount:i succeededIndexes",
    "Sysctl": "name value",
    "TCPSocketAction": "host port:x",
    "Taint": "effect key timeAdded:t value",
    "Toleration": "effect key operator tolerationSeconds:l value",
    "TopologyConstraint": "key",
    "TopologySpreadConstraint": "labelSelector:LabelSelector matchLabelKeys:[]s maxSkew:i minDomains:i "
                                "nodeAffinityPolicy nodeTaintsPolicy topologyKey whenUnsatisfiable",
    "TypedLocalObjectReference": "apiGroup kind name",
    "TypedObjectReference": "apiGroup kind name namespace",
    "UncountedTerminatedPods": "failed:[]s succeeded:[]s",
    "Volume": "awsElasticBlockStore:AWSElasticBlockStoreVolumeSource azureDisk:AzureDiskVolumeSource "
              "azureFile:AzureFileVolumeSource cephfs:CephFSVolumeSource cinder:CinderVolumeSource "
              "configMap:ConfigMapVolumeSource csi:CSIVolumeSource downwardAPI:DownwardAPIVolumeSource "
              "emptyDir:EmptyDirVolumeSource ephemeral:EphemeralVolumeSource fc:FCVolumeSource "
              "flexVolume:FlexVolumeSource flocker:FlockerVolumeSource "
              "gcePersistentDisk:GCEPersistentDiskVolumeSource gitRepo:GitRepoVolumeSource "
              "glusterfs:GlusterfsVolumeSource hostPath:HostPathVolumeSource image:ImageVolumeSource "
              "iscsi:ISCSIVolumeSource name nfs:NFSVolumeSource "
              "persistentVolumeClaim:PersistentVolumeClaimVolumeSource "
              "photonPersistentDisk:PhotonPersistentDiskVolumeSource portworxVolume:PortworxVolumeSource "
              "projected:ProjectedVolumeSource quobyte:QuobyteVolumeSource rbd:RBDVolumeSource "
              "scaleIO:ScaleIOVolumeSource secret:SecretVolumeSource storageos:StorageOSVolumeSource "
              "vsphereVolume:VsphereVirtualDiskVolumeSource",
    "VolumeDevice": "devicePath name",
    "VolumeHealthCondition": "message reason status",
    "VolumeHealthStatus": "healthConditions:[]VolumeHealthCondition lastTransitionTime:t",
    "VolumeMount": "bindMountOptions:[]s mountPath mountPropagation name readOnly:b recursiveReadOnly subPath "
                   "subPathExpr",
    "VolumeMountStatus": "mountPath name readOnly:b recursiveReadOnly volumeStatus:VolumeStatus",
    "VolumeNodeAffinity": "required:NodeSelector",
    "VolumeProjection": "clusterTrustBundle:ClusterTrustBundleProjection configMap:ConfigMapProjection "
                        "downwardAPI:DownwardAPIProjection podCertificate:PodCertificateProjection "
                        "secret:SecretProjection serviceAccountToken:ServiceAccountTokenProjection",
    "VolumeResourceRequirements": "limits:{}q requests:{}q",
    "VolumeStatus": "image:ImageVolumeStatus",
    "VsphereVirtualDiskVolumeSource": "fsType storagePolicyID storagePolicyName volumePath",
    "WeightedPodAffinityTerm": "podAffinityTerm:PodAffinityTerm weight:i",
    "WindowsSecurityContextOptions": "gmsaCredentialSpec gmsaCredentialSpecName hostProcess:b runAsUserName",
    "WorkloadPodGroupDisruptionMode": "all:o single:o",
    "WorkloadPodGroupGangSchedulingPolicy": "minCount:i",
    "WorkloadPodGroupResourceClaim": "name resourceClaimName resourceClaimTemplateName",
    "WorkloadPodGroupSchedulingConstraints": "topology:[]TopologyConstraint",
    "WorkloadPodGroupSchedulingPolicy": "basic:o gang:WorkloadPodGroupGangSchedulingPolicy",
    "ResourceQuota": "apiVersion kind metadata:ObjectMeta spec:ResourceQuotaSpec status:ResourceQuotaStatus",
    "ResourceQuotaSpec": "hard:{}q scopeSelector:ScopeSelector scopes:[]s",
    "ResourceQuotaStatus": "hard:{}q used:{}q",
    "ScopeSelector": "matchExpressions:[]ScopedResourceSelectorRequirement",
    "ScopedResourceSelectorRequirement": "operator scopeName values:[]s",
    "LimitRange": "apiVersion kind metadata:ObjectMeta spec:LimitRangeSpec",
    "LimitRangeSpec": "limits:[]LimitRangeItem",
    "LimitRangeItem": "default:{}q defaultRequest:{}q max:{}q maxLimitRequestRatio:{}q min:{}q type",
    "NetworkPolicy": "apiVersion kind metadata:ObjectMeta spec:NetworkPolicySpec",
    "NetworkPolicySpec": "egress:[]NetworkPolicyEgressRule ingress:[]NetworkPolicyIngressRule "
                         "podSelector:LabelSelector policyTypes:[]s",
    "NetworkPolicyEgressRule": "ports:[]NetworkPolicyPort to:[]NetworkPolicyPeer",
    "NetworkPolicyIngressRule": "from:[]NetworkPolicyPeer ports:[]NetworkPolicyPort",
    "NetworkPolicyPeer": "ipBlock:IPBlock namespaceSelector:LabelSelector podSelector:LabelSelector",
    "NetworkPolicyPort": "endPort:i port:x protocol",
    "IPBlock": "cidr except:[]s",
    "EventsV1Event": "action apiVersion deprecatedCount:i deprecatedFirstTimestamp:t deprecatedLastTimestamp:t "
                     "deprecatedSource:EventSource eventTime:m kind metadata:ObjectMeta note reason "
                     "regarding:ObjectReference related:ObjectReference reportingController reportingInstance "
                     "series:EventSeries type",
    "RuntimeClass": "apiVersion handler kind metadata:ObjectMeta overhead:Overhead scheduling:Scheduling",
    "Overhead": "podFixed:{}q",
    "Scheduling": "nodeSelector:{}s tolerations:[]Toleration",
    "CertificateSigningRequest": "apiVersion kind metadata:ObjectMeta spec:CertificateSigningRequestSpec "
                                 "status:CertificateSigningRequestStatus",
    "CertificateSigningRequestSpec": "expirationSeconds:i extra:{}o groups:[]s request:y signerName uid "
                                     "usages:[]s username",
    "CertificateSigningRequestStatus": "certificate:y conditions:[]CertificateSigningRequestCondition",
    "CertificateSigningRequestCondition": "lastTransitionTime:t lastUpdateTime:t message reason status type",
    "FlowSchema": "apiVersion kind metadata:ObjectMeta spec:FlowSchemaSpec status:FlowSchemaStatus",
    "FlowSchemaSpec": "distinguisherMethod:FlowDistinguisherMethod matchingPrecedence:i "
                      "priorityLevelConfiguration:PriorityLevelConfigurationReference rules:[]PolicyRulesWithSubjects",
    "FlowDistinguisherMethod": "type",
    "PriorityLevelConfigurationReference": "name",
    "PolicyRulesWithSubjects": "nonResourceRules:[]NonResourcePolicyRule resourceRules:[]ResourcePolicyRule "
                               "subjects:[]FlowSubject",
    "NonResourcePolicyRule": "nonResourceURLs:[]s verbs:[]s",
    "ResourcePolicyRule": "apiGroups:[]s clusterScope:b namespaces:[]s resources:[]s verbs:[]s",
    "FlowSubject": "group:GroupSubject kind serviceAccount:ServiceAccountSubject user:UserSubject",
    "GroupSubject": "name",
    "UserSubject": "name",
    "ServiceAccountSubject": "name namespace",
    "FlowSchemaStatus": "conditions:[]FlowSchemaCondition",
    "FlowSchemaCondition": "lastTransitionTime:t message reason status type",
    "PriorityLevelConfiguration": "apiVersion kind metadata:ObjectMeta spec:PriorityLevelConfigurationSpec "
                                  "status:PriorityLevelConfigurationStatus",
    "PriorityLevelConfigurationSpec": "exempt:ExemptPriorityLevelConfiguration "
                                      "limited:LimitedPriorityLevelConfiguration type",
    "ExemptPriorityLevelConfiguration": "lendablePercent:i nominalConcurrencyShares:i",
    "LimitedPriorityLevelConfiguration": "borrowingLimitPercent:i lendablePercent:i limitResponse:LimitResponse "
                                         "nominalConcurrencyShares:i",
    "LimitResponse": "queuing:QueuingConfiguration type",
    "QueuingConfiguration": "handSize:i queueLengthLimit:i queues:i",
    "PriorityLevelConfigurationStatus": "conditions:[]PriorityLevelConfigurationCondition",
    "PriorityLevelConfigurationCondition": "lastTransitionTime:t message reason status type",
    "ValidatingAdmissionPolicy": "apiVersion kind metadata:ObjectMeta spec:ValidatingAdmissionPolicySpec "
                                 "status:ValidatingAdmissionPolicyStatus",
    "ValidatingAdmissionPolicySpec": "auditAnnotations:[]AuditAnnotation failurePolicy "
                                     "matchConditions:[]MatchCondition matchConstraints:MatchResources "
                                     "paramKind:ParamKind validations:[]Validation variables:[]Variable",
    "AuditAnnotation": "key valueExpression",
    "MatchCondition": "expression name",
    "MatchResources": "excludeResourceRules:[]NamedRuleWithOperations matchPolicy "
                      "namespaceSelector:LabelSelector objectSelector:LabelSelector "
                      "resourceRules:[]NamedRuleWithOperations",
    "NamedRuleWithOperations": "apiGroups:[]s apiVersions:[]s operations:[]s resourceNames:[]s resources:[]s scope",
    "ParamKind": "apiVersion kind",
    "Validation": "expression message messageExpression reason",
    "Variable": "expression name",
    "ValidatingAdmissionPolicyStatus": "conditions:[]Condition observedGeneration:l typeChecking:o",
    "ValidatingAdmissionPolicyBinding": "apiVersion kind metadata:ObjectMeta "
                                        "spec:ValidatingAdmissionPolicyBindingSpec",
    "ValidatingAdmissionPolicyBindingSpec": "matchResources:MatchResources paramRef:ParamRef policyName "
                                            "validationActions:[]s",
    "ParamRef": "name namespace parameterNotFoundAction selector:LabelSelector",
    "ValidatingWebhookConfiguration": "apiVersion kind metadata:ObjectMeta webhooks:[]ValidatingWebhook",
    "MutatingWebhookConfiguration": "apiVersion kind metadata:ObjectMeta webhooks:[]MutatingWebhook",
    "ValidatingWebhook": "admissionReviewVersions:[]s clientConfig:WebhookClientConfig failurePolicy "
                         "matchConditions:[]MatchCondition matchPolicy name namespaceSelector:LabelSelector "
                         "objectSelector:LabelSelector rules:[]RuleWithOperations sideEffects timeoutSeconds:i",
    "MutatingWebhook": "admissionReviewVersions:[]s clientConfig:WebhookClientConfig failurePolicy "
                       "matchConditions:[]MatchCondition matchPolicy name namespaceSelector:LabelSelector "
                       "objectSelector:LabelSelector reinvocationPolicy rules:[]RuleWithOperations sideEffects "
                       "timeoutSeconds:i",
    "WebhookClientConfig": "caBundle:y service:WebhookServiceReference url",
    "WebhookServiceReference": "name namespace path port:i",
    "RuleWithOperations": "apiGroups:[]s apiVersions:[]s operations:[]s resources:[]s scope",
}


_fields: dict[str, dict[str, str]] = {}


def fields(type_name: str) -> dict[str, str]:
    """``type_name``'s fields in table order, each with its type code (``"s"`` for a bare name);
    parsed once per type, for both the field validation and the OpenAPI document."""
    parsed = _fields.get(type_name)
    if parsed is None:
        parsed = {}
        for entry in TYPES[type_name].split():
            name, _, ref = entry.partition(":")
            parsed[name] = ref or "s"
        _fields[type_name] = parsed
    return parsed
