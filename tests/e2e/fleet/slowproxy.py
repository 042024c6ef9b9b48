#!/usr/bin/env python3
"""A slow HTTP/1.1 proxy in front of an S3 server, for tests/e2e/fleet.sh.

usage: slowproxy.py UPSTREAM_PORT DELAY_SECONDS

Listens on 127.0.0.1 at a free port and prints "ready PORT" (then
flushes). Each request goes to 127.0.0.1:UPSTREAM_PORT as it came:
method, path and query untouched, every header as the client sent it
(Host included: s3rver does not check signatures, so a request signed
for the proxy's host:port passes), the body by its Content-Length. The
answer is read whole, held DELAY_SECONDS, then sent back (status, headers,
body). 'Expect: 100-continue' is answered here (http.server sends the 100
before the body is read) and not passed on. Connections are kept alive
both ways, one upstream connection per client connection; chunked request
bodies are refused (411), the uploader does not send them.

One line per request on stderr: "METHOD PATH STATUS BYTES-IN held SECS".
Standard library only.
"""
import http.client
import http.server
import sys
import time

# hop-by-hop headers: not passed on
HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer",
       "transfer-encoding", "upgrade", "expect"}


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, and the 100 Continue
    upstream_port = 0
    delay = 0.0

    def log_message(self, fmt, *args):  # the one line of our own instead
        pass

    def relay(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.send_error(411)
            return
        n = int(self.headers.get("Content-Length", "0") or 0)
        body = self.rfile.read(n) if n > 0 else b""
        if not hasattr(self, "up"):
            self.up = http.client.HTTPConnection("127.0.0.1", self.upstream_port,
                                                 timeout=60)
        for attempt in (0, 1):  # again, on a new connection, if the kept one closed
            try:
                self.up.putrequest(self.command, self.path, skip_host=True,
                                   skip_accept_encoding=True)
                for k, v in self.headers.items():
                    if k.lower() not in HOP:
                        self.up.putheader(k, v)
                self.up.endheaders(body or None)
                resp = self.up.getresponse()
                data = resp.read()
                break
            except (http.client.HTTPException, OSError):
                self.up.close()
                if attempt:
                    raise
        t0 = time.monotonic()
        time.sleep(self.delay)
        self.send_response_only(resp.status, resp.reason)
        has_len = False
        for k, v in resp.getheaders():
            if k.lower() in HOP:
                continue
            if k.lower() == "content-length":
                has_len = True
            self.send_header(k, v)
        if not has_len and self.command != "HEAD" and resp.status not in (204, 304):
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.wfile.flush()
        sys.stderr.write("%s %s %d %d held %.2f\n" % (
            self.command, self.path, resp.status, len(body), time.monotonic() - t0))
        sys.stderr.flush()

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = relay


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    Proxy.upstream_port = int(sys.argv[1])
    Proxy.delay = float(sys.argv[2])
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    srv.daemon_threads = True
    print("ready %d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
