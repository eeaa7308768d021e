import { defineConfig } from 'vitest/config';

// Benchmarks are vitest files that measure and print comparable figures (ours next to a
// reference measured in the same run). They assert nothing about speed.
export default defineConfig({
  resolve: { conditions: ['@nodeagent/source'] },
  ssr: { resolve: { conditions: ['@nodeagent/source'], externalConditions: ['@nodeagent/source'] } },
  test: {
    include: ['packages/*/bench/**/*.bench.ts', 'examples/*/bench/**/*.bench.ts', 'test/bench/**/*.bench.ts'],
    testTimeout: 30 * 60_000,
    hookTimeout: 10 * 60_000,
    pool: 'forks',
    fileParallelism: false,
    disableConsoleIntercept: true,
  },
});
