"""Every field of the kinds kconsole serves, for ``fieldValidation`` (generated from the official
Python client's models; a superset of 1.32's fields, so no field kubectl 1.32 sends is refused).

``TYPES[type]`` is ``"field field:Type field:{}Type ..."``: a bare name is a leaf or a free-form value;
``:Type`` an object, or a list of them, of that type; ``:{}Type`` a map whose values are of that type.
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
}

TYPES: dict[str, str] = {
    "AWSElasticBlockStoreVolumeSource": "fsType partition readOnly volumeID",
    "Affinity": "nodeAffinity:NodeAffinity podAffinity:PodAffinity podAntiAffinity:PodAntiAffinity",
    "AggregationRule": "clusterRoleSelectors:LabelSelector",
    "AppArmorProfile": "localhostProfile type",
    "AttachedVolume": "devicePath name",
    "AzureDiskVolumeSource": "cachingMode diskName diskURI fsType kind readOnly",
    "AzureFilePersistentVolumeSource": "readOnly secretName secretNamespace shareName",
    "AzureFileVolumeSource": "readOnly secretName shareName",
    "CSIPersistentVolumeSource": "controllerExpandSecretRef:SecretReference "
                                 "controllerPublishSecretRef:SecretReference driver fsType "
                                 "nodeExpandSecretRef:SecretReference nodePublishSecretRef:SecretReference "
                                 "nodeStageSecretRef:SecretReference readOnly volumeAttributes volumeHandle",
    "CSIVolumeSource": "driver fsType nodePublishSecretRef:LocalObjectReference readOnly volumeAttributes",
    "Capabilities": "add drop",
    "CephFSPersistentVolumeSource": "monitors path readOnly secretFile secretRef:SecretReference user",
    "CephFSVolumeSource": "monitors path readOnly secretFile secretRef:LocalObjectReference user",
    "CinderPersistentVolumeSource": "fsType readOnly secretRef:SecretReference volumeID",
    "CinderVolumeSource": "fsType readOnly secretRef:LocalObjectReference volumeID",
    "ClientIPConfig": "timeoutSeconds",
    "ClusterRole": "aggregationRule:AggregationRule apiVersion kind metadata:ObjectMeta rules:PolicyRule",
    "ClusterRoleBinding": "apiVersion kind metadata:ObjectMeta roleRef:RoleRef subjects:Subject",
    "ClusterTrustBundleProjection": "labelSelector:LabelSelector name optional path signerName user",
    "Condition": "lastTransitionTime message observedGeneration reason status type",
    "ConfigMap": "apiVersion binaryData data immutable kind metadata:ObjectMeta",
    "ConfigMapEnvSource": "name optional",
    "ConfigMapKeySelector": "key name optional",
    "ConfigMapNodeConfigSource": "kubeletConfigKey name namespace resourceVersion uid",
    "ConfigMapProjection": "items:KeyToPath name optional",
    "ConfigMapVolumeSource": "defaultMode defaultUser items:KeyToPath name optional",
    "Container": "args command env:EnvVar envFrom:EnvFromSource image imagePullPolicy lifecycle:Lifecycle "
                 "livenessProbe:Probe name ports:ContainerPort readinessProbe:Probe "
                 "resizePolicy:ContainerResizePolicy resources:ResourceRequirements restartPolicy "
                 "restartPolicyRules:ContainerRestartRule securityContext:SecurityContext startupProbe:Probe "
                 "stdin stdinOnce terminationMessagePath terminationMessagePolicy tty volumeDevices:VolumeDevice "
                 "volumeMounts:VolumeMount workingDir",
    "ContainerExtendedResourceRequest": "containerName requestName resourceName",
    "ContainerImage": "names sizeBytes",
    "ContainerPort": "containerPort hostIP hostPort name protocol",
    "ContainerResizePolicy": "resourceName restartPolicy",
    "ContainerResourceMetricSource": "container name target:MetricTarget",
    "ContainerResourceMetricStatus": "container current:MetricValueStatus name",
    "ContainerRestartRule": "action exitCodes:ContainerRestartRuleOnExitCodes",
    "ContainerRestartRuleOnExitCodes": "operator values",
    "ContainerState": "running:ContainerStateRunning terminated:ContainerStateTerminated "
                      "waiting:ContainerStateWaiting",
    "ContainerStateRunning": "startedAt",
    "ContainerStateTerminated": "containerID exitCode finishedAt message reason signal startedAt",
    "ContainerStateWaiting": "message reason",
    "ContainerStatus": "allocatedResources allocatedResourcesStatus:ResourceStatus containerID image imageID "
                       "lastState:ContainerState name ready resources:ResourceRequirements restartCount started "
                       "state:ContainerState stopSignal user:ContainerUser volumeMounts:VolumeMountStatus",
    "ContainerUser": "linux:LinuxContainerUser",
    "CoreV1EndpointPort": "appProtocol name port protocol",
    "CronJob": "apiVersion kind metadata:ObjectMeta spec:CronJobSpec status:CronJobStatus",
    "CronJobSpec": "concurrencyPolicy failedJobsHistoryLimit jobTemplate:JobTemplateSpec schedule "
                   "startingDeadlineSeconds successfulJobsHistoryLimit suspend timeZone",
    "CronJobStatus": "active:ObjectReference lastScheduleTime lastSuccessfulTime",
    "CrossVersionObjectReference": "apiVersion kind name",
    "DaemonEndpoint": "Port",
    "DaemonSet": "apiVersion kind metadata:ObjectMeta spec:DaemonSetSpec status:DaemonSetStatus",
    "DaemonSetCondition": "lastTransitionTime message reason status type",
    "DaemonSetSpec": "minReadySeconds revisionHistoryLimit selector:LabelSelector template:PodTemplateSpec "
                     "updateStrategy:DaemonSetUpdateStrategy",
    "DaemonSetStatus": "collisionCount conditions:DaemonSetCondition currentNumberScheduled "
                       "desiredNumberScheduled numberAvailable numberMisscheduled numberReady numberUnavailable "
                       "observedGeneration updatedNumberScheduled",
    "DaemonSetUpdateStrategy": "rollingUpdate:RollingUpdateDaemonSet type",
    "Deployment": "apiVersion kind metadata:ObjectMeta spec:DeploymentSpec status:DeploymentStatus",
    "DeploymentCondition": "lastTransitionTime lastUpdateTime message reason status type",
    "DeploymentSpec": "minReadySeconds paused progressDeadlineSeconds replicas revisionHistoryLimit "
                      "selector:LabelSelector strategy:DeploymentStrategy template:PodTemplateSpec",
    "DeploymentStatus": "availableReplicas collisionCount conditions:DeploymentCondition observedGeneration "
                        "readyReplicas replicas terminatingReplicas unavailableReplicas updatedReplicas",
    "DeploymentStrategy": "rollingUpdate:RollingUpdateDeployment type",
    "DiscoveryV1EndpointPort": "appProtocol name port protocol",
    "DownwardAPIProjection": "items:DownwardAPIVolumeFile",
    "DownwardAPIVolumeFile": "fieldRef:ObjectFieldSelector mode path resourceFieldRef:ResourceFieldSelector user",
    "DownwardAPIVolumeSource": "defaultMode defaultUser items:DownwardAPIVolumeFile",
    "EmptyDirVolumeSource": "medium mode sizeLimit",
    "Endpoint": "addresses conditions:EndpointConditions deprecatedTopology hints:EndpointHints hostname nodeName "
                "targetRef:ObjectReference zone",
    "EndpointAddress": "hostname ip nodeName targetRef:ObjectReference",
    "EndpointConditions": "ready serving terminating",
    "EndpointHints": "forNodes:ForNode forZones:ForZone",
    "EndpointSlice": "addressType apiVersion endpoints:Endpoint kind metadata:ObjectMeta "
                     "ports:DiscoveryV1EndpointPort",
    "EndpointSubset": "addresses:EndpointAddress notReadyAddresses:EndpointAddress ports:CoreV1EndpointPort",
    "Endpoints": "apiVersion kind metadata:ObjectMeta subsets:EndpointSubset",
    "EnvFromSource": "configMapRef:ConfigMapEnvSource prefix secretRef:SecretEnvSource",
    "EnvVar": "name value valueFrom:EnvVarSource",
    "EnvVarSource": "configMapKeyRef:ConfigMapKeySelector fieldRef:ObjectFieldSelector fileKeyRef:FileKeySelector "
                    "resourceFieldRef:ResourceFieldSelector secretKeyRef:SecretKeySelector",
    "EphemeralContainer": "args command env:EnvVar envFrom:EnvFromSource image imagePullPolicy "
                          "lifecycle:Lifecycle livenessProbe:Probe name ports:ContainerPort readinessProbe:Probe "
                          "resizePolicy:ContainerResizePolicy resources:ResourceRequirements restartPolicy "
                          "restartPolicyRules:ContainerRestartRule securityContext:SecurityContext "
                          "startupProbe:Probe stdin stdinOnce targetContainerName terminationMessagePath "
                          "terminationMessagePolicy tty volumeDevices:VolumeDevice volumeMounts:VolumeMount "
                          "workingDir",
    "EphemeralVolumeSource": "volumeClaimTemplate:PersistentVolumeClaimTemplate",
    "Event": "action apiVersion count eventTime firstTimestamp involvedObject:ObjectReference kind lastTimestamp "
             "message metadata:ObjectMeta reason related:ObjectReference reportingComponent reportingInstance "
             "series:EventSeries source:EventSource type",
    "EventSeries": "count lastObservedTime",
    "EventSource": "component host",
    "EvictionResponder": "name priority",
    "ExecAction": "command",
    "ExternalMetricSource": "metric:MetricIdentifier target:MetricTarget",
    "ExternalMetricStatus": "current:MetricValueStatus metric:MetricIdentifier",
    "FCVolumeSource": "fsType lun readOnly targetWWNs wwids",
    "FileKeySelector": "key optional path volumeName",
    "FlexPersistentVolumeSource": "driver fsType options readOnly secretRef:SecretReference",
    "FlexVolumeSource": "driver fsType options readOnly secretRef:LocalObjectReference",
    "FlockerVolumeSource": "datasetName datasetUUID",
    "ForNode": "name",
    "ForZone": "name",
    "GCEPersistentDiskVolumeSource": "fsType partition pdName readOnly",
    "GRPCAction": "mode port service",
    "GitRepoVolumeSource": "directory repository revision",
    "GlusterfsPersistentVolumeSource": "endpoints endpointsNamespace path readOnly",
    "GlusterfsVolumeSource": "endpoints path readOnly",
    "HPAScalingPolicy": "periodSeconds type value",
    "HPAScalingRules": "policies:HPAScalingPolicy selectPolicy stabilizationWindowSeconds tolerance",
    "HTTPGetAction": "host httpHeaders:HTTPHeader path port protocol scheme",
    "HTTPHeader": "name value",
    "HTTPIngressPath": "backend:IngressBackend path pathType",
    "HTTPIngressRuleValue": "paths:HTTPIngressPath",
    "HorizontalPodAutoscaler": "apiVersion kind metadata:ObjectMeta spec:HorizontalPodAutoscalerSpec "
                               "status:HorizontalPodAutoscalerStatus",
    "HorizontalPodAutoscalerBehavior": "scaleDown:HPAScalingRules scaleUp:HPAScalingRules",
    "HorizontalPodAutoscalerCondition": "lastTransitionTime message observedGeneration reason status type",
    "HorizontalPodAutoscalerSpec": "behavior:HorizontalPodAutoscalerBehavior maxReplicas metrics:MetricSpec "
                                   "minReplicas scaleTargetRef:CrossVersionObjectReference",
    "HorizontalPodAutoscalerStatus": "conditions:HorizontalPodAutoscalerCondition currentMetrics:MetricStatus "
                                     "currentReplicas desiredReplicas lastScaleTime observedGeneration",
    "HostAlias": "hostnames ip",
    "HostIP": "ip",
    "HostPathVolumeSource": "path type",
    "ISCSIPersistentVolumeSource": "chapAuthDiscovery chapAuthSession fsType initiatorName iqn iscsiInterface lun "
                                   "portals readOnly secretRef:SecretReference targetPortal",
    "ISCSIVolumeSource": "chapAuthDiscovery chapAuthSession fsType initiatorName iqn iscsiInterface lun portals "
                         "readOnly secretRef:LocalObjectReference targetPortal",
    "ImageVolumeSource": "pullPolicy reference",
    "ImageVolumeStatus": "imageRef",
    "Ingress": "apiVersion kind metadata:ObjectMeta spec:IngressSpec status:IngressStatus",
    "IngressBackend": "resource:TypedLocalObjectReference service:IngressServiceBackend",
    "IngressLoadBalancerIngress": "hostname ip ports:IngressPortStatus",
    "IngressLoadBalancerStatus": "ingress:IngressLoadBalancerIngress",
    "IngressPortStatus": "error port protocol",
    "IngressRule": "host http:HTTPIngressRuleValue",
    "IngressServiceBackend": "name port:ServiceBackendPort",
    "IngressSpec": "defaultBackend:IngressBackend ingressClassName rules:IngressRule tls:IngressTLS",
    "IngressStatus": "loadBalancer:IngressLoadBalancerStatus",
    "IngressTLS": "hosts secretName",
    "Job": "apiVersion kind metadata:ObjectMeta spec:JobSpec status:JobStatus",
    "JobCondition": "lastProbeTime lastTransitionTime message reason status type",
    "JobSchedulingConfiguration": "disruptionMode:WorkloadPodGroupDisruptionMode "
                                  "resourceClaims:WorkloadPodGroupResourceClaim "
                                  "schedulingConstraints:WorkloadPodGroupSchedulingConstraints "
                                  "schedulingPolicy:WorkloadPodGroupSchedulingPolicy",
    "JobSpec": "activeDeadlineSeconds backoffLimit backoffLimitPerIndex completionMode completions managedBy "
               "manualSelector maxFailedIndexes parallelism podFailurePolicy:PodFailurePolicy "
               "podReplacementPolicy scheduling:JobSchedulingConfiguration selector:LabelSelector "
               "successPolicy:SuccessPolicy suspend template:PodTemplateSpec ttlSecondsAfterFinished",
    "JobStatus": "active completedIndexes completionTime conditions:JobCondition failed failedIndexes ready "
                 "startTime succeeded terminating uncountedTerminatedPods:UncountedTerminatedPods",
    "JobTemplateSpec": "metadata:ObjectMeta spec:JobSpec",
    "KeyToPath": "key mode path user",
    "LabelSelector": "matchExpressions:LabelSelectorRequirement matchLabels",
    "LabelSelectorRequirement": "key operator values",
    "Lease": "apiVersion kind metadata:ObjectMeta spec:LeaseSpec",
    "LeaseSpec": "acquireTime holderIdentity leaseDurationSeconds leaseTransitions preferredHolder renewTime "
                 "strategy",
    "Lifecycle": "postStart:LifecycleHandler preStop:LifecycleHandler stopSignal",
    "LifecycleHandler": "exec:ExecAction httpGet:HTTPGetAction sleep:SleepAction tcpSocket:TCPSocketAction",
    "LinuxContainerUser": "gid supplementalGroups uid",
    "LoadBalancerIngress": "hostname ip ipMode ports:PortStatus",
    "LoadBalancerStatus": "ingress:LoadBalancerIngress",
    "LocalObjectReference": "name",
    "LocalVolumeSource": "fsType path",
    "ManagedFieldsEntry": "apiVersion fieldsType fieldsV1 manager operation subresource time",
    "MetricIdentifier": "name selector:LabelSelector",
    "MetricSpec": "containerResource:ContainerResourceMetricSource external:ExternalMetricSource "
                  "object:ObjectMetricSource pods:PodsMetricSource resource:ResourceMetricSource type",
    "MetricStatus": "containerResource:ContainerResourceMetricStatus external:ExternalMetricStatus "
                    "object:ObjectMetricStatus pods:PodsMetricStatus resource:ResourceMetricStatus type",
    "MetricTarget": "averageUtilization averageValue type value",
    "MetricValueStatus": "averageUtilization averageValue value",
    "ModifyVolumeStatus": "status targetVolumeAttributesClassName",
    "NFSVolumeSource": "path readOnly server",
    "Namespace": "apiVersion kind metadata:ObjectMeta spec:NamespaceSpec status:NamespaceStatus",
    "NamespaceCondition": "lastTransitionTime message reason status type",
    "NamespaceSpec": "finalizers",
    "NamespaceStatus": "conditions:NamespaceCondition phase",
    "Node": "apiVersion kind metadata:ObjectMeta spec:NodeSpec status:NodeStatus",
    "NodeAddress": "address type",
    "NodeAffinity": "preferredDuringSchedulingIgnoredDuringExecution:PreferredSchedulingTerm "
                    "requiredDuringSchedulingIgnoredDuringExecution:NodeSelector",
    "NodeAllocatableMappedResources": "name quantity",
    "NodeAllocatableOverheadResources": "name perContainer perPod",
    "NodeAllocatableResourceClaimStatus": "containers mapping:NodeAllocatableMappedResources "
                                          "overhead:NodeAllocatableOverheadResources resourceClaimName",
    "NodeCondition": "lastHeartbeatTime lastTransitionTime message reason status type",
    "NodeConfigSource": "configMap:ConfigMapNodeConfigSource",
    "NodeConfigStatus": "active:NodeConfigSource assigned:NodeConfigSource error lastKnownGood:NodeConfigSource",
    "NodeDaemonEndpoints": "kubeletEndpoint:DaemonEndpoint",
    "NodeFeatures": "supplementalGroupsPolicy",
    "NodePodPreemptionPolicy": "disableResizePreemption",
    "NodeRuntimeHandler": "features:NodeRuntimeHandlerFeatures name",
    "NodeRuntimeHandlerFeatures": "recursiveReadOnlyMounts userNamespaces",
    "NodeSelector": "nodeSelectorTerms:NodeSelectorTerm",
    "NodeSelectorRequirement": "key operator values",
    "NodeSelectorTerm": "matchExpressions:NodeSelectorRequirement matchFields:NodeSelectorRequirement",
    "NodeSpec": "configSource:NodeConfigSource externalID podCIDR podCIDRs "
                "podPreemptionPolicy:NodePodPreemptionPolicy providerID taints:Taint unschedulable",
    "NodeStatus": "addresses:NodeAddress allocatable capacity conditions:NodeCondition config:NodeConfigStatus "
                  "daemonEndpoints:NodeDaemonEndpoints declaredFeatures features:NodeFeatures "
                  "images:ContainerImage nodeInfo:NodeSystemInfo phase runtimeHandlers:NodeRuntimeHandler "
                  "volumesAttached:AttachedVolume volumesInUse",
    "NodeSwapStatus": "capacity",
    "NodeSystemInfo": "architecture bootID containerRuntimeVersion kernelVersion kubeProxyVersion kubeletVersion "
                      "machineID operatingSystem osImage runningInUserNamespace swap:NodeSwapStatus systemUUID",
    "ObjectFieldSelector": "apiVersion fieldPath",
    "ObjectMeta": "annotations creationTimestamp deletionGracePeriodSeconds deletionTimestamp finalizers "
                  "generateName generation labels managedFields:ManagedFieldsEntry name namespace "
                  "ownerReferences:OwnerReference resourceVersion selfLink uid",
    "ObjectMetricSource": "describedObject:CrossVersionObjectReference metric:MetricIdentifier "
                          "target:MetricTarget",
    "ObjectMetricStatus": "current:MetricValueStatus describedObject:CrossVersionObjectReference "
                          "metric:MetricIdentifier",
    "ObjectReference": "apiVersion fieldPath kind name namespace resourceVersion uid",
    "OwnerReference": "apiVersion blockOwnerDeletion controller kind name uid",
    "PersistentVolume": "apiVersion kind metadata:ObjectMeta spec:PersistentVolumeSpec "
                        "status:PersistentVolumeStatus",
    "PersistentVolumeClaim": "apiVersion kind metadata:ObjectMeta spec:PersistentVolumeClaimSpec "
                             "status:PersistentVolumeClaimStatus",
    "PersistentVolumeClaimCondition": "lastProbeTime lastTransitionTime message reason status type",
    "PersistentVolumeClaimSpec": "accessModes dataSource:TypedLocalObjectReference "
                                 "dataSourceRef:TypedObjectReference resources:VolumeResourceRequirements "
                                 "selector:LabelSelector storageClassName volumeAttributesClassName volumeMode "
                                 "volumeName",
    "PersistentVolumeClaimStatus": "accessModes allocatedResourceStatuses allocatedResources capacity "
                                   "conditions:PersistentVolumeClaimCondition currentVolumeAttributesClassName "
                                   "healthStatus:VolumeHealthStatus modifyVolumeStatus:ModifyVolumeStatus phase",
    "PersistentVolumeClaimTemplate": "metadata:ObjectMeta spec:PersistentVolumeClaimSpec",
    "PersistentVolumeClaimVolumeSource": "claimName readOnly",
    "PersistentVolumeSpec": "accessModes awsElasticBlockStore:AWSElasticBlockStoreVolumeSource "
                            "azureDisk:AzureDiskVolumeSource azureFile:AzureFilePersistentVolumeSource capacity "
                            "cephfs:CephFSPersistentVolumeSource cinder:CinderPersistentVolumeSource "
                            "claimRef:ObjectReference csi:CSIPersistentVolumeSource fc:FCVolumeSource "
                            "flexVolume:FlexPersistentVolumeSource flocker:FlockerVolumeSource "
                            "gcePersistentDisk:GCEPersistentDiskVolumeSource "
                            "glusterfs:GlusterfsPersistentVolumeSource hostPath:HostPathVolumeSource "
                            "iscsi:ISCSIPersistentVolumeSource local:LocalVolumeSource mountOptions "
                            "nfs:NFSVolumeSource nodeAffinity:VolumeNodeAffinity persistentVolumeReclaimPolicy "
                            "photonPersistentDisk:PhotonPersistentDiskVolumeSource "
                            "portworxVolume:PortworxVolumeSource quobyte:QuobyteVolumeSource "
                            "rbd:RBDPersistentVolumeSource scaleIO:ScaleIOPersistentVolumeSource storageClassName "
                            "storageos:StorageOSPersistentVolumeSource volumeAttributesClassName volumeMode "
                            "vsphereVolume:VsphereVirtualDiskVolumeSource",
    "PersistentVolumeStatus": "lastPhaseTransitionTime message phase reason",
    "PhotonPersistentDiskVolumeSource": "fsType pdID",
    "Pod": "apiVersion kind metadata:ObjectMeta spec:PodSpec status:PodStatus",
    "PodAffinity": "preferredDuringSchedulingIgnoredDuringExecution:WeightedPodAffinityTerm "
                   "requiredDuringSchedulingIgnoredDuringExecution:PodAffinityTerm",
    "PodAffinityTerm": "labelSelector:LabelSelector matchLabelKeys mismatchLabelKeys "
                       "namespaceSelector:LabelSelector namespaces topologyKey",
    "PodAntiAffinity": "preferredDuringSchedulingIgnoredDuringExecution:WeightedPodAffinityTerm "
                       "requiredDuringSchedulingIgnoredDuringExecution:PodAffinityTerm",
    "PodCertificateProjection": "certificateChainPath credentialBundlePath keyPath keyType maxExpirationSeconds "
                                "signerName user userAnnotations",
    "PodCondition": "lastProbeTime lastTransitionTime message observedGeneration reason status type",
    "PodDNSConfig": "nameservers options:PodDNSConfigOption searches",
    "PodDNSConfigOption": "name value",
    "PodDisruptionBudget": "apiVersion kind metadata:ObjectMeta spec:PodDisruptionBudgetSpec "
                           "status:PodDisruptionBudgetStatus",
    "PodDisruptionBudgetSpec": "maxUnavailable minAvailable selector:LabelSelector unhealthyPodEvictionPolicy",
    "PodDisruptionBudgetStatus": "conditions:Condition currentHealthy desiredHealthy disruptedPods "
                                 "disruptionsAllowed expectedPods observedGeneration",
    "PodExtendedResourceClaimStatus": "requestMappings:ContainerExtendedResourceRequest resourceClaimName",
    "PodFailurePolicy": "rules:PodFailurePolicyRule",
    "PodFailurePolicyOnExitCodesRequirement": "containerName operator values",
    "PodFailurePolicyOnPodConditionsPattern": "status type",
    "PodFailurePolicyRule": "action onExitCodes:PodFailurePolicyOnExitCodesRequirement "
                            "onPodConditions:PodFailurePolicyOnPodConditionsPattern",
    "PodIP": "ip",
    "PodOS": "name",
    "PodReadinessGate": "conditionType",
    "PodResourceClaim": "name resourceClaimName resourceClaimTemplateName",
    "PodResourceClaimStatus": "name resourceClaimName",
    "PodSchedulingGate": "name",
    "PodSchedulingGroup": "podGroupName",
    "PodSecurityContext": "appArmorProfile:AppArmorProfile fsGroup fsGroupChangePolicy runAsGroup runAsNonRoot "
                          "runAsUser seLinuxChangePolicy seLinuxOptions:SELinuxOptions "
                          "seccompProfile:SeccompProfile supplementalGroups supplementalGroupsPolicy "
                          "sysctls:Sysctl windowsOptions:WindowsSecurityContextOptions",
    "PodSpec": "activeDeadlineSeconds affinity:Affinity automountServiceAccountToken containers:Container "
               "dnsConfig:PodDNSConfig dnsPolicy enableServiceLinks ephemeralContainers:EphemeralContainer "
               "evictionResponders:EvictionResponder hostAliases:HostAlias hostIPC hostNetwork hostPID hostUsers "
               "hostname hostnameOverride imagePullSecrets:LocalObjectReference initContainers:Container nodeName "
               "nodeSelector os:PodOS overhead preemptionPolicy priority priorityClassName "
               "readinessGates:PodReadinessGate resourceClaims:PodResourceClaim resources:ResourceRequirements "
               "restartPolicy runtimeClassName schedulerName schedulingGates:PodSchedulingGate "
               "schedulingGroup:PodSchedulingGroup securityContext:PodSecurityContext serviceAccount "
               "serviceAccountName setHostnameAsFQDN shareProcessNamespace subdomain "
               "terminationGracePeriodSeconds tolerations:Toleration "
               "topologySpreadConstraints:TopologySpreadConstraint volumes:Volume",
    "PodStatus": "allocatedResources conditions:PodCondition containerStatuses:ContainerStatus "
                 "ephemeralContainerStatuses:ContainerStatus "
                 "extendedResourceClaimStatus:PodExtendedResourceClaimStatus hostIP hostIPs:HostIP "
                 "initContainerStatuses:ContainerStatus message "
                 "nodeAllocatableResourceClaimStatuses:NodeAllocatableResourceClaimStatus nominatedNodeName "
                 "observedGeneration phase podIP podIPs:PodIP qosClass reason resize "
                 "resourceClaimStatuses:PodResourceClaimStatus resources:ResourceRequirements startTime "
                 "volumeHealth:PodVolumeHealth",
    "PodTemplateSpec": "metadata:ObjectMeta spec:PodSpec",
    "PodVolumeHealth": "healthConditions:VolumeHealthCondition lastTransitionTime name",
    "PodsMetricSource": "metric:MetricIdentifier target:MetricTarget",
    "PodsMetricStatus": "current:MetricValueStatus metric:MetricIdentifier",
    "PolicyRule": "apiGroups nonResourceURLs resourceNames resources verbs",
    "PortStatus": "error port protocol",
    "PortworxVolumeSource": "fsType readOnly volumeID",
    "PreferredSchedulingTerm": "preference:NodeSelectorTerm weight",
    "PriorityClass": "apiVersion description globalDefault kind metadata:ObjectMeta preemptionPolicy value",
    "Probe": "exec:ExecAction failureThreshold grpc:GRPCAction httpGet:HTTPGetAction initialDelaySeconds "
             "periodSeconds successThreshold tcpSocket:TCPSocketAction terminationGracePeriodSeconds "
             "timeoutSeconds",
    "ProjectedVolumeSource": "defaultMode defaultUser sources:VolumeProjection",
    "QuobyteVolumeSource": "group readOnly registry tenant user volume",
    "RBDPersistentVolumeSource": "fsType image keyring monitors pool readOnly secretRef:SecretReference user",
    "RBDVolumeSource": "fsType image keyring monitors pool readOnly secretRef:LocalObjectReference user",
    "ReplicaSet": "apiVersion kind metadata:ObjectMeta spec:ReplicaSetSpec status:ReplicaSetStatus",
    "ReplicaSetCondition": "lastTransitionTime message reason status type",
    "ReplicaSetSpec": "minReadySeconds replicas selector:LabelSelector template:PodTemplateSpec",
    "ReplicaSetStatus": "availableReplicas conditions:ReplicaSetCondition fullyLabeledReplicas observedGeneration "
                        "readyReplicas replicas terminatingReplicas",
    "ReplicationController": "apiVersion kind metadata:ObjectMeta spec:ReplicationControllerSpec "
                             "status:ReplicationControllerStatus",
    "ReplicationControllerCondition": "lastTransitionTime message reason status type",
    "ReplicationControllerSpec": "minReadySeconds replicas selector template:PodTemplateSpec",
    "ReplicationControllerStatus": "availableReplicas conditions:ReplicationControllerCondition "
                                   "fullyLabeledReplicas observedGeneration readyReplicas replicas",
    "ResourceClaim": "name request",
    "ResourceFieldSelector": "containerName divisor resource",
    "ResourceHealth": "health message resourceID",
    "ResourceMetricSource": "name target:MetricTarget",
    "ResourceMetricStatus": "current:MetricValueStatus name",
    "ResourceRequirements": "claims:ResourceClaim limits requests",
    "ResourceStatus": "name resources:ResourceHealth",
    "Role": "apiVersion kind metadata:ObjectMeta rules:PolicyRule",
    "RoleBinding": "apiVersion kind metadata:ObjectMeta roleRef:RoleRef subjects:Subject",
    "RoleRef": "apiGroup kind name",
    "RollingUpdateDaemonSet": "maxSurge maxUnavailable",
    "RollingUpdateDeployment": "maxSurge maxUnavailable",
    "RollingUpdateStatefulSetStrategy": "maxUnavailable partition",
    "SELinuxOptions": "level role type user",
    "ScaleIOPersistentVolumeSource": "fsType gateway protectionDomain readOnly secretRef:SecretReference "
                                     "sslEnabled storageMode storagePool system volumeName",
    "ScaleIOVolumeSource": "fsType gateway protectionDomain readOnly secretRef:LocalObjectReference sslEnabled "
                           "storageMode storagePool system volumeName",
    "SeccompProfile": "localhostProfile type",
    "Secret": "apiVersion data immutable kind metadata:ObjectMeta stringData type",
    "SecretEnvSource": "name optional",
    "SecretKeySelector": "key name optional",
    "SecretProjection": "items:KeyToPath name optional",
    "SecretReference": "name namespace",
    "SecretVolumeSource": "defaultMode defaultUser items:KeyToPath optional secretName",
    "SecurityContext": "allowPrivilegeEscalation appArmorProfile:AppArmorProfile capabilities:Capabilities "
                       "privileged procMount readOnlyRootFilesystem runAsGroup runAsNonRoot runAsUser "
                       "seLinuxOptions:SELinuxOptions seccompProfile:SeccompProfile "
                       "windowsOptions:WindowsSecurityContextOptions",
    "Service": "apiVersion kind metadata:ObjectMeta spec:ServiceSpec status:ServiceStatus",
    "ServiceAccount": "apiVersion automountServiceAccountToken imagePullSecrets:LocalObjectReference kind "
                      "metadata:ObjectMeta secrets:ObjectReference",
    "ServiceAccountTokenProjection": "audience expirationSeconds path user",
    "ServiceBackendPort": "name number",
    "ServicePort": "appProtocol name nodePort port protocol targetPort",
    "ServiceSpec": "allocateLoadBalancerNodePorts clusterIP clusterIPs externalIPs externalName "
                   "externalTrafficPolicy healthCheckNodePort internalTrafficPolicy ipFamilies ipFamilyPolicy "
                   "loadBalancerClass loadBalancerIP loadBalancerSourceRanges ports:ServicePort "
                   "publishNotReadyAddresses selector sessionAffinity sessionAffinityConfig:SessionAffinityConfig "
                   "trafficDistribution type",
    "ServiceStatus": "conditions:Condition loadBalancer:LoadBalancerStatus",
    "SessionAffinityConfig": "clientIP:ClientIPConfig",
    "SleepAction": "seconds",
    "StatefulSet": "apiVersion kind metadata:ObjectMeta spec:StatefulSetSpec status:StatefulSetStatus",
    "StatefulSetCondition": "lastTransitionTime message reason status type",
    "StatefulSetOrdinals": "start",
    "StatefulSetPersistentVolumeClaimRetentionPolicy": "whenDeleted whenScaled",
    "StatefulSetSpec": "minReadySeconds ordinals:StatefulSetOrdinals "
                       "persistentVolumeClaimRetentionPolicy:StatefulSetPersistentVolumeClaimRetentionPolicy "
                       "podManagementPolicy replicas revisionHistoryLimit selector:LabelSelector serviceName "
                       "template:PodTemplateSpec updateStrategy:StatefulSetUpdateStrategy "
                       "volumeClaimTemplates:PersistentVolumeClaim",
    "StatefulSetStatus": "availableReplicas collisionCount conditions:StatefulSetCondition currentReplicas "
                         "currentRevision observedGeneration readyReplicas replicas updateRevision "
                         "updatedReplicas",
    "StatefulSetUpdateStrategy": "rollingUpdate:RollingUpdateStatefulSetStrategy type",
    "StorageOSPersistentVolumeSource": "fsType readOnly secretRef:ObjectReference volumeName volumeNamespace",
    "StorageOSVolumeSource": "fsType readOnly secretRef:LocalObjectReference volumeName volumeNamespace",
    "Subject": "apiGroup kind name namespace",
    "SuccessPolicy": "rules:SuccessPolicyRule",
    "SuccessPolicyRule": "succeededCount succeededIndexes",
    "Sysctl": "name value",
    "TCPSocketAction": "host port",
    "Taint": "effect key timeAdded value",
    "Toleration": "effect key operator tolerationSeconds value",
    "TopologyConstraint": "key",
    "TopologySpreadConstraint": "labelSelector:LabelSelector matchLabelKeys maxSkew minDomains nodeAffinityPolicy "
                                "nodeTaintsPolicy topologyKey whenUnsatisfiable",
    "TypedLocalObjectReference": "apiGroup kind name",
    "TypedObjectReference": "apiGroup kind name namespace",
    "UncountedTerminatedPods": "failed succeeded",
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
    "VolumeHealthStatus": "healthConditions:VolumeHealthCondition lastTransitionTime",
    "VolumeMount": "bindMountOptions mountPath mountPropagation name readOnly recursiveReadOnly subPath "
                   "subPathExpr",
    "VolumeMountStatus": "mountPath name readOnly recursiveReadOnly volumeStatus:VolumeStatus",
    "VolumeNodeAffinity": "required:NodeSelector",
    "VolumeProjection": "clusterTrustBundle:ClusterTrustBundleProjection configMap:ConfigMapProjection "
                        "downwardAPI:DownwardAPIProjection podCertificate:PodCertificateProjection "
                        "secret:SecretProjection serviceAccountToken:ServiceAccountTokenProjection",
    "VolumeResourceRequirements": "limits requests",
    "VolumeStatus": "image:ImageVolumeStatus",
    "VsphereVirtualDiskVolumeSource": "fsType storagePolicyID storagePolicyName volumePath",
    "WeightedPodAffinityTerm": "podAffinityTerm:PodAffinityTerm weight",
    "WindowsSecurityContextOptions": "gmsaCredentialSpec gmsaCredentialSpecName hostProcess runAsUserName",
    "WorkloadPodGroupDisruptionMode": "all single",
    "WorkloadPodGroupGangSchedulingPolicy": "minCount",
    "WorkloadPodGroupResourceClaim": "name resourceClaimName resourceClaimTemplateName",
    "WorkloadPodGroupSchedulingConstraints": "topology:TopologyConstraint",
    "WorkloadPodGroupSchedulingPolicy": "basic gang:WorkloadPodGroupGangSchedulingPolicy",
}
