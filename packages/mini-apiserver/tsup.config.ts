import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.shared.js';

// One build with code splitting: dist/cli.js shares the server's chunks with dist/index.js
// instead of carrying a second full bundle. The bin is bin/cli.js (a shebang shim).
export default defineConfig(packageConfig(['src/index.ts', 'src/testing.ts', 'src/cli.ts']));
