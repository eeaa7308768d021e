/**
 * Usage texts of `nodeagent-proxy` and its commands.
 *
 * @module
 */
import type { CommandName } from './args.js';

const INPUT = `Input:
  -f, --file <file|->             manifests: YAML (multi-document) or JSON, Lists flattened;
                                  Services, EndpointSlices and optionally this node's Node
                                  (repeatable; - reads stdin)
  --node-name <name>              this node (default: $NODE_NAME); endpoints with this nodeName
                                  are local
  --node-ip <ip>[,<ip>]           this node's IPs, primary first (default: the addresses of the
                                  Node object named --node-name in the manifests)
  --cluster-cidr <cidr>[,<cidr>]  pod CIDR per family: traffic from outside it is masqueraded
                                  (kube-proxy --cluster-cidr; detect-local-mode ClusterCIDR)
  --ip-family 4|6                 family to use (default: trace: --dst's; else the first node IP's)
  --strict                        fail (exit 1, no output) if any object is invalid
  -v, --verbose                   also list ignored objects of other kinds
Rules:
  -b, --backend iptables|nftables|ipvs   (default: iptables)
  --masquerade-all                masquerade all traffic to cluster IPs
  --no-localhost-nodeports        no node ports on 127.0.0.1 (iptables only)
  --nftables-layout kube-proxy|optimized  nftables only (default: kube-proxy)
  --nodeport-addresses <cidr|primary|localhost|all>[,...]
                                  node IPs (of --node-ip) that accept node ports: those in the
                                  CIDRs; 'primary' = the first one (default: primary for
                                  nftables, all otherwise)
  --service-cluster-ip-range <cidr>[,<cidr>]
                                  service CIDRs whose unallocated ClusterIPs nftables drops
                                  (added to the ServiceCIDR objects of the manifests; not a
                                  kube-proxy flag: kube-proxy reads ServiceCIDR objects)
  --nfacct auto|on|off            iptables: kube-proxy's nfacct counters in the rules (auto:
                                  if this node's kernel answers 'nfacct list'; apply: ensured
                                  in the namespace) (default: auto)
IPVS (kube-proxy's --ipvs-* flags; ipvs backend only):
  --ipvs-scheduler <name>         rr, wrr, lc, wlc, lblc, lblcr, sh, dh, sed, nq or mh
                                  (default: rr)
  --ipvs-exclude-cidrs <cidr>[,<cidr>]
                                  apply: other programs' virtual servers in these CIDRs are
                                  never deleted
  --ipvs-strict-arp               apply: arp_ignore=1, arp_announce=2 in the namespace
  --ipvs-tcp-timeout <duration>   apply: idle TCP timeout, e.g. 900s, 15m (0: leave as is)
  --ipvs-tcpfin-timeout <duration>
                                  apply: TCP timeout after a FIN (0: leave as is)
  --ipvs-udp-timeout <duration>   apply: UDP timeout (0: leave as is)
  -h, --help                      this help`;

const EXIT = `Exit codes: 0 done (invalid objects, if any, were skipped with one error line each on
stderr); 1 nothing usable (no valid Service left, an unreadable file, --strict with invalid
objects, or a kernel tool failed); 2 usage error.`;

