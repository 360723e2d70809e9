// internal/jit/tick-shape owns one workaround for V8 11.3 (Node 20): it keeps the hidden
// class of process.nextTick's queue entries alive. nextTick builds each entry as an object literal
// with two symbol keys, and only live entries reach that literal's hidden classes. The server's
// low-memory collection once it is ready (internal/heap) runs while the tick queue is empty, and
// it frees those classes. From then on, measured in the server, every nextTick defined its
// properties through V8's runtime: 0.7–1.1 µs a call instead of 0.1–0.2 µs, for the life of the
// process. Node's HTTP/2 stream write calls nextTick once per write, so a watch fan-out pays it on
// every stream in every delivery round. One entry held for good keeps the classes, and the
// literal stays fast.
// Imports: node only.

import { executionAsyncResource } from 'node:async_hooks';

let kept: Promise<object> | undefined;

/**
 * Holds one nextTick queue entry for the life of the process (the resource of a tick's own
 * callback is its entry). Call it before anything runs a full collection; later calls return the
 * same entry.
 */
export function keepTickShape(): Promise<object> {
  kept ??= new Promise((resolve) => process.nextTick(() => resolve(executionAsyncResource())));
  return kept;
}
