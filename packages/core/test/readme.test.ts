import { describeReadmeExamples } from '@nodeagent/test-support/readme-examples';

// What each ```ts block of the README prints when run as written.
describeReadmeExamples(new URL('../README.md', import.meta.url), 'core', [
  /^syncing default\/web-0\n$/,
  /^sent first\nsecond accepted at once: false\nsent third\n$/,
  /workqueue_adds_total\{name="pods"\} 1\n/,
  /^\[ 'example\.com\/gate' \]\n$/,
]);
