import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.shared.js';

export default defineConfig({
  ...packageConfig(['src/main.ts']),
  dts: false,
  banner: { js: '#!/usr/bin/env node' },
});
