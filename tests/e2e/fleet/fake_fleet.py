#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A simulated fleet's bucket: HOSTS hosts sealing a segment a minute for
MINUTES minutes, in the key layout `record --upload` writes

    PREFIX/YYYY-MM-DD/HHMM/SERVICE/HOST/BOOT/EPOCH-INDEX-TAG.d9

(store/catalog.h), each object a few bytes with the metadata the recorder
puts on a segment (x-amz-meta-d9prof-kind, -from, -to and -index, the
index that `d9prof ls` reads back). Host N runs service svcN%SERVICES;
the hosts whose number is a multiple of TWO run a second service too
(svc-side: a host of two services, which ls counts once). An object is
a few bytes, or with --body a real segment file (the same for all: a
view that reads them reads that one, its copies skipped).

Two ways to make it:
  --url URL      through the S3 API: signed PUTs (SigV4, as any client
                 sends them) from THREADS threads on kept-alive
                 connections, to a server on 127.0.0.1 only
  --disk DIR     s3rver 3.7.1's own files written directly under its data
                 directory DIR (lib/stores/filesystem.js: KEY's
                 directories, then NAME._S3rver_object, its .md5 and
                 NAME._S3rver_metadata.json), for when PUTs are too slow;
                 s3rver reads them as if put (start it after)

