#!/usr/bin/env bash
# mnemo chat against a server of one's own that takes no key (llama.cpp,
# vLLM, Ollama): with a base URL and no key set, the chat runs and sends no
# key header; the public API still needs a key; --api-key is sent as given.
#
# Run by test/client/run.sh with MNEMO_BIN (the sanitized mnemo) and
# PGDATABASE (a fresh database with the extension); prints TAP.
# MNEMO_PROVIDER_SERVER: the provider-server binary (built here if unset).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

M=${MNEMO_BIN:?MNEMO_BIN is the mnemo command to test}
SRV=${MNEMO_PROVIDER_SERVER:-}
if [ -z "$SRV" ]; then
	make -s -C test/provider_server >/dev/null 2>&1 || { echo "Bail out! cannot build test/provider_server"; exit 1; }
	SRV=$PWD/test/provider_server/provider-server
fi
work=$(mktemp -d /tmp/mnemo-keyless.XXXXXX)
srv_pid=
cleanup() {
	[ -n "$srv_pid" ] && kill -TERM "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=lib/tap.sh
. test/client/lib/tap.sh

cat >"$work/script" <<'EOF'
model local-model

reply keyless
  text "No key needed."

reply with-key
  text "Key seen."
EOF
# --keyless: a request without a key is served, as a local server serves it
"$SRV" --script "$work/script" --port-file "$work/port" --log "$work/requests.log" --keyless --quiet \
	2>"$work/server.err" &
srv_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
if [ ! -s "$work/port" ]; then
	echo "Bail out! the provider server did not start"
	exit 1
fi
url=http://127.0.0.1:$(cat "$work/port")/v1

printf 'hello\n' | env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u OPENAI_BASE_URL -u ANTHROPIC_BASE_URL \
	"$M" chat --base-url "$url" --model local-model >"$work/out" 2>"$work/err"
rc=$?
if [ "$rc" -eq 0 ] && [ "$(cat "$work/out")" = "No key needed." ]; then
	ok "a base URL and no key: the chat runs (openai by default)"
else
	not_ok "keyless chat: exit $rc"
	sed 's/^/# /' "$work/err"
fi
if [ -s "$work/requests.log" ] && ! grep -q '"auth":"bearer"' "$work/requests.log" &&
	grep -q '"key":"missing"' "$work/requests.log"; then
	ok "and no key header is sent"
else
	not_ok "the keyless request's headers"
	sed 's/^/# /' "$work/requests.log" | cut -c1-300
fi

printf 'hello\n' | env -u OPENAI_API_KEY -u OPENAI_BASE_URL \
	"$M" chat --base-url "$url" --model local-model --api-key sk-given >"$work/out" 2>"$work/err"
if grep -q '"auth":"bearer"' <(sed -n 2p "$work/requests.log") && [ "$(cat "$work/out")" = "Key seen." ]; then
	ok "--api-key is sent as the bearer key"
else
	not_ok "--api-key"
	sed -n 2p "$work/requests.log" | cut -c1-300 | sed 's/^/# /'
fi
if ! grep -q sk-given "$work/out" "$work/err"; then ok "and never printed"; else not_ok "the key was printed"; fi

printf 'hello\n' | env -u OPENAI_API_KEY -u OPENAI_BASE_URL \
	"$M" chat --provider openai --model m >"$work/out" 2>"$work/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "no API key for openai" "$work/err"; then
	ok "the public API without a key: exit 1 saying so"
else
	not_ok "the public API without a key: exit $rc"
	sed 's/^/# /' "$work/err"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
