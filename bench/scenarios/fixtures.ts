// bench/scenarios/fixtures owns the objects the bench writes: a pod in a common shape (labels,
// annotations, a container with args, a port, env and resources, the default service account
// without a token volume), padded by the bench to 2 KB
// as the server serves it (managedFields and defaults included), and a Deployment for the
// apply scenario. Bodies are templates: `{n}`/`{m}` may
// appear in names and values (see load/request-template). Imports: none.

export interface PodOptions {
  namespace: string;
  /** Name, may hold placeholders (`bench-c-{n}`). */
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Characters of an extra annotation, to bring the served object to a chosen size. */
  padding?: number;
}

/** The annotation that pads pods to the bench's object size. */
export const PADDING_ANNOTATION = 'bench/padding';

export function podManifest(o: PodOptions): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: o.name,
      namespace: o.namespace,
      labels: { app: 'bench', tier: 'backend', ...o.labels },
      annotations: { 'bench/owner': 'make-bench', ...o.annotations, ...(o.padding ? { [PADDING_ANNOTATION]: 'x'.repeat(o.padding) } : {}) },
    },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'registry.example/team/app:1.27.3',
          args: ['--listen=:8080'],
          ports: [{ name: 'http', containerPort: 8080 }],
          env: [{ name: 'LOG_LEVEL', value: 'info' }],
          resources: { requests: { cpu: '100m', memory: '128Mi' } },
        },
      ],
      nodeSelector: { disk: 'ssd' },
      // As a client that read its pod back sends it: the account the ServiceAccount plugin
      // would default, and no token volume (the bench measures the plain path; the update
      // round's PUT of this same body would otherwise drop the volume create added).
      serviceAccountName: 'default',
      automountServiceAccountToken: false,
      // Tolerates every NoExecute taint, so DefaultTolerationSeconds adds nothing at create and
      // the update round's unconditional PUT of this same body changes no toleration (a pod's
      // tolerations may only be added to).
      tolerations: [{ operator: 'Exists', effect: 'NoExecute' }],
    },
  };
}

export function podTemplate(o: PodOptions): string {
  return JSON.stringify(podManifest(o));
}

export function deploymentManifest(namespace: string, name: string, replicas: number): Record<string, unknown> {
  const pod = podManifest({ namespace, name: 'unused' });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas,
      // The same selector for every bench Deployment, so one PUT body fits them all.
      selector: { matchLabels: { app: 'bench-deployment' } },
      template: { metadata: { labels: { app: 'bench-deployment' } }, spec: pod.spec },
    },
  };
}
