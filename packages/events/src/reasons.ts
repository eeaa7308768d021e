/**
 * The kubelet's event reasons, spelled and named as upstream `pkg/kubelet/events` (plus the
 * eviction manager's `Evicted` and the node status setters' pressure reasons), so
 * `kubectl get events --field-selector reason=BackOff` means the same here.
 *
 * @module
 */

// Container events
/** `Created`: the container was created. */
export const CreatedContainer = 'Created';
/** `Started`: the container was started. */
export const StartedContainer = 'Started';
/** `Failed`: creating the container failed. */
export const FailedToCreateContainer = 'Failed';
/** `Failed`: starting the container failed. */
export const FailedToStartContainer = 'Failed';
/** `Killing`: the container is being stopped. */
export const KillingContainer = 'Killing';
/** `Preempting`: the container is stopped to admit a critical pod. */
export const PreemptContainer = 'Preempting';
/** `BackOff`: restarting a failed container is backing off (CrashLoopBackOff). */
export const BackOffStartContainer = 'BackOff';
/** `ExceededGracePeriod`: the runtime did not stop the container within the grace period. */
export const ExceededGracePeriod = 'ExceededGracePeriod';

// Pod events
/** `FailedKillPod`: killing the pod failed. */
export const FailedToKillPod = 'FailedKillPod';
/** `FailedCreatePodContainer`: creating the pod's cgroup failed. */
export const FailedToCreatePodContainer = 'FailedCreatePodContainer';
/** `Failed`: making the pod's data directories failed. */
export const FailedToMakePodDataDirectories = 'Failed';
/** `NetworkNotReady`: the pod cannot start because the network plugin is not ready. */
export const NetworkNotReady = 'NetworkNotReady';

// Image events
/** `Pulling`: pulling the image started. */
export const PullingImage = 'Pulling';
/** `Pulled`: the image was pulled, or is already present. */
export const PulledImage = 'Pulled';
/** `Failed`: pulling the image failed. */
export const FailedToPullImage = 'Failed';
/** `InspectFailed`: inspecting the image failed. */
export const FailedToInspectImage = 'InspectFailed';
/** `ErrImageNeverPull`: the image is absent and the pull policy is Never. */
export const ErrImageNeverPullPolicy = 'ErrImageNeverPull';
/** `BackOff`: pulling the image is backing off (ImagePullBackOff). */
export const BackOffPullImage = 'BackOff';

