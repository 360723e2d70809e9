// raft/core/index.ts is the public surface of the consensus core: RawNode and its Ready
// contract, MemoryStorage, the injected seams (RandomSource, RaftLogger), ConfChange encoding
// and the errors. Drivers import from here, not from the individual modules.

export { RawNode, type Ready, type Status, type ProgressStatus, type RawNodeConfig } from './raw-node.js';
export { StateType, type RaftConfig, type SoftState } from './raft.js';
export { MemoryStorage } from './memory-storage.js';
export type { ReadState, ReadOnlyOption } from './read-only.js';
export type { RandomSource } from './random.js';
export { type RaftLogger, type RaftLogLevel, noopLogger, levelLogger } from './logger.js';
export { encodeConfChange, decodeConfChange, describeConfChange, isLeaveJoint } from './conf-change.js';
export { describeEntry, describeMessage, describeHardState, describeSnapshot } from './describe.js';
export { emptyConfState, emptySnapshot, isEmptySnapshot } from './snapshots.js';
export * from './errors.js';
