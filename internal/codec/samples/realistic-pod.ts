// internal/codec/samples/realistic-pod owns a typical scheduled Pod (≈2.9 KB of JSON, ≈1.3 KB of
// protobuf) as a controller-created pod looks, for benchmarks and size checks. No imports.

/** A running pod of a Deployment; `index` varies the name and uid so list items differ. */
export function realisticPod(index = 0): Record<string, unknown> {
  const suffix = index.toString(36).padStart(5, '0');
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `web-7d4b9c8f5d-${suffix}`,
      generateName: 'web-7d4b9c8f5d-',
      namespace: 'default',
      uid: `3f1c2b9e-8a7d-4c6b-9e5f-${(0x1a2b3c4d5e6f + index).toString(16).padStart(12, '0')}`,
      resourceVersion: String(123456 + index),
      creationTimestamp: '2024-01-02T03:04:05Z',
      labels: { app: 'web', 'pod-template-hash': '7d4b9c8f5d', tier: 'frontend' },
      annotations: { 'cluster.io/psp': 'restricted' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web-7d4b9c8f5d',
          uid: '11111111-2222-3333-4444-555555555555',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      volumes: [
        {
          name: 'kube-api-access-xyz',
          projected: {
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
            ],
            defaultMode: 420,
          },
        },
      ],
      containers: [
        {
          name: 'web',
          image: 'nginx:1.25.3',
          ports: [{ containerPort: 80, protocol: 'TCP' }],
          env: [
            { name: 'MODE', value: 'production' },
            { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
          ],
          resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
          volumeMounts: [{ name: 'kube-api-access-xyz', readOnly: true, mountPath: '/var/run/secrets/cluster.io/serviceaccount' }],
          livenessProbe: {
            httpGet: { path: '/healthz', port: 80, scheme: 'HTTP' },
            initialDelaySeconds: 10,
            timeoutSeconds: 1,
            periodSeconds: 10,
            successThreshold: 1,
            failureThreshold: 3,
          },
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      nodeName: 'node-1',
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.cluster.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.cluster.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: '2024-01-02T03:04:15Z' },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: '2024-01-02T03:04:05Z' },
      ],
      hostIP: '10.0.0.1',
      podIP: '10.244.1.5',
      podIPs: [{ ip: '10.244.1.5' }],
      startTime: '2024-01-02T03:04:05Z',
      containerStatuses: [
        {
          name: 'web',
          state: { running: { startedAt: '2024-01-02T03:04:10Z' } },
          ready: true,
          restartCount: 0,
          image: 'nginx:1.25.3',
          imageID: 'docker.io/library/nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
          containerID: 'containerd://abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789',
          started: true,
        },
      ],
      qosClass: 'Burstable',
    },
  };
}
