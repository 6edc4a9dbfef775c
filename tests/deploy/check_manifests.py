"""What kubectl's client-side dry run cannot check (it has no OpenAPI schema
offline): the zeusd DaemonSet's and ServiceMonitor's wiring.

    python3 check_manifests.py deploy/kubernetes
"""

import pathlib
import sys

import yaml


def load(folder):
    docs = []
    for path in sorted(pathlib.Path(folder).glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def main():
    objs = load(sys.argv[1])
    errors = []

    def check(ok, what):
        if not ok:
            errors.append(what)

    ds = objs[("DaemonSet", "zeusd")]
    pod = ds["spec"]["template"]
    check(ds["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items(),
          "the DaemonSet's selector does not match its pod labels")
    (c,) = pod["spec"]["containers"]
    sc = c["securityContext"]
    caps = sc["capabilities"]
    check(caps.get("drop") == ["ALL"], "capabilities: drop ALL first")
    check(sorted(caps.get("add", [])) == ["DAC_READ_SEARCH", "SYS_ADMIN"],
          f"capabilities: exactly SYS_ADMIN and DAC_READ_SEARCH, not {caps.get('add')}")
    check(sc.get("privileged") is False and sc.get("allowPrivilegeEscalation") is False,
          "not privileged, no privilege escalation")
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    args = c["args"]
    metrics = args[args.index("--metrics-address") + 1]
    check(metrics.endswith(f":{ports.get('metrics')}"),
          f"--metrics-address {metrics} is not the metrics port {ports.get('metrics')}")
    ann = pod["metadata"]["annotations"]
    check(ann.get("prometheus.io/scrape") == "true", "scrape annotation")
    check(ann.get("prometheus.io/port") == str(ports.get("metrics")), "scrape port annotation")
    sock = args[args.index("--socket-path") + 1]
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    vols = {v["name"]: v for v in pod["spec"]["volumes"]}
    sock_vol = [n for n, p in mounts.items() if sock.startswith(p + "/")]
    check(len(sock_vol) == 1 and "hostPath" in vols[sock_vol[0]],
          f"the socket {sock} is not on a hostPath volume the node's pods can mount")
    key = args[args.index("--signing-key-path") + 1]
    key_vol = [n for n, p in mounts.items() if key.startswith(p + "/")]
    check(len(key_vol) == 1 and "secret" in vols[key_vol[0]], "the signing key comes from a Secret")
    for name in mounts:
        check(name in vols, f"volumeMount {name} has no volume")
    # The kubelet's PodResources socket, read-only, where the kubernetes
    # part looks (kDefaultPodResourcesSocket) for pod labels.
    pr_dir = "/var/lib/kubelet/pod-resources"
    pr = [m for m in c["volumeMounts"] if m["mountPath"] == pr_dir]
    check(len(pr) == 1 and pr[0].get("readOnly") is True
          and vols.get(pr[0]["name"], {}).get("hostPath", {}).get("path") == pr_dir,
          f"the kubelet's {pr_dir} is not mounted read-only from the node")

    svc = objs[("Service", "zeusd-metrics")]
    check(svc["spec"]["selector"].items() <= pod["metadata"]["labels"].items(),
          "the Service does not select the zeusd pods")
    check(any(p["name"] == "metrics" and p["targetPort"] == "metrics" for p in svc["spec"]["ports"]),
          "the Service has no metrics port")
    sm = objs[("ServiceMonitor", "zeusd")]
    check(sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items(),
          "the ServiceMonitor does not select the Service")
    check(all(e["port"] == "metrics" for e in sm["spec"]["endpoints"]),
          "the ServiceMonitor scrapes a port the Service does not name")
    check(svc["metadata"]["namespace"] in sm["spec"]["namespaceSelector"]["matchNames"],
          "the ServiceMonitor looks in another namespace")

    for e in errors:
        print("manifest check:", e, file=sys.stderr)
    print(f"manifest checks: {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
