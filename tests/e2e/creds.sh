#!/usr/bin/env bash
# S3 credentials as fleets get them (store/s3_creds.c's chain), each
# source against a fake on 127.0.0.1 (tests/e2e/creds/fakeaws.py: STS,
# the container endpoint, IMDSv2) or a real credential_process, and the
# keys it hands out used by `d9prof ls` against a real S3-compatible
# server (s3rver from npm, tests/e2e/s3lib.sh, which takes only the key
# id S3RVER):
#   - each source's keys list the bucket; a wrong key id from it fails in
#     one line that names it ("(key from ...)"), and so do its own
#     failures (STS's AccessDenied, a process's exit, a refused token,
#     an instance without a role);
#   - keys that expire in seconds are fetched again before a request:
#     the first set a wrong key, the next the right one, the listing
#     passes, and the fake counted both;
#   - fleet and -i s3:// name the key's source on a 403 as ls does;
#   - none found: what was tried, in one line.
# Nothing here records: no perf_event needed. Nothing is asked of any
# address but 127.0.0.1 (lib.sh disables IMDS; the tests that want it
# name the fake).
#
#   B=build    build directory
#   ONLY=REGEX run only the matching tests
NAME=creds
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/s3lib.sh"
FAKE=$ROOT/tests/e2e/creds/fakeaws.py
KEY=c/2024-05-06/0708/api/host1/b1/1714979280-0.d9

# One server for every test (each test only reads it): started here, out
# of PIDS (the harness kills those after each test), stopped at exit.
s3_start "$TMP/s3" bkt
case $? in
0) ;;
2) e2e_skip_all "no S3 server to test against (said why above)" ;;
*) say "not ok - the S3 server did not start"; exit 1 ;;
esac
S3_KEEP=$S3_PID
PIDS=()
disown "$S3_KEEP" # (nor waited for after each test)
trap 'kill "$S3_KEEP" 2>/dev/null; e2e_cleanup' EXIT
printf 'segment' >"$TMP/seg.d9"
curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user S3RVER:S3RVER \
	-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' -T "$TMP/seg.d9" "$S3_URL/bkt/$KEY" >/dev/null ||
	{ say "not ok - cannot put $KEY"; exit 1; }

# fake KEYS [EXPIRES_IN [ROLE [TOKEN]]]: fakeaws.py started, its URL in
# FAKE_URL, its log in $TMP/fake.out.err
fake() {
	start_ready "$TMP/fake.out" python3 "$FAKE" "$@" || return 1
	FAKE_URL=http://127.0.0.1:$(sed -n 's/^ready //p' "$TMP/fake.out")
}

# d9 VAR=VALUE... -- ARGS...: d9prof ARGS with no key in the environment,
# a HOME of the test's own ($TMP/home) and the variables given; stdout in
# $TMP/d9.out, stderr in $TMP/d9.err
d9() {
	local vars=()
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN \
		HOME="$TMP/home" "${vars[@]}" "$D9" "$@" >"$TMP/d9.out" 2>"$TMP/d9.err"
}

