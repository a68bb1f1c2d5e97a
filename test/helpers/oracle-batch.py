"""Many PIEs through ../shared/oracle in one Python process (test/helpers/oracle.ts runs it).

`judge` starts one Python per PIE, and importing cairo-lang takes seconds; this imports the
oracle's own oracle.py once and calls the same `judge` and `equal` on each job, so its verdicts
are judge's. Jobs are JSON lines on stdin: ["judge", path] or ["equal", a, b]; one JSON line
per job on stdout, in order. PROVING_ORACLE_MAX_WORDS lowers the oracle's hash limits (programs
above it get validity and the pack round trip, not hashes: pure-Python Pedersen is slow).
"""
import json
import os
import resource
import sys

import oracle

limit = os.environ.get("PROVING_ORACLE_MAX_WORDS")
if limit:
    oracle.MAX_PEDERSEN_WORDS = min(oracle.MAX_PEDERSEN_WORDS, int(limit))
    oracle.MAX_BLAKE_WORDS = min(oracle.MAX_BLAKE_WORDS, int(limit))
    oracle.MAX_POSEIDON_WORDS = min(oracle.MAX_POSEIDON_WORDS, int(limit))

for line in sys.stdin:
    job = json.loads(line)
    try:
        if job[0] == "judge":
            result = oracle.judge(job[1])
        else:
            result = oracle.equal(job[1], job[2])
    except Exception as e:  # the oracle's own crash, reported as such
        result = {"crash": oracle.err(e)}
    print(json.dumps(result, default=str), flush=True)

# The CPU time spent, for the test's report (its wall time depends on what else the machine runs).
usage = resource.getrusage(resource.RUSAGE_SELF)
print(f"cpu {usage.ru_utime + usage.ru_stime:.2f}", file=sys.stderr)
