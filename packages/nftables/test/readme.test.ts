import { describeReadmeExamples } from '@nodeagent/test-support/readme-examples';

// What each ```ts block of the README prints when run as written.
describeReadmeExamples(new URL('../README.md', import.meta.url), 'nftables', [
  /endpoints \[ '10\.180\.0\.1:80' \] false/,
  /true (true|false)/,
]);
