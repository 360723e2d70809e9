// e2e/support/webhook-service owns the manifest that makes a test webhook server on 127.0.0.1
// reachable through a service reference: a Service on port 443 and the Endpoints that point it
// at the server's port (the API server resolves endpoints itself). Test-only.

export function webhookServiceYaml(name: string, port: number): string {
  return `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: default}
spec:
  ports: [{name: https, port: 443, targetPort: ${port}}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: ${name}, namespace: default}
subsets:
- addresses: [{ip: 127.0.0.1}]
  ports: [{name: https, port: ${port}}]
`;
}