Prints one line: "made N keys in S s (R/s)". Exit 0, or 1 after saying
why on stderr.
"""
import argparse
import datetime
import hashlib
import hmac
import http.client
import json
import os
import queue
import sys
import threading
import time
import urllib.parse

KEY_ID = os.environ.get("AWS_ACCESS_KEY_ID", "S3RVER")
SECRET = os.environ.get("AWS_SECRET_ACCESS_KEY", "S3RVER")
REGION = os.environ.get("AWS_REGION", "us-east-1")


def utc(s):
    """unix seconds of "YYYY-MM-DDTHH:MM" (UTC)"""
    return int(datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M")
               .replace(tzinfo=datetime.timezone.utc).timestamp())


def keys(a):
    """(key, body, metadata) of every object, in time order"""
    start = utc(a.start)
    body = None
    if getattr(a, "body", None):
        with open(a.body, "rb") as f:
            body = f.read()
        body_lo = utc(a.body_from)
        body_hi = body_lo + 60 * a.body_minutes
    pre = a.prefix.strip("/") + "/" if a.prefix.strip("/") else ""
    for m in range(a.minutes):
        minute = start + 60 * m
        day = time.strftime("%Y-%m-%d/%H%M", time.gmtime(minute))
        for h in range(a.hosts):
            services = ["svc%d" % (h % a.services)]
            if a.two and h % a.two == 0:
                services.append("svc-side")
            for s, svc in enumerate(services):
                epoch = minute + (h * 7 + s) % 60
                tag = "%012x" % (0x1d9f00000000 + h * 16 + s)
                name = "%d-%d-%s.d9" % (epoch, m, tag)
                key = "%s%s/%s/host-%03d/b%04x/%s" % (pre, day, svc, h, h, name)
                # a quiet fleet: a poll of 12 ms (flagged) once in a while
                polls = 1000 + (h * 31 + m * 17) % 500
                longest = 12000000 if (h + m) % 97 == 0 else 300000 + h * 1000
                meta = {
                    "d9prof-kind": "segment",
                    "d9prof-from": str(epoch * 10**9),
                    "d9prof-to": str((epoch + 60) * 10**9),
                    "d9prof-index": "polls=%d samples=%d lost=0 max-poll=%d "
                                    "max-delay=%d" % (polls, polls // 3, longest,
                                                      20000 + h * 10),
                }
                real = body is not None and body_lo <= minute < body_hi
                yield key, body if real else b"D9 fake segment %d\n" % m, meta


def sign(method, host, path, query, payload_hash, headers):
    """SigV4 headers for a request (path already escaped)"""
    now = datetime.datetime.now(datetime.timezone.utc)
    amz_date, date = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    h = {k.lower(): v for k, v in headers.items()}
    h.update({"host": host, "x-amz-date": amz_date,
              "x-amz-content-sha256": payload_hash})
    names = sorted(h)
    canonical = "\n".join([method, path, query,
                           "".join("%s:%s\n" % (k, h[k].strip()) for k in names),
                           ";".join(names), payload_hash])
    scope = "%s/%s/s3/aws4_request" % (date, REGION)
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    k = ("AWS4" + SECRET).encode()
    for part in (date, REGION, "s3", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    h["authorization"] = ("AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, "
                          "Signature=%s" % (KEY_ID, scope, ";".join(names), sig))
    return h


def by_api(a, work):
    u = urllib.parse.urlsplit(a.url)
    if u.hostname not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("fake_fleet: %s is not on this machine: refused" % a.url)
    q = queue.Queue(maxsize=4 * a.threads)
    errors = []

    def worker():
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        while True:
            item = q.get()
            if item is None:
                return
            key, body, meta = item
            path = "/%s/%s" % (a.bucket, urllib.parse.quote(key, safe="/-_.~"))
            hdr = {"content-type": "application/octet-stream",
                   "content-length": str(len(body))}
            hdr.update({"x-amz-meta-" + k: v for k, v in meta.items()})
            hdr = sign("PUT", u.netloc, path, "",
                       hashlib.sha256(body).hexdigest(), hdr)
            for attempt in range(3):
                try:
                    conn.request("PUT", path, body=body, headers=hdr)
                    r = conn.getresponse()
                    r.read()
                    if r.status == 200:
                        break
                    err = "PUT %s: %d" % (key, r.status)
                except (OSError, http.client.HTTPException) as e:
                    err = "PUT %s: %s" % (key, e)
                    conn.close()
                    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
            else:
                errors.append(err)

    threads = [threading.Thread(target=worker) for _ in range(a.threads)]
    for t in threads:
        t.start()
    n = 0
    for item in work:
        if errors:
            break
        q.put(item)
        n += 1
    for _ in threads:
        q.put(None)
    for t in threads:
        t.join()
    if errors:
        sys.exit("fake_fleet: %s" % errors[0])
    return n


def by_disk(a, work):
    root = os.path.join(a.disk, a.bucket)
    if not os.path.isdir(root):
        sys.exit("fake_fleet: no bucket directory %s" % root)
    n, made = 0, set()
    for key, body, meta in work:
        parts = key.split("/")
        d = os.path.join(root, *parts[:-1])
        if d not in made:
            os.makedirs(d, exist_ok=True)
            made.add(d)
        base = os.path.join(d, parts[-1] + "._S3rver_")
        with open(base + "object", "wb") as f:
            f.write(body)
        with open(base + "object.md5", "w") as f:
            f.write(hashlib.md5(body).hexdigest())
        with open(base + "metadata.json", "w") as f:
            json.dump(dict({"content-type": "application/octet-stream"},
                           **{"x-amz-meta-" + k: v for k, v in meta.items()}), f)
        n += 1
    return n


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--url")
    p.add_argument("--disk")
    p.add_argument("--bucket", default="bkt")
    p.add_argument("--prefix", default="")
    p.add_argument("--hosts", type=int, default=100)
    p.add_argument("--minutes", type=int, default=1440)
    p.add_argument("--services", type=int, default=1)
    p.add_argument("--two", type=int, default=0,
                   help="hosts numbered a multiple of this run svc-side too")
    p.add_argument("--start", default="2026-11-26T00:00", help="UTC")
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--body", help="a segment file: the body of the objects of "
                   "--body-minutes minutes from --body-from (UTC "
                   "YYYY-MM-DDTHH:MM), for views that read them")
    p.add_argument("--body-from")
    p.add_argument("--body-minutes", type=int, default=10)
    a = p.parse_args()
    if bool(a.url) == bool(a.disk):
        sys.exit("fake_fleet: give --url or --disk")
    t0 = time.monotonic()
    n = (by_api if a.url else by_disk)(a, keys(a))
    s = time.monotonic() - t0
    print("made %d keys in %.1f s (%.0f/s)" % (n, s, n / s if s else 0))


if __name__ == "__main__":
    main()
