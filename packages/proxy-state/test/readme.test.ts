import { describeReadmeExamples } from '@nodeagent/test-support/readme-examples';

// What each ```ts block of the README prints when run as written.
describeReadmeExamples(new URL('../README.md', import.meta.url), 'proxy-state', [
  /\[ 'ns1\/svc1' \] \[ '10\.180\.0\.1:80' \]/,
  /\[ 'ns1\/svc1:p80' \]/,
]);
