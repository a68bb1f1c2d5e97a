#!/usr/bin/env bash
# What a CI step scripts without proving-kit to submit a PIE directory (figure 10's peer,
# bench/fig10-prove-dir.ts): pack it with Info-ZIP at level 1, then upload it with curl -F to
# the L2 endpoint; prints the query id. No validation, no facts.
#
#   bench/peer-submit.sh <pie-dir> <base-url> <api-key> <work-dir>
#
# zip writes through a pipe: written to a file, Info-ZIP stores (method 0) any entry deflate
# would not shrink, such as a 20-byte version.json, and cairo-lang (and the service) reject a
# pie.zip with a stored entry; through a pipe it cannot go back, so every entry stays deflated.
set -euo pipefail
dir=$1 url=$2 key=$3 work=$4
rm -f "$work/pie.zip"
files=(metadata.json memory.bin additional_data.json execution_resources.json)
[ -f "$dir/version.json" ] && files+=(version.json)
(cd "$dir" && zip -q -r -1 - "${files[@]}" | cat >"$work/pie.zip")
curl -sS --fail \
  -F "pieFile=@$work/pie.zip;type=application/zip" \
  -F mockFactHash=false -F prover=svc_sharp -F layout=auto \
  "$url/v1/l2/proving-query/proof-generation-verification?apiKey=$key" | jq -er .provingQueryId
