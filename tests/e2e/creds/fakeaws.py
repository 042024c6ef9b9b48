#!/usr/bin/env python3
"""The AWS credential endpoints, faked on loopback, for tests/e2e/creds.sh.

usage: fakeaws.py KEYS [EXPIRES_IN [ROLE [TOKEN]]]

Listens on 127.0.0.1 at a free port and prints "ready PORT" (then
flushes). It hands out the access key ids of KEYS (comma-separated), one
per set of credentials, the last one again and again; each set expires
EXPIRES_IN seconds (default 3600) after it is handed out. At once:

  POST /            STS AssumeRoleWithWebIdentity (form body): its XML,
                    or 403 AccessDenied unless WebIdentityToken is TOKEN
  GET  /ecs/...     the container endpoint: its JSON, or 401 unless the
                    Authorization header is TOKEN
  PUT  /latest/api/token                  IMDSv2: a session token
  GET  /latest/meta-data/iam/security-credentials/[ROLE]
                    with that session token: the role ROLE (none, 404,
                    if ROLE is "-"), then its JSON; 401 without it

TOKEN "-" or absent: any token passes. The secret is "fake-secret", the
session token "fake-session". One line per request on stderr:
"METHOD PATH STATUS [KEY]", the lines the tests count. Standard library
only.
"""
import http.server
import sys
import time
import urllib.parse

IMDS_TOKEN = "imds-session-token"
CREDS = "/latest/meta-data/iam/security-credentials/"


class Fake(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    keys = ["S3RVER"]
    handed = 0
    expires_in = 3600
    role = "fleet-role"
    token = "-"

    def log_message(self, fmt, *args):  # the one line of our own instead
        pass

    def next_keys(self):
        k = Fake.keys[min(Fake.handed, len(Fake.keys) - 1)]
        Fake.handed += 1
        exp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + Fake.expires_in))
        return k, exp

    def answer(self, status, body, ctype="application/json", key=""):
        data = body.encode()
        self.send_response_only(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        sys.stderr.write("%s %s %d %s\n" % (self.command, self.path, status, key))
        sys.stderr.flush()

    def json_creds(self):
        k, exp = self.next_keys()
        self.answer(200, '{"Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": "%s", '
                         '"SecretAccessKey": "fake-secret", "Token": "fake-session", '
                         '"Expiration": "%s"}' % (k, exp), key=k)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0") or 0)
        form = urllib.parse.parse_qs(self.rfile.read(n).decode())
        if form.get("Action") != ["AssumeRoleWithWebIdentity"]:
            return self.answer(400, "<ErrorResponse><Error><Code>InvalidAction</Code>"
                                    "</Error></ErrorResponse>", "text/xml")
        if Fake.token != "-" and form.get("WebIdentityToken") != [Fake.token]:
            return self.answer(403, "<ErrorResponse><Error><Type>Sender</Type>"
                                    "<Code>AccessDenied</Code><Message>Not authorized to "
                                    "perform sts:AssumeRoleWithWebIdentity</Message>"
                                    "</Error></ErrorResponse>", "text/xml")
        k, exp = self.next_keys()
        self.answer(200, "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult>"
                         "<Credentials><AccessKeyId>%s</AccessKeyId><SecretAccessKey>"
                         "fake-secret</SecretAccessKey><SessionToken>fake-session"
                         "</SessionToken><Expiration>%s</Expiration></Credentials>"
                         "</AssumeRoleWithWebIdentityResult>"
                         "</AssumeRoleWithWebIdentityResponse>" % (k, exp), "text/xml", k)

    def do_PUT(self):
        if self.path != "/latest/api/token" or \
                "X-aws-ec2-metadata-token-ttl-seconds" not in self.headers:
            return self.answer(400, "")
        self.answer(200, IMDS_TOKEN, "text/plain")

    def do_GET(self):
        if self.path.startswith("/ecs/"):
            if Fake.token != "-" and self.headers.get("Authorization") != Fake.token:
                return self.answer(401, '{"code": "InvalidToken", "message": "no such token"}')
            return self.json_creds()
        if self.path.startswith(CREDS):
            if self.headers.get("X-aws-ec2-metadata-token") != IMDS_TOKEN:
                return self.answer(401, "")
            if Fake.role == "-":
                return self.answer(404, "")
            if self.path == CREDS:
                return self.answer(200, Fake.role, "text/plain")
            if self.path == CREDS + Fake.role:
                return self.json_creds()
        self.answer(404, "")


def main():
    if not 2 <= len(sys.argv) <= 5:
        sys.exit(__doc__.split("\n\n")[1])
    Fake.keys = sys.argv[1].split(",")
    if len(sys.argv) > 2:
        Fake.expires_in = int(sys.argv[2])
    if len(sys.argv) > 3:
        Fake.role = sys.argv[3]
    if len(sys.argv) > 4:
        Fake.token = sys.argv[4]
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    srv.daemon_threads = True
    print("ready %d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
