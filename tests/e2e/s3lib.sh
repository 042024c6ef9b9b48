# shellcheck shell=bash
# An S3 server for end-to-end tests: s3rver (npm, 3.7.1) on loopback, and
# the AWS CLI pointed at it. Source it after lib.sh (it uses B, ROOT, TMP,
# PIDS, say and fail).
#
#   s3_start DATADIR BUCKET  starts s3rver on 127.0.0.1 at a free port with
#                         its objects in DATADIR and BUCKET created, and
#                         waits until it answers (10 s). It installs
#                         s3rver@3.7.1 into $B/node/s3rver (S3RVER_DIR=
#                         overrides) on first use. Exports S3_PORT, S3_PID
#                         (in PIDS: killed after the test), S3_URL,
#                         AWS_ACCESS_KEY_ID=S3RVER, AWS_SECRET_ACCESS_KEY=
#                         S3RVER (s3rver's only account: other keys get 403
#                         InvalidAccessKeyId), AWS_ENDPOINT_URL=$S3_URL,
#                         AWS_REGION=us-east-1 and
#                         AWS_EC2_METADATA_DISABLED=true (the credential
#                         chain never asks 169.254.169.254), and unsets
#                         the AWS_* variables that would take precedence
#                         over them.
#                         0; 2 after saying "skip - ..." where node, npm or
#                         the package cannot be had; 1 if it did not start.
#   s3_stop               stops it (the data stays)
#   s3_restart            starts it again on the same port and data
#   awscli ARGS...        Debian's AWS CLI (/usr/bin/aws, not a pyenv shim
#                         on PATH) with --endpoint-url $S3_URL: 2 after
#                         saying "skip - ..." where it is missing
#
# s3rver checks the access key of a SigV4 request but not its signature:
# a wrong secret passes. It makes continuation tokens with DES, which
# OpenSSL 3 leaves to its legacy provider, so node runs with
# --openssl-legacy-provider where it knows the option (else a listing of
# more than 1000 keys fails with 500 InternalError).
S3RVER_VERSION=3.7.1
S3RVER_DIR=${S3RVER_DIR:-$ROOT/$B/node/s3rver}
export S3_PORT='' S3_PID='' S3_URL=''
S3_DATA='' S3_BUCKET=''

# s3rver installed: 0, or 2 after saying why not
s3_need_server() {
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		say "skip - no node or npm on this machine (apt-get install nodejs npm)"
		return 2
	fi
	if [ -x "$S3RVER_DIR/node_modules/.bin/s3rver" ] &&
		grep -q "\"version\": \"$S3RVER_VERSION\"" \
			"$S3RVER_DIR/node_modules/s3rver/package.json" 2>/dev/null; then
		return 0
	fi
	# a package.json of its own, or npm installs into a parent's project
	mkdir -p "$S3RVER_DIR" || return 1
	printf '{ "private": true, "dependencies": { "s3rver": "%s" } }\n' "$S3RVER_VERSION" \
		>"$S3RVER_DIR/package.json" || return 1
	if ! (cd "$S3RVER_DIR" && npm install --no-audit --no-fund --loglevel=error \
		>"$TMP/s3rver-npm.log" 2>&1); then
		tail -3 "$TMP/s3rver-npm.log"
		say "skip - cannot install s3rver@$S3RVER_VERSION from npm"
		return 2
	fi
}

# a TCP port nobody listens on now
s3_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
		echo $((20000 + RANDOM % 20000))
}

# start s3rver on S3_PORT with S3_DATA and S3_BUCKET; wait until the bucket answers
s3_launch() {
	local i code legacy=()

	node --openssl-legacy-provider -e 0 2>/dev/null && legacy=(--openssl-legacy-provider)
	node "${legacy[@]}" "$S3RVER_DIR/node_modules/s3rver/bin/s3rver.js" -d "$S3_DATA" \
		-a 127.0.0.1 -p "$S3_PORT" -s --configure-bucket "$S3_BUCKET" \
		>>"$TMP/s3rver.log" 2>&1 &
	S3_PID=$!
	PIDS+=("$S3_PID")
	export S3_PID
	for ((i = 0; i < 200; i++)); do
		code=$(curl -s -o /dev/null -w '%{http_code}' "$S3_URL/$S3_BUCKET" 2>/dev/null)
		[ "$code" = 200 ] && return 0
		kill -0 "$S3_PID" 2>/dev/null || break
		sleep 0.05
	done
	fail "s3rver did not answer on $S3_URL: $(tail -c 300 "$TMP/s3rver.log" 2>/dev/null)"
}

s3_start() {
	local rc

	[ $# = 2 ] || { fail "usage: s3_start DATADIR BUCKET"; return 1; }
	command -v curl >/dev/null || { say "skip - no curl to see s3rver answer (apt-get install curl)"; return 2; }
	s3_need_server; rc=$?
	[ "$rc" = 0 ] || return "$rc"
	mkdir -p "$1" || return 1
	S3_DATA=$(cd "$1" && pwd) S3_BUCKET=$2 S3_PORT=$(s3_free_port)
	S3_URL=http://127.0.0.1:$S3_PORT
	unset AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL_S3 AWS_DEFAULT_REGION \
		AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE
	export S3_PORT S3_URL AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER \
		AWS_ENDPOINT_URL=$S3_URL AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
	s3_launch
}

s3_stop() {
	local p keep=()

	[ -n "$S3_PID" ] || return 0
	kill "$S3_PID" 2>/dev/null
	wait "$S3_PID" 2>/dev/null
	# reaped: out of PIDS, whose pids are killed later
	for p in "${PIDS[@]}"; do [ "$p" = "$S3_PID" ] || keep+=("$p"); done
	PIDS=("${keep[@]}")
	S3_PID=''
}

s3_restart() {
	[ -n "$S3_PORT" ] || { fail "s3_restart before s3_start"; return 1; }
	s3_stop
	s3_launch
}

awscli() {
	[ -x /usr/bin/aws ] || { say "skip - no AWS CLI at /usr/bin/aws (apt-get install awscli)"; return 2; }
	AWS_PAGER='' /usr/bin/aws --endpoint-url "$S3_URL" "$@"
}
