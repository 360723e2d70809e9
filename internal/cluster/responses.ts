// internal/cluster/responses owns the answers of the /cluster/v1 endpoints: JSON bodies and
// Kubernetes Status failures (with Retry-After on a 503, which joiners and clients retry).
// Imports: nothing from the project.

export const jsonResponse = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body, null, 2), { status, headers: { 'content-type': 'application/json' } });

export const statusBody = (code: number, reason: string, message: string) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });

export const statusResponse = (code: number, reason: string, message: string): Response =>
  new Response(JSON.stringify(statusBody(code, reason, message)), {
    status: code,
    headers: { 'content-type': 'application/json', ...(code === 503 ? { 'retry-after': '1' } : {}) },
  });
