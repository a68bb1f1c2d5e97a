#!/usr/bin/env bash
# The waiting half of what a CI step scripts without proving-kit: poll the query with curl | jq
# and `sleep 5` until it is DONE or FAILED. Figure 4's peer at 10 s (bench/fig4-wait.ts).
# Prints one JSON line: the final status, how many requests it made, and when it noticed
# (milliseconds since the epoch).
#
#   bench/peer-wait.sh <base-url> <api-key> <query-id>
set -euo pipefail
url=$1 key=$2 id=$3
requests=0
while :; do
  status=$(curl -sS --fail -H "api-key: $key" "$url/docs/proving-query/$id" | jq -r .provingQuery.status)
  requests=$((requests + 1))
  case "$status" in DONE | FAILED) break ;; esac
  sleep 5
done
echo "{\"status\":\"$status\",\"requests\":$requests,\"detectedAtMs\":$(date +%s%3N)}"
