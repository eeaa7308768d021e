import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.shared.js';

export default defineConfig(packageConfig(['src/index.ts']));
