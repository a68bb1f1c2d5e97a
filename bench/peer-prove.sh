#!/usr/bin/env bash
# What a CI step scripts without proving-kit (figure 6's peer, bench/fig6-e2e.ts): pack the PIE
# directory with Info-ZIP, upload it with curl -F to the L2 endpoint, then poll with curl | jq
# and `sleep 5` until the query is DONE (exit 0) or FAILED (exit 1).
#
#   bench/peer-prove.sh <pie-dir> <base-url> <api-key>
#
# zip writes through a pipe: written to a file, Info-ZIP stores (method 0) any entry deflate
# would not shrink, such as a 20-byte version.json, and cairo-lang (and the service) reject a
# pie.zip with a stored entry; through a pipe it cannot go back, so every entry stays deflated.
set -euo pipefail
dir=$1 url=$2 key=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

files=(metadata.json memory.bin additional_data.json execution_resources.json)
[ -f "$dir/version.json" ] && files+=(version.json)
(cd "$dir" && zip -q -r - "${files[@]}" | cat >"$work/pie.zip")

id=$(curl -sS --fail \
  -F "pieFile=@$work/pie.zip;type=application/zip" \
  -F mockFactHash=false -F prover=svc_sharp -F layout=auto \
  "$url/v1/l2/proving-query/proof-generation-verification?apiKey=$key" | jq -er .provingQueryId)

while :; do
  status=$(curl -sS --fail -H "api-key: $key" "$url/docs/proving-query/$id" | jq -r .provingQuery.status)
  case "$status" in
    DONE) break ;;
    FAILED) echo "query $id FAILED" >&2; exit 1 ;;
  esac
  sleep 5
done
echo "query $id $status"
