/**
 * The node's own check of the pod fields it joins onto host paths: `<podLogsRoot>/<ns>_<name>_<uid>`,
 * `<podsRoot>/<uid>/volumes/kubernetes.io~empty-dir/<volume>/<subPath>` and
 * `<podsRoot>/<uid>/containers/<container>`. kube-apiserver validates all of them, but a pod
 * may come from elsewhere (a static pod file, a test, a server that did not validate), and the
 * kubelet itself re-checks `subPath` for the same reason. A pod that fails is refused before
 * anything is created on the node.
 *
 * @module
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import {
  isDns1123Label,
  isDns1123Subdomain,
  type PathFieldError,
  validateLocalDescendingPath,
  validatePathComponent,
} from '@nodeagent/kubecontainer';

function push(out: PathFieldError[], field: string, value: string, details: readonly string[]): void {
  for (const detail of details) out.push({ field, value, detail });
}

/**
 * The pod-level fields in host paths: namespace (DNS-1123 label), name (DNS-1123 subdomain),
 * UID (one path component), volume names (DNS-1123 labels). Empty when the pod is safe to lay
 * out on disk.
 */
export function podHostPathErrors(pod: V1Pod): PathFieldError[] {
  const out: PathFieldError[] = [];
  const m = pod.metadata;
  push(out, 'metadata.namespace', m?.namespace ?? '', isDns1123Label(m?.namespace ?? ''));
  push(out, 'metadata.name', m?.name ?? '', isDns1123Subdomain(m?.name ?? ''));
  push(out, 'metadata.uid', m?.uid ?? '', validatePathComponent(m?.uid ?? ''));
  (pod.spec?.volumes ?? []).forEach((v, i) => {
    push(out, `spec.volumes[${i}].name`, v.name, isDns1123Label(v.name));
  });
  return out;
}

/** Where `container` sits in the pod spec (`spec.containers[0]`, `spec.initContainers[1]`). */
export function containerFieldPath(pod: V1Pod, container: V1Container): string {
  const init = (pod.spec?.initContainers ?? []).indexOf(container);
  if (init >= 0) return `spec.initContainers[${init}]`;
  const app = (pod.spec?.containers ?? []).indexOf(container);
  return app >= 0 ? `spec.containers[${app}]` : `container "${container.name}"`;
}

/**
 * The container-level fields in host paths: its name (DNS-1123 label) and each volume mount's
 * `subPath` / `subPathExpr` as written (relative, no `..`; `subPathExpr` is checked again after
 * expansion). Empty when valid.
 */
export function containerHostPathErrors(pod: V1Pod, container: V1Container): PathFieldError[] {
  const out: PathFieldError[] = [];
  const at = containerFieldPath(pod, container);
  push(out, `${at}.name`, container.name, isDns1123Label(container.name));
  (container.volumeMounts ?? []).forEach((vm, j) => {
    if (vm.subPath)
      push(out, `${at}.volumeMounts[${j}].subPath`, vm.subPath, validateLocalDescendingPath(vm.subPath));
    if (vm.subPathExpr) {
      push(
        out,
        `${at}.volumeMounts[${j}].subPathExpr`,
        vm.subPathExpr,
        validateLocalDescendingPath(vm.subPathExpr),
      );
      if (vm.subPath)
        push(out, `${at}.volumeMounts[${j}].subPathExpr`, vm.subPathExpr, [
          'subPathExpr and subPath are mutually exclusive',
        ]);
    }
  });
  return out;
}