// Kubelet (node) events
/** `NodeReady`: the node became Ready. */
export const NodeReady = 'NodeReady';
/** `NodeNotReady`: the node became NotReady. */
export const NodeNotReady = 'NodeNotReady';
/** `NodeSchedulable`: the node became schedulable. */
export const NodeSchedulable = 'NodeSchedulable';
/** `NodeNotSchedulable`: the node became unschedulable. */
export const NodeNotSchedulable = 'NodeNotSchedulable';
/** `Starting`: the kubelet started ("Starting kubelet."). */
export const StartingKubelet = 'Starting';
/** `KubeletSetupFailed`: the kubelet could not set itself up. */
export const KubeletSetupFailed = 'KubeletSetupFailed';
/** `FailedAttachVolume`. */
export const FailedAttachVolume = 'FailedAttachVolume';
/** `FailedMount`: setting up a volume failed. */
export const FailedMountVolume = 'FailedMount';
/** `VolumeResizeFailed`. */
export const VolumeResizeFailed = 'VolumeResizeFailed';
/** `VolumeResizeSuccessful`. */
export const VolumeResizeSuccess = 'VolumeResizeSuccessful';
/** `FileSystemResizeFailed`. */
export const FileSystemResizeFailed = 'FileSystemResizeFailed';
/** `FileSystemResizeSuccessful`. */
export const FileSystemResizeSuccess = 'FileSystemResizeSuccessful';
/** `FailedMapVolume`. */
export const FailedMapVolume = 'FailedMapVolume';
/** `AlreadyMountedVolume`. */
export const WarnAlreadyMountedVolume = 'AlreadyMountedVolume';
/** `SuccessfulAttachVolume`. */
export const SuccessfulAttachVolume = 'SuccessfulAttachVolume';
/** `SuccessfulMountVolume`. */
export const SuccessfulMountVolume = 'SuccessfulMountVolume';
/** `Rebooted`: the node rebooted (boot ID changed). */
export const NodeRebooted = 'Rebooted';
/** `Shutdown`: the node is shutting down. */
export const NodeShutdown = 'Shutdown';
/** `ContainerGCFailed`. */
export const ContainerGCFailed = 'ContainerGCFailed';
/** `ImageGCFailed`. */
export const ImageGCFailed = 'ImageGCFailed';
/** `FailedNodeAllocatableEnforcement`. */
export const FailedNodeAllocatableEnforcement = 'FailedNodeAllocatableEnforcement';
/** `NodeAllocatableEnforced`. */
export const SuccessfulNodeAllocatableEnforcement = 'NodeAllocatableEnforced';
/** `SandboxChanged`: the pod sandbox changed; it will be killed and re-created. */
export const SandboxChanged = 'SandboxChanged';
/** `FailedCreatePodSandBox`. */
export const FailedCreatePodSandBox = 'FailedCreatePodSandBox';
/** `FailedPodSandBoxStatus`. */
export const FailedStatusPodSandBox = 'FailedPodSandBoxStatus';
/** `FailedMountOnFilesystemMismatch`. */
export const FailedMountOnFilesystemMismatch = 'FailedMountOnFilesystemMismatch';
/** `FailedPrepareDynamicResources`. */
export const FailedPrepareDynamicResources = 'FailedPrepareDynamicResources';
/** `PossibleMemoryBackedVolumesOnDisk`. */
export const PossibleMemoryBackedVolumesOnDisk = 'PossibleMemoryBackedVolumesOnDisk';
/** `CgroupV1`: the node runs cgroup v1 (deprecated). */
export const CgroupV1 = 'CgroupV1';

// Image manager events
/** `InvalidDiskCapacity`. */
export const InvalidDiskCapacity = 'InvalidDiskCapacity';
/** `FreeDiskSpaceFailed`. */
export const FreeDiskSpaceFailed = 'FreeDiskSpaceFailed';

// Probe events
/** `Unhealthy`: a probe failed or errored. */
export const ContainerUnhealthy = 'Unhealthy';
/** `ProbeWarning`: a probe succeeded with a warning. */
export const ContainerProbeWarning = 'ProbeWarning';

// Pod worker, config and lifecycle hook events
/** `FailedSync`: syncing the pod failed. */
export const FailedSync = 'FailedSync';
/** `FailedValidation`: a pod from a file or URL source is invalid. */
export const FailedValidation = 'FailedValidation';
/** `FailedPostStartHook`. */
export const FailedPostStartHook = 'FailedPostStartHook';
/** `FailedPreStopHook`. */
export const FailedPreStopHook = 'FailedPreStopHook';

// Eviction manager (pkg/kubelet/eviction)
/** `Evicted`: the pod was evicted under node pressure. */
export const Evicted = 'Evicted';
/** `EvictionThresholdMet`: a node event, "Attempting to reclaim <resource>". */
export const EvictionThresholdMet = 'EvictionThresholdMet';

// Node status setters (pkg/kubelet/nodestatus): pressure condition transitions
/** `NodeHasSufficientMemory`. */
export const NodeHasSufficientMemory = 'NodeHasSufficientMemory';
/** `NodeHasInsufficientMemory`. */
export const NodeHasInsufficientMemory = 'NodeHasInsufficientMemory';
/** `NodeHasNoDiskPressure`. */
export const NodeHasNoDiskPressure = 'NodeHasNoDiskPressure';
/** `NodeHasDiskPressure`. */
export const NodeHasDiskPressure = 'NodeHasDiskPressure';
/** `NodeHasSufficientPID`. */
export const NodeHasSufficientPID = 'NodeHasSufficientPID';
/** `NodeHasInsufficientPID`. */
export const NodeHasInsufficientPID = 'NodeHasInsufficientPID';
