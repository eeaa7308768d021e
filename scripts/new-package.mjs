#!/usr/bin/env node
// Scaffolds packages/<name> with the project's package conventions:
// ESM, exports map with the @nodeagent/source condition (tests and typecheck run
// against src), tsup build, composite tsconfig, a test tsconfig and a README.
// Usage: node scripts/new-package.mjs <name> "<one-line description>" [dep ...] [--testing]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const testing = args.includes('--testing');
const [name, description, ...deps] = args.filter((a) => a !== '--testing');
if (!name || !description) {
  console.error('usage: new-package.mjs <name> "<description>" [dep ...] [--testing]');
  process.exit(2);
}
const dir = join('packages', name);
if (existsSync(dir)) {
  console.error(`${dir} exists`);
  process.exit(1);
}
mkdirSync(join(dir, 'src'), { recursive: true });
mkdirSync(join(dir, 'test'), { recursive: true });

const entry = (sub) => ({
  '@nodeagent/source': `./src/${sub}.ts`,
  types: `./dist/${sub}.d.ts`,
  default: `./dist/${sub}.js`,
});
const exportsMap = { '.': entry('index') };
if (testing) exportsMap['./testing'] = entry('testing');
exportsMap['./package.json'] = './package.json';

const internal = deps.filter((d) => !d.includes('@') || d.startsWith('@nodeagent/'));
const pkg = {
  name: `@nodeagent/${name}`,
  version: '0.0.0',
  description,
  license: 'Apache-2.0',
  type: 'module',
  sideEffects: false,
  engines: { node: '>=20.19' },
  exports: exportsMap,
  main: './dist/index.js',
  types: './dist/index.d.ts',
  files: ['dist', 'src', 'README.md'],
  scripts: {
    build: 'tsup',
    prepack: 'node ../../scripts/publish-manifest.mjs prepack',
    postpack: 'node ../../scripts/publish-manifest.mjs postpack',
  },
  dependencies: Object.fromEntries(
    internal.map((d) => [d.startsWith('@nodeagent/') ? d : `@nodeagent/${d}`, '^0.0.0']),
  ),
  publishConfig: { access: 'public' },
  repository: { type: 'git', url: 'git+https://github.com/nodeagent/nodeagent.git', directory: dir },
  keywords: ['kubernetes', 'kubelet', 'node-agent'],
};
writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);

const refs = internal.map((d) => ({ path: `../${d.replace('@nodeagent/', '')}` }));
writeFileSync(
  join(dir, 'tsconfig.json'),
  `${JSON.stringify(
    {
      extends: '../../tsconfig.base.json',
      compilerOptions: { rootDir: 'src', outDir: '.tsc', tsBuildInfoFile: '.tsc/tsconfig.tsbuildinfo' },
      include: ['src'],
      references: refs,
    },
    null,
    2,
  )}\n`,
);
writeFileSync(
  join(dir, 'test', 'tsconfig.json'),
  `${JSON.stringify(
    {
      extends: '../../../tsconfig.base.json',
      compilerOptions: {
        rootDir: '../../..',
        outDir: '../.tsc/test',
        tsBuildInfoFile: '../.tsc/test.tsbuildinfo',
        noEmit: false,
      },
      include: ['.', '../../../test/support'],
      references: [{ path: '..' }, ...refs.map((r) => ({ path: `../${r.path}` }))],
    },
    null,
    2,
  )}\n`,
);
const entries = testing ? "['src/index.ts', 'src/testing.ts']" : "['src/index.ts']";
writeFileSync(
  join(dir, 'tsup.config.ts'),
  `import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.shared.js';

export default defineConfig(packageConfig(${entries}));
`,
);
writeFileSync(
  join(dir, 'README.md'),
  `# @nodeagent/${name}

${description}

\`\`\`sh
npm install @nodeagent/${name}
\`\`\`
`,
);
// Leave the generated JSON in the formatter's style, so `npm run lint` passes as scaffolded.
spawnSync('npx', ['--no-install', 'biome', 'format', '--write', dir], { stdio: 'ignore' });
console.log(`created ${dir}`);
