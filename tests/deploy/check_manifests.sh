#!/usr/bin/env bash
# The Kubernetes manifests (deploy/kubernetes) validated without a cluster
# (ctest: deploy_manifests): `kubectl apply --dry-run=client` against a local
# discovery-only API server (fake_discovery.py: kubectl needs discovery to map
# kinds, including the ServiceMonitor CRD's), with --validate=false because
# no OpenAPI schema is served offline; check_manifests.py checks the wiring
# that the schema would not (capabilities, ports, selectors, annotations).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
manifests=$here/../../deploy/kubernetes
work=$(mktemp -d)
python3 "$here/fake_discovery.py" "$work/port" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
export KUBECONFIG=$work/kubeconfig
kubectl config set-cluster offline --server="http://127.0.0.1:$(cat "$work/port")" >/dev/null
kubectl config set-context offline --cluster=offline >/dev/null
kubectl config use-context offline >/dev/null
out=$(kubectl apply --dry-run=client --validate=false --cache-dir "$work/cache" -f "$manifests" 2>&1) ||
  { echo "$out" >&2; exit 1; }
echo "$out"
# Every object was mapped and would be created.
expected=$(cat "$manifests"/*.yaml | grep -c '^kind:')
got=$(echo "$out" | grep -c 'created (dry run)')
[ "$got" = "$expected" ] || { echo "kubectl created $got of $expected objects" >&2; exit 1; }
/usr/bin/python3 "$here/check_manifests.py" "$manifests"
