// internal/registry/hpa-conversion owns converting HorizontalPodAutoscalers between
// autoscaling/v1 (one CPU utilization target) and autoscaling/v2 (a list of metrics, behavior,
// conditions), the storage version. What v1 cannot express travels in annotations, as
// upstream does, so a v2 → v1 → v2 round trip loses nothing. Imports: conversion.

import { registerConverter, type JsonObject } from './conversion.js';

const ANNOTATION = {
  metrics: 'autoscaling.alpha.kubernetes.io/metrics',
  currentMetrics: 'autoscaling.alpha.kubernetes.io/current-metrics',
  conditions: 'autoscaling.alpha.kubernetes.io/conditions',
  behavior: 'autoscaling.alpha.kubernetes.io/behavior',
};

type Obj = JsonObject;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const isCpuUtilization = (m: Obj): boolean => {
  const r = obj(m.resource);
  const t = obj(r.target);
  return m.type === 'Resource' && r.name === 'cpu' && t.type === 'Utilization' && typeof t.averageUtilization === 'number';
};

function toV1(src: Obj): Obj {
  const out: Obj = structuredClone(src);
  const meta = obj(out.metadata);
  const annotations: Record<string, string> = { ...(obj(meta.annotations) as Record<string, string>) };
  const spec = obj(out.spec);
  const metrics = Array.isArray(spec.metrics) ? (spec.metrics as Obj[]) : [];
  const cpu = metrics.find(isCpuUtilization);
  const rest = metrics.filter((m) => m !== cpu);
  const v1spec: Obj = { scaleTargetRef: spec.scaleTargetRef, maxReplicas: spec.maxReplicas };
  if (spec.minReplicas !== undefined) v1spec.minReplicas = spec.minReplicas;
  if (cpu) v1spec.targetCPUUtilizationPercentage = obj(obj(cpu.resource).target).averageUtilization;
  if (rest.length) annotations[ANNOTATION.metrics] = JSON.stringify(rest);
  if (spec.behavior !== undefined) annotations[ANNOTATION.behavior] = JSON.stringify(spec.behavior);
  out.spec = v1spec;
  const status = obj(out.status);
  if (out.status !== undefined) {
    const current = Array.isArray(status.currentMetrics) ? (status.currentMetrics as Obj[]) : [];
    const currentCpu = current.find((m) => m.type === 'Resource' && obj(m.resource).name === 'cpu' && typeof obj(obj(m.resource).current).averageUtilization === 'number');
    const v1status: Obj = {};
    for (const k of ['observedGeneration', 'lastScaleTime', 'currentReplicas', 'desiredReplicas']) if (status[k] !== undefined) v1status[k] = status[k];
    if (currentCpu) v1status.currentCPUUtilizationPercentage = obj(obj(currentCpu.resource).current).averageUtilization;
    const otherCurrent = current.filter((m) => m !== currentCpu);
    if (otherCurrent.length) annotations[ANNOTATION.currentMetrics] = JSON.stringify(otherCurrent);
    if (Array.isArray(status.conditions) && status.conditions.length) annotations[ANNOTATION.conditions] = JSON.stringify(status.conditions);
    out.status = v1status;
  }
  if (Object.keys(annotations).length) meta.annotations = annotations;
  out.metadata = meta;
  return out;
}

function parseAnnotation(annotations: Record<string, string>, key: string): unknown {
  const raw = annotations[key];
  delete annotations[key];
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

function toV2(src: Obj): Obj {
  const out: Obj = structuredClone(src);
  const meta = obj(out.metadata);
  const annotations: Record<string, string> = { ...(obj(meta.annotations) as Record<string, string>) };
  const spec = obj(out.spec);
  const metrics: Obj[] = [];
  if (typeof spec.targetCPUUtilizationPercentage === 'number') {
    metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage } } });
  }
  const extra = parseAnnotation(annotations, ANNOTATION.metrics);
  if (Array.isArray(extra)) metrics.push(...(extra as Obj[]));
  const v2spec: Obj = { scaleTargetRef: spec.scaleTargetRef, maxReplicas: spec.maxReplicas };
  if (spec.minReplicas !== undefined) v2spec.minReplicas = spec.minReplicas;
  if (metrics.length) v2spec.metrics = metrics;
  const behavior = parseAnnotation(annotations, ANNOTATION.behavior);
  if (behavior !== undefined) v2spec.behavior = behavior;
  out.spec = v2spec;
  const currentExtra = parseAnnotation(annotations, ANNOTATION.currentMetrics);
  const conditions = parseAnnotation(annotations, ANNOTATION.conditions);
  if (out.status !== undefined) {
    const status = obj(out.status);
    const v2status: Obj = {};
    for (const k of ['observedGeneration', 'lastScaleTime', 'currentReplicas', 'desiredReplicas']) if (status[k] !== undefined) v2status[k] = status[k];
    const current: Obj[] = [];
    if (typeof status.currentCPUUtilizationPercentage === 'number') {
      current.push({ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } } });
    }
    if (Array.isArray(currentExtra)) current.push(...(currentExtra as Obj[]));
    if (current.length) v2status.currentMetrics = current;
    if (Array.isArray(conditions)) v2status.conditions = conditions;
    if (v2status.desiredReplicas === undefined) v2status.desiredReplicas = 0;
    out.status = v2status;
  }
  if (Object.keys(annotations).length) meta.annotations = annotations;
  else delete meta.annotations;
  out.metadata = meta;
  return out;
}

export function registerHpaConversion(): void {
  registerConverter('autoscaling/horizontalpodautoscalers', (o, from, to) => {
    if (from.version === to.version) return structuredClone(o);
    return to.version === 'v1' ? toV1(o) : toV2(o);
  });
}
