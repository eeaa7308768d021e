import { describeReadmeExamples } from '@nodeagent/test-support/readme-examples';

// What each ```ts block of the README prints when run as written.
describeReadmeExamples(new URL('../README.md', import.meta.url), 'ipvs', [
  /-a -t 172\.30\.0\.41:80 -r 10\.180\.0\.1:80 -m -w 1[\s\S]*endpoints \[ '10\.180\.0\.1:80' \]/,
  /5\.4\.0-42-generic net\/ipv4\/vs\/conntrack=1 net\/ipv4\/vs\/conn_reuse_mode=0 .*net\/ipv4\/conf\/all\/arp_announce=2\n6\.1\.0-18-amd64 net\/ipv4\/vs\/conntrack=1 net\/ipv4\/vs\/conn_reuse_mode=as-is /,
]);
