#!/usr/bin/env node
// Stable bin target: exists before `npm run build`, so `npm ci` links the bin into
// node_modules/.bin in this repository; the CLI itself is the built dist/cli.js.
import '../dist/cli.js';