# home [CONFIG]: a fresh $TMP/home, ~/.aws/config saying CONFIG
home() {
	rm -rf "${TMP:?}/home"
	mkdir -p "$TMP/home/.aws"
	[ $# = 0 ] || printf '%s\n' "$1" >"$TMP/home/.aws/config"
	chmod 600 "$TMP/home/.aws/config" 2>/dev/null
	return 0
}

# lists VAR=VALUE...: ls of the bucket with these variables shows host1
lists() {
	d9 "$@" -- ls s3://bkt/c --format json || { cat "$TMP/d9.err"; fail "ls failed"; return 1; }
	grep -q '"host1"' "$TMP/d9.out" || { cat "$TMP/d9.out"; fail "ls does not show host1"; return 1; }
}

# refused WHAT VAR=VALUE...: ls fails, in one line, saying WHAT (grep -F)
refused() {
	local what=$1
	shift
	d9 "$@" -- ls s3://bkt/c && { fail "ls passed: $what"; return 1; }
	[ "$(wc -l <"$TMP/d9.err")" = 1 ] && grep -qF -- "$what" "$TMP/d9.err" ||
		{ cat "$TMP/d9.err"; fail "not one line saying: $what"; return 1; }
	! grep -q 'fake-secret\|fake-session\|jwt-' "$TMP/d9.err" || { fail "a secret in the message"; return 1; }
	say "    $(cat "$TMP/d9.err")"
}

# calls PATTERN: requests the fake logged that match PATTERN
calls() { grep -c -- "$1" "$TMP/fake.out.err"; }

t_web_identity_keys_from_sts() {
	local arn=arn:aws:iam::123456789012:role/recorder
	home
	fake S3RVER 3600 - jwt-ok || return 1
	printf 'jwt-ok\n' >"$TMP/jwt"
	printf 'jwt-bad\n' >"$TMP/jwt-bad"
	lists AWS_ROLE_ARN=$arn AWS_WEB_IDENTITY_TOKEN_FILE="$TMP/jwt" AWS_ENDPOINT_URL_STS="$FAKE_URL" || return
	[ "$(calls '^POST / 200 S3RVER')" = 1 ] || { cat "$TMP/fake.out.err"; fail "STS not asked once"; return; }
	refused "web identity (AWS_ROLE_ARN=$arn): STS at $FAKE_URL said 403 AccessDenied: Not authorized" \
		AWS_ROLE_ARN=$arn AWS_WEB_IDENTITY_TOKEN_FILE="$TMP/jwt-bad" AWS_ENDPOINT_URL_STS="$FAKE_URL" || return
	# the profile's role_arn and token file, the same way
	home "[profile ci]
role_arn = $arn
web_identity_token_file = $TMP/jwt
role_session_name = ci-run"
	lists AWS_PROFILE=ci AWS_ENDPOINT_URL_STS="$FAKE_URL" || return
	stop "$SPID"
	fake WRONGKEY 3600 - jwt-ok || return 1
	refused "InvalidAccessKeyId" AWS_PROFILE=ci AWS_ENDPOINT_URL_STS="$FAKE_URL" || return
	grep -qF "(key from web identity of profile ci (role_arn $arn))" "$TMP/d9.err" ||
		{ fail "the source not named"; return; }
}

t_credential_process_keys() {
	home "[profile dev]
credential_process = printf '{\"Version\": 1, \"AccessKeyId\": \"S3RVER\", \"SecretAccessKey\": \"fake-secret\"}'"
	lists AWS_PROFILE=dev || return
	home "[profile dev]
credential_process = printf '{\"Version\": 1, \"AccessKeyId\": \"WRONGKEY\", \"SecretAccessKey\": \"fake-secret\"}'"
	refused "(key from credential_process of profile dev)" AWS_PROFILE=dev || return
	home "[profile dev]
credential_process = sh -c 'echo \"token expired: run aws-login\" >&2; exit 1'"
	refused "credential_process of profile dev: exit 1: token expired: run aws-login" AWS_PROFILE=dev
}

t_container_endpoint_keys_with_its_token() {
	home
	fake S3RVER 3600 - pod-token || return 1
	printf 'pod-token\n' >"$TMP/pod"
	lists AWS_CONTAINER_CREDENTIALS_FULL_URI="$FAKE_URL/ecs/v2/credentials/uuid" \
		AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE="$TMP/pod" || return
	grep -q '^GET /ecs/v2/credentials/uuid 200 S3RVER' "$TMP/fake.out.err" ||
		{ cat "$TMP/fake.out.err"; fail "the endpoint not asked"; return; }
	refused "the container endpoint $FAKE_URL (AWS_CONTAINER_CREDENTIALS_FULL_URI) said 401 InvalidToken: no such token" \
		AWS_CONTAINER_CREDENTIALS_FULL_URI="$FAKE_URL/ecs/v2/credentials/uuid" \
		AWS_CONTAINER_AUTHORIZATION_TOKEN=other || return
	! grep -q uuid "$TMP/d9.err" || fail "the endpoint's path (it may be secret) in the message"
}

t_imdsv2_keys_of_the_instance_role() {
	home
	fake S3RVER || return 1
	lists AWS_EC2_METADATA_DISABLED= AWS_EC2_METADATA_SERVICE_ENDPOINT="$FAKE_URL" || return
	[ "$(calls '^PUT /latest/api/token 200')" -ge 1 ] && [ "$(calls 'security-credentials/fleet-role 200 S3RVER')" -ge 1 ] ||
		{ cat "$TMP/fake.out.err"; fail "not the token, then the role's keys"; return; }
	stop "$SPID"
	fake WRONGKEY || return 1
	refused "(key from IMDSv2 at $FAKE_URL (role fleet-role))" \
		AWS_EC2_METADATA_DISABLED= AWS_EC2_METADATA_SERVICE_ENDPOINT="$FAKE_URL" || return
	stop "$SPID"
	fake S3RVER 3600 - || return 1 # (no role)
	refused "IMDSv2 at $FAKE_URL: no role" \
		AWS_EC2_METADATA_DISABLED= AWS_EC2_METADATA_SERVICE_ENDPOINT="$FAKE_URL"
}

t_keys_that_expire_are_fetched_again_before_a_request() {
	local n
	home
	# the first set a wrong key expiring in 5 s, then the right one: the
	# listing passes only with the keys fetched again
	fake WRONGKEY,S3RVER 5 || return 1
	lists AWS_EC2_METADATA_DISABLED= AWS_EC2_METADATA_SERVICE_ENDPOINT="$FAKE_URL" || return
	n=$(calls 'security-credentials/fleet-role 200')
	say "    $n sets of keys handed out ($(calls 'fleet-role 200 WRONGKEY') the wrong one)"
	((n >= 2)) && [ "$(calls 'fleet-role 200 WRONGKEY')" = 1 ] ||
		{ cat "$TMP/fake.out.err"; fail "the keys were not fetched again"; }
}

t_fleet_and_inputs_name_the_keys_source() {
	local out='{"Version": 1, "AccessKeyId": "WRONGKEY", "SecretAccessKey": "s"}'
	home "[default]
credential_process = printf '$out'"
	export D9PROF_CACHE=$TMP/cache
	d9 -- fleet -i s3://bkt/c && { fail "fleet passed"; return; }
	grep -qF "403 InvalidAccessKeyId" "$TMP/d9.err" && grep -qF "(key from credential_process of profile default)" "$TMP/d9.err" ||
		{ cat "$TMP/d9.err"; fail "fleet does not name the key's source"; return; }
	d9 -- tasks -i s3://bkt/c && { fail "tasks -i s3:// passed"; return; }
	[ "$(wc -l <"$TMP/d9.err")" = 1 ] && grep -qF "(key from credential_process of profile default)" "$TMP/d9.err" ||
		{ cat "$TMP/d9.err"; fail "-i s3:// does not name the key's source"; return; }
	say "    $(cat "$TMP/d9.err")"
}

t_none_found_says_what_was_tried() {
	home
	refused "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" || return
	grep -qF "(tried the environment, web identity, profile default of $TMP/home/.aws/credentials and $TMP/home/.aws/config, the container endpoint, IMDSv2 (AWS_EC2_METADATA_DISABLED))" "$TMP/d9.err" ||
		fail "not what was tried"
}

e2e_run_tests
