#!/usr/bin/env bash
# Installs the Debian packages the real-node tests and benchmarks need:
# containerd + runc + CNI plugins for the runtime side, iptables/nftables/iproute2/
# conntrack for the data plane, busybox-static to build the test image, kubectl for
# the mini-apiserver compatibility test when Debian has it.
# Idempotent; run as root. Fails loudly if a package cannot be installed.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  echo "install-node-deps: must run as root (apt-get install)" >&2
  exit 1
fi

pkgs=(containerd runc containernetworking-plugins iptables nftables iproute2 conntrack
      busybox-static ipset ipvsadm procps util-linux nfacct)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-node-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-node-deps: all packages present"
fi

# Optional extras: kubectl is used by the mini-apiserver compatibility test when present.
if ! command -v kubectl >/dev/null 2>&1; then
  if apt-cache show kubernetes-client >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends kubernetes-client || true
  fi
fi

# Optional extras: systemd-analyze (Debian package systemd, about 3 MB), which checks the
# reference agent's unit file (examples/reference-agent/test/deploy-manifests.test.ts).
if ! command -v systemd-analyze >/dev/null 2>&1; then
  if apt-cache show systemd >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd || true
  fi
fi

# Optional extras: the official Python client, used by the mini-apiserver compatibility suite
# (run with the system interpreter, /usr/bin/python3).
if ! /usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1; then
  if apt-cache show python3-kubernetes >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-kubernetes || true
  fi
fi

# The packaged containerd starts a system instance; the tests run private instances
# and never need it. Leave it as the machine has it.
for bin in containerd runc nft iptables-restore ip nsenter ipset /usr/lib/cni/bridge /usr/lib/cni/host-local /bin/busybox; do
  command -v "$bin" >/dev/null 2>&1 || [ -x "$bin" ] || { echo "install-node-deps: $bin missing after install" >&2; exit 1; }
done
echo "install-node-deps: ok ($(containerd --version | awk '{print $3}'), $(iptables --version), $(nft --version))"
