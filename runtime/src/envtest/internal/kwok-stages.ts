/**
 * What KWOK does to the fake nodes and their pods: its configuration, as `kwok.x-k8s.io/v1alpha1` Stage
 * documents. kwok v0.8.0 has no built-in stages (without these it stops with "no stages found").
 *
 * Each Stage selects objects (`selector.matchExpressions` over jq-like paths) and renders a status patch
 * from a Go template (`next.statusTemplate`), or deletes them (`next.delete`). Besides Go's and sprig's
 * functions, kwok's templates have `Now`, `Quote` (a JSON string), `YAML`, `Version`, `NodeIP` (the
 * `--node-ip` flag, the same for every node), `NodeIPsWith <node>` and
 * `PodIPsWith <node> <hostNetwork> <uid> <name> <namespace>` (an address from `--cidr`).
 *
 * The stages here make a node Ready at once and a pod Running and Ready as soon as it is bound; pods of a
 * Job then succeed; a pod being deleted goes away. Nothing runs, so nothing ever fails or restarts.
 */

/**
 * Makes a fake node Ready, with an address, capacity (its own, else a large default) and node info. The only
 * address is the InternalIP (`--node-ip`, 127.0.0.1), no Hostname: the apiserver's calls to a node's kubelet
 * (logs, exec, port-forward) then fail at once with "connection refused" rather than wait for a DNS lookup
 * of the node's name.
 */
const NODE_READY = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: kubesmith-node-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
      - key: '.status.conditions.[] | select(.type == "Ready") | .status'
        operator: NotIn
        values: ['True']
  next:
    statusTemplate: |
      {{ $now := Now | Quote }}
      {{ $since := or .metadata.creationTimestamp Now | Quote }}
      phase: Running
      conditions:
        - type: Ready
          status: "True"
          reason: KubeletReady
          message: fake node run by kwok (kubesmith envtest)
          lastHeartbeatTime: {{ $now }}
          lastTransitionTime: {{ $since }}
        {{ range list "MemoryPressure" "DiskPressure" "PIDPressure" "NetworkUnavailable" }}
        - type: {{ . }}
          status: "False"
          reason: FakeNode
          message: fake node run by kwok (kubesmith envtest)
          lastHeartbeatTime: {{ $now }}
          lastTransitionTime: {{ $since }}
        {{ end }}
      addresses:
        - type: InternalIP
          address: {{ NodeIP | Quote }}
      {{ with .status.capacity }}
      capacity: {{ toJson . }}
      {{ else }}
      capacity: { cpu: "1k", memory: 1Ti, pods: "1M" }
      {{ end }}
      {{ with (or .status.allocatable .status.capacity) }}
      allocatable: {{ toJson . }}
      {{ else }}
      allocatable: { cpu: "1k", memory: 1Ti, pods: "1M" }
      {{ end }}
      nodeInfo:
        architecture: amd64
        operatingSystem: linux
        kubeletVersion: {{ printf "kwok-%s" Version | Quote }}
        kubeProxyVersion: {{ printf "kwok-%s" Version | Quote }}
        containerRuntimeVersion: {{ printf "kwok-%s" Version | Quote }}
        kernelVersion: {{ printf "kwok-%s" Version | Quote }}
        osImage: ""
        machineID: ""
        systemUUID: ""
        bootID: ""
`;

/**
 * A bound pod that is Pending becomes Running and Ready: every container running, init containers
 * completed (sidecars, restartPolicy Always, running), a host IP and a pod IP.
 */
const POD_RUNNING = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: kubesmith-pod-running
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
      - key: .metadata.deletionTimestamp
        operator: DoesNotExist
      - key: .status.phase
        operator: In
        values: [Pending]
  next:
    statusTemplate: |
      {{ $now := Now | Quote }}
      phase: Running
      startTime: {{ $now }}
      conditions:
        {{ range list "Initialized" "ContainersReady" "Ready" }}
        - type: {{ . }}
          status: "True"
          lastTransitionTime: {{ $now }}
        {{ end }}
        {{ range .spec.readinessGates }}
        - type: {{ .conditionType | Quote }}
          status: "True"
          lastTransitionTime: {{ $now }}
        {{ end }}
      containerStatuses:
        {{ range .spec.containers }}
        - name: {{ .name | Quote }}
          image: {{ .image | Quote }}
          ready: true
          started: true
          restartCount: 0
          state: { running: { startedAt: {{ $now }} } }
        {{ end }}
      initContainerStatuses:
        {{ range .spec.initContainers }}
        - name: {{ .name | Quote }}
          image: {{ .image | Quote }}
          ready: true
          restartCount: 0
          {{ if eq (or .restartPolicy "") "Always" }}
          started: true
          state: { running: { startedAt: {{ $now }} } }
          {{ else }}
          started: false
          state: { terminated: { exitCode: 0, reason: Completed, startedAt: {{ $now }}, finishedAt: {{ $now }} } }
          {{ end }}
        {{ end }}
      {{ with NodeIPsWith .spec.nodeName }}
      hostIP: {{ index . 0 | Quote }}
      hostIPs: [{{ range $i, $ip := . }}{{ if $i }}, {{ end }}{ ip: {{ $ip | Quote }} }{{ end }}]
      {{ end }}
      {{ with PodIPsWith .spec.nodeName (or .spec.hostNetwork false) (or .metadata.uid "") (or .metadata.name "") (or .metadata.namespace "") }}
      podIP: {{ index . 0 | Quote }}
      podIPs: [{{ range $i, $ip := . }}{{ if $i }}, {{ end }}{ ip: {{ $ip | Quote }} }{{ end }}]
      {{ end }}
`;

/** A running pod owned by a Job finishes at once, successfully. */
const POD_SUCCEEDED = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: kubesmith-job-pod-succeeded
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
      - key: .metadata.deletionTimestamp
        operator: DoesNotExist
      - key: .status.phase
        operator: In
        values: [Running]
      - key: .metadata.ownerReferences.[].kind
        operator: In
        values: [Job]
  next:
    statusTemplate: |
      {{ $now := Now | Quote }}
      phase: Succeeded
      containerStatuses:
        {{ range .spec.containers }}
        - name: {{ .name | Quote }}
          image: {{ .image | Quote }}
          ready: false
          started: false
          restartCount: 0
          state: { terminated: { exitCode: 0, reason: Completed, startedAt: {{ $now }}, finishedAt: {{ $now }} } }
        {{ end }}
`;

/** A pod being deleted is removed at once: no kubelet waits for containers to stop. */
const POD_GONE = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: kubesmith-pod-gone
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
      - key: .metadata.deletionTimestamp
        operator: Exists
  next:
    delete: true
`;

/** The `--config` file of kwok: the stages above as one multi-document YAML. */
export function kwokConfiguration(): string {
  return [NODE_READY, POD_RUNNING, POD_SUCCEEDED, POD_GONE].map((doc) => `---${doc}`).join('');
}
