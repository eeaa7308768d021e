import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.shared.js';

// endpoint.ts and cri-log.ts are entries of their own so that they land in their own
// files: with code splitting they would otherwise share a chunk with the client, whose
// top-level method tables reference every generated protobuf codec, and a consumer of
// `parseEndpoint` alone would bundle ~310 kB of codecs (test/bundle-size.test.ts).
export default defineConfig(
  packageConfig(['src/index.ts', 'src/testing.ts', 'src/cli.ts', 'src/endpoint.ts', 'src/cri-log.ts']),
);
