/**
 * Test doubles for `@nodeagent/iptables` users: an in-memory iptables with restore
 * semantics, and the rule sorter kube-proxy's tests compare payloads with.
 *
 * @example
 * ```ts
 * import { FakeIptablesExecutor } from '@nodeagent/iptables/testing';
 *
 * const ipt = new FakeIptablesExecutor();
 * await ipt.restore('*nat\n:KUBE-SERVICES - [0:0]\nCOMMIT\n');
 * ipt.chains('nat'); // ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING', 'KUBE-SERVICES']
 * ```
 *
 * @packageDocumentation
 */
export { FakeIptablesExecutor, type FakeIptablesExecutorOptions } from './fake-executor.js';
export { sortRestoreText } from './sort-restore-text.js';
