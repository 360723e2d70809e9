// raft/linearizability/index.ts: the reusable linearizability checker (see checker.ts's header
// for the API) and the key-value model, for in-process and real-process Raft tests alike.
export { checkOperations, type CheckResult, type CheckVerdict, type Model, type Operation } from './checker.js';
export { kvModel, type KvInput, type KvOutput, type KvOperation } from './kv-model.js';
