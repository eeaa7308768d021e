import { defineConfig } from 'vitest/config';

// Tests run against each package's src through the `@nodeagent/source` export
// condition, so nothing has to be built before `npm test`.
export default defineConfig({
  resolve: { conditions: ['@nodeagent/source'] },
  ssr: { resolve: { conditions: ['@nodeagent/source'], externalConditions: ['@nodeagent/source'] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
