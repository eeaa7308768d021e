/**
 * Test helpers for code that drives IPVS: {@link FakeIpvsExecutor}, an in-memory kernel that
 * applies the same operations the real executor sends to `ipvsadm`, `ipset` and `ip`.
 *
 * @packageDocumentation
 */
export { FakeIpvsExecutor } from './fake-executor.js';