/** Usage of each command, and of the tool as a whole (key `''`). */
export const USAGE: Readonly<Record<CommandName | '', string>> = {
  '': `Usage: nodeagent-proxy <command> [options]

kube-proxy's rules for a set of Services and EndpointSlices, without a cluster.

Commands:
  render   print the ruleset (iptables-restore, nft -f, or ipvsadm/ipset/iptables text)
  trace    show where a packet goes through those rules
  apply    program the rules into a named network namespace
  run      run as kube-proxy: follow the API server's Services and EndpointSlices
  doctor   explain this node's proxy rules: modes, leftovers, drift, prerequisites, a trace

nodeagent-proxy <command> --help shows the options of a command; nodeagent-proxy --version
prints the version.
${EXIT}
`,
  render: `Usage: nodeagent-proxy render -f <file|-> --node-name <name> --node-ip <ip> [options]

Prints the full ruleset kube-proxy would write: iptables-restore input (iptables), an nft -f
transaction (nftables), or for ipvs the ipvsadm-restore, ipset restore, kube-ipvs0 address and
residual iptables-restore texts, each under a "# --- ..." header.

${INPUT}

${EXIT}
`,
  trace: `Usage: nodeagent-proxy trace -f <file|-> --node-name <name> --node-ip <ip>
                             --src <ip> --dst <ip> --port <n> [--proto tcp|udp|sctp] [options]

Traces a packet through the rendered rules and prints the outcome: the endpoints it may
reach (every random branch), REJECT, DROP, ACCEPT or untouched, and whether it is
masqueraded.

Packet:
  --src <ip>                      source address
  --dst <ip>                      destination address (cluster IP, node IP, external/LB IP)
  --port <n>                      destination port (1-65535)
  --proto tcp|udp|sctp            (default: tcp)
  --json                          one JSON object on stdout
  -v, --verbose                   also print the rules the packet matched (iptables, ipvs)

${INPUT}

${EXIT}
`,
  apply: `Usage: nodeagent-proxy apply --netns <name> -f <file|-> --node-name <name> --node-ip <ip> [options]

Programs the rules into the network namespace /run/netns/<name> (needs root and the backend's
tools): iptables - jump rules ensured in the built-in chains, then iptables-restore --noflush
(chains of services no longer in the input are deleted); nftables - one nft -f transaction
replacing the contents of table ip/ip6 kube-proxy; ipvs - kube-proxy's start-up (ipset >= 6.0,
an IPVS probe with the scheduler, the IPVS sysctls and timeouts in the namespace), then
ipvsadm, ipset and ip, then the residual iptables rules (needs a kernel with IPVS; IPVS mode
is deprecated since Kubernetes 1.35).

  --netns <name>                  the namespace (as listed by ip netns list); required

${INPUT}

${EXIT}
`,
};

/** Usage of `run` (kube-proxy's flags). */
export const RUN_USAGE = `Usage: nodeagent-proxy run [--config <file>] [flags]

A long-running kube-proxy: watches Services, EndpointSlices and this Node, and keeps the
chosen mode's rules in the kernel in step. SIGTERM or SIGINT stops it and leaves the rules
in place (as kube-proxy does); a restart reconciles them.

kube-proxy's flags (with --config, the file replaces every flag except --hostname-override,
--v, --master and --cleanup, as kube-proxy):
  --config <file>                       a KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1)
  --proxy-mode iptables|nftables|ipvs   (default: iptables)
  --kubeconfig <file>                   (default: --master, else the in-cluster configuration)
  --master <url>                        the API server's address (overrides the kubeconfig's)
  --kube-api-qps <n>                    requests per second to the API server (default 5; 0: 5;
                                        negative: no client-side limit)
  --kube-api-burst <n>                  requests at once above --kube-api-qps (default 10; 0: 10)
  --hostname-override <name>            this node's name (default: the host name)
  --bind-address <ip>                   this node's primary IP (default 0.0.0.0: the Node's addresses)
  --healthz-bind-address <ip:port>      (default 0.0.0.0:10256; '' disables)
  --metrics-bind-address <ip:port>      /metrics, /healthz, /proxyMode, /configz (default 127.0.0.1:10249)
  --cluster-cidr <cidr>[,<cidr>]        the pods' CIDR (detect-local-mode ClusterCIDR)
  --detect-local-mode ClusterCIDR|NodeCIDR|BridgeInterface|InterfaceNamePrefix
                                        NodeCIDR: the Node's spec.podCIDRs, waited for up to 5 minutes
  --pod-bridge-interface <name>         with BridgeInterface
  --pod-interface-name-prefix <prefix>  with InterfaceNamePrefix
  --nodeport-addresses <cidr|primary|localhost|all>[,...]
                                        local addresses inside these that accept NodePorts, per family
                                        (default: all; nftables: primary)
  --masquerade-all                      masquerade all traffic to cluster IPs
  --iptables-masquerade-bit <0-31>      (default 14)
  --iptables-localhost-nodeports=false  no NodePorts on 127.0.0.1 (iptables)
  --iptables-sync-period <duration>     retry interval after a failed sync (default 30s; also nftables)
  --iptables-min-sync-period <duration> least time between syncs (default 1s; also nftables)
  --ipvs-sync-period, --ipvs-min-sync-period, --ipvs-scheduler, --ipvs-exclude-cidrs,
  --ipvs-strict-arp, --ipvs-tcp-timeout, --ipvs-tcpfin-timeout, --ipvs-udp-timeout
  --config-sync-period <duration>       (default 15m)
  --cleanup                             remove the rules of every mode, then exit
  -v, --v <level>                       log verbosity (4 and above: debug)
  -h, --help                            this help

Exit codes: 0 stopped by a signal or cleaned up; 1 cannot start (bad configuration, no API
server credentials, mode unavailable); 2 usage error.
`;
