// Flow control toward one follower: the inflight window (count and bytes) and the progress
// state machine's handling of stale and fresh rejections.
import { describe, expect, it } from 'vitest';
import { Inflights } from './inflights.js';
import { Progress } from './progress.js';

describe('Inflights', () => {
  it('fills by count and by bytes and frees acknowledged messages', () => {
    const byCount = new Inflights(3, 0);
    byCount.add(1, 10);
    byCount.add(2, 10);
    expect(byCount.full()).toBe(false);
    byCount.add(3, 10);
    expect(byCount.full()).toBe(true);
    byCount.freeLE(2);
    expect(byCount.count()).toBe(1);
    expect(byCount.full()).toBe(false);

    const byBytes = new Inflights(100, 25);
    byBytes.add(1, 10);
    byBytes.add(2, 10);
    expect(byBytes.full()).toBe(false);
    byBytes.add(3, 10);
    expect(byBytes.full()).toBe(true);
    byBytes.freeLE(1);
    expect(byBytes.full()).toBe(false);
  });
});

describe('Progress', () => {
  const fresh = () => new Progress(6, new Inflights(2, 0), false);

  it('pipelines in replicate state until the window is full', () => {
    const pr = fresh();
    pr.match = 5;
    pr.becomeReplicate();
    pr.sentEntries(2, 20);
    expect(pr.next).toBe(8);
    expect(pr.isPaused()).toBe(false);
    pr.sentEntries(1, 10);
    expect(pr.isPaused()).toBe(true);
    expect(pr.maybeUpdate(7)).toBe(true);
    pr.inflights.freeLE(7);
    expect(pr.isPaused()).toBe(false);
  });

  it('probes one message at a time', () => {
    const pr = fresh();
    pr.sentEntries(1, 10);
    expect(pr.isPaused()).toBe(true);
  });

  it('ignores stale rejections and backs off to the hint on fresh ones', () => {
    const pr = fresh(); // probe, next 6
    expect(pr.maybeDecrTo(3, 0)).toBe(false); // answers an older probe
    expect(pr.maybeDecrTo(5, 2)).toBe(true);
    expect(pr.next).toBe(3);
    const rep = fresh();
    rep.match = 5;
    rep.becomeReplicate();
    expect(rep.maybeDecrTo(4, 4)).toBe(false); // at or below match: stale
    rep.sentEntries(3, 30);
    expect(rep.maybeDecrTo(7, 5)).toBe(true);
    expect(rep.next).toBe(6);
  });

  it('resumes after a snapshot at the snapshot index', () => {
    const pr = fresh();
    pr.becomeSnapshot(20);
    expect(pr.isPaused()).toBe(true);
    pr.becomeProbe();
    expect(pr.next).toBe(21);
  });
});
