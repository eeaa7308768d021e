import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.shared.js';

export default defineConfig([
  packageConfig(['src/index.ts', 'src/testing.ts']),
  { ...packageConfig(['src/cli.ts']), dts: false, clean: false, banner: { js: '#!/usr/bin/env node' } },
]);
