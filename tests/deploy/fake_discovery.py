"""The discovery half of a Kubernetes API server, for `kubectl apply
--dry-run=client` without a cluster (tests/deploy/check_manifests.sh).

kubectl's client-side dry run maps each manifest's apiVersion/kind to a
resource through the server's discovery documents and GETs the live object to
diff against. This serves the discovery documents of the groups the manifests
use (core v1, apps/v1, and monitoring.coreos.com/v1 as a cluster with the
Prometheus Operator's CRD has it) and answers 404 for every object, so kubectl
reports "created (dry run)" for a kind it can map and fails for one it cannot
(a typo in apiVersion or kind, a namespaced object without a namespace...).

    python3 fake_discovery.py PORT_FILE   # writes the port it listens on
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RESOURCES = {
    "v1": [
        ("namespaces", "Namespace", False),
        ("services", "Service", True),
        ("configmaps", "ConfigMap", True),
        ("secrets", "Secret", True),
        ("serviceaccounts", "ServiceAccount", True),
    ],
    "apps/v1": [("daemonsets", "DaemonSet", True), ("deployments", "Deployment", True)],
    "monitoring.coreos.com/v1": [("servicemonitors", "ServiceMonitor", True)],
}
VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]


def resource_list(group_version):
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": [
            {"name": n, "singularName": k.lower(), "namespaced": ns, "kind": k, "verbs": VERBS}
            for n, k, ns in RESOURCES[group_version]
        ],
    }


def group_list():
    groups = []
    for gv in RESOURCES:
        if "/" not in gv:
            continue
        group, version = gv.split("/")
        v = {"groupVersion": gv, "version": version}
        groups.append({"name": group, "versions": [v], "preferredVersion": v})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


class Handler(BaseHTTPRequestHandler):
    def send_json(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 (http.server's name)
        path = self.path.split("?")[0].rstrip("/")
        if path == "/api":
            self.send_json(200, {"kind": "APIVersions", "versions": ["v1"]})
        elif path == "/apis":
            self.send_json(200, group_list())
        elif path == "/api/v1":
            self.send_json(200, resource_list("v1"))
        elif path.startswith("/apis/") and path[len("/apis/"):] in RESOURCES:
            self.send_json(200, resource_list(path[len("/apis/"):]))
        else:
            # No object exists; any other document (openapi) is not served.
            self.send_json(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                 "reason": "NotFound", "code": 404,
                                 "message": f"{path} not found"})

    def log_message(self, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1], "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
