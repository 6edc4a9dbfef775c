"""A zeusd client that takes a connection-bound lease, sets a GPU power limit
under it, says "ready" and then waits to be killed. The lease test runs it as
an unprivileged user and SIGKILLs it. Standard library only."""

import http.client
import json
import socket
import sys
import time


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost")
        self.unix_path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.unix_path)
        self.sock = s


def main():
    sock_path, gpu, limit_mw = sys.argv[1], sys.argv[2], sys.argv[3]
    conn = UnixConnection(sock_path)
    conn.request("POST", "/lease/acquire")
    resp = conn.getresponse()
    body = json.loads(resp.read())
    if resp.status != 200:
        print("acquire failed", resp.status, body, flush=True)
        return 1
    lease = body["lease_id"]
    conn.request(
        "POST",
        f"/gpu/set_power_limit?gpu_ids={gpu}&power_limit_mw={limit_mw}&block=true&lease_id={lease}",
    )
    resp = conn.getresponse()
    text = resp.read()
    if resp.status != 200:
        print("set failed", resp.status, text, flush=True)
        return 1
    print("ready", flush=True)
    while True:
        time.sleep(60)


if __name__ == "__main__":
    sys.exit(main())
