import { describe, it, expect } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { ApiCatalog } from '../schema/catalog.js';
import { convertObject } from './conversion.js';
import { registerHpaConversion } from './hpa-conversion.js';

registerHpaConversion();
const catalog = new ApiCatalog(createNaming('kubernetes'));
const v1 = catalog.resource('autoscaling', 'v1', 'horizontalpodautoscalers')!;
const v2 = catalog.resource('autoscaling', 'v2', 'horizontalpodautoscalers')!;

describe('HorizontalPodAutoscaler conversion', () => {
  const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
  it('moves the CPU target between targetCPUUtilizationPercentage and a Resource metric', () => {
    const fromV1 = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h' }, spec: { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 70 } };
    const asV2 = convertObject(fromV1, v1, v2);
    expect(asV2).toEqual({
      apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h' },
      spec: { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 5, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }] },
    });
    expect(convertObject(asV2, v2, v1)).toEqual(fromV1);
  });

  it('keeps what v1 cannot say in annotations, so v2 → v1 → v2 is lossless', () => {
    const original = {
      apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h', labels: { a: 'b' } },
      spec: {
        scaleTargetRef: ref, maxReplicas: 9,
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
          { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' } } },
        ],
        behavior: { scaleDown: { stabilizationWindowSeconds: 60 } },
      },
      status: { currentReplicas: 2, desiredReplicas: 3, conditions: [{ type: 'AbleToScale', status: 'True' }] },
    };
    const asV1 = convertObject(original, v2, v1);
    expect(asV1.spec).toEqual({ scaleTargetRef: ref, maxReplicas: 9, targetCPUUtilizationPercentage: 50 });
    expect(Object.keys((asV1.metadata as { annotations: object }).annotations).sort()).toEqual([
      'autoscaling.alpha.kubernetes.io/behavior', 'autoscaling.alpha.kubernetes.io/conditions', 'autoscaling.alpha.kubernetes.io/metrics',
    ]);
    expect(convertObject(asV1, v1, v2)).toEqual(original);
  });
});
