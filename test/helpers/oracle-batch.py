"""Many PIEs through ../shared/oracle in one Python process (test/helpers/oracle.ts runs it).

`judge` starts one Python per PIE, and importing cairo-lang takes seconds; this imports the
oracle's own oracle.py once and calls the same `judge` and `equal` on each job, so its verdicts
are judge's. Jobs are JSON lines on stdin: ["judge", path], ["equal", a, b], ["verdict", path]
(judge's validity and Pedersen program hash alone), or ["entries", path]:
what Python's zipfile itself reads of the zip, as cairo-lang's `from_file` opens it (the last
copy of each name, `read()` in full): each entry's name and the SHA-256 of its bytes, or the
error zipfile raises. One JSON line per job on stdout, in order. PROVING_ORACLE_MAX_WORDS lowers
the oracle's hash limits (programs above it get validity and the pack round trip, not hashes:
pure-Python Pedersen is slow). With PROVING_ORACLE_ZIP_ONLY=1 cairo-lang is not imported and
only `entries` jobs run: any Python's zipfile (3.11.2, 3.12, 3.13) answers them.
"""
import hashlib
import json
import os
import resource
import sys
import warnings
import zipfile

warnings.simplefilter("ignore")  # zipfile's "Duplicate name" warnings

if os.environ.get("PROVING_ORACLE_ZIP_ONLY") != "1":
    import oracle

    limit = os.environ.get("PROVING_ORACLE_MAX_WORDS")
    if limit:
        oracle.MAX_PEDERSEN_WORDS = min(oracle.MAX_PEDERSEN_WORDS, int(limit))
        oracle.MAX_BLAKE_WORDS = min(oracle.MAX_BLAKE_WORDS, int(limit))
        oracle.MAX_POSEIDON_WORDS = min(oracle.MAX_POSEIDON_WORDS, int(limit))


def verdict(path):
    """judge's verdict and Pedersen program hash alone (the fuzzer's many small PIEs need no more)."""
    out = {"path": path}
    try:
        pie = oracle.load(path)
    except Exception as e:
        return {**out, "valid": False, "error": "from_file: " + oracle.err(e)}
    try:
        pie.run_validity_checks()
        out["valid"] = True
    except Exception as e:
        out["valid"] = False
        out["error"] = "run_validity_checks: " + oracle.err(e)
    try:
        program = pie.metadata.program
        out["hashes"] = {"pedersen": hex(oracle.compute_program_hash_chain(program, oracle.HashFunction.PEDERSEN))}
    except Exception as e:
        out["hashes"] = {"pedersen": "error:" + oracle.err(e)}
    return out


def entries(path):
    """Each name's bytes as zipfile reads them for cairo-lang (NameToInfo: the last copy)."""
    try:
        with open(path, "rb") as f, zipfile.ZipFile(f) as zf:
            out = {}
            for name in sorted({info.filename for info in zf.infolist()}):
                with zf.open(name) as fp:
                    out[name] = hashlib.sha256(fp.read()).hexdigest()
            return {"entries": out}
    except Exception as e:
        return {"error": f"{type(e).__name__}: {str(e)[:300]}"}


for line in sys.stdin:
    job = json.loads(line)
    try:
        if job[0] == "entries":
            result = entries(job[1])
        elif job[0] == "verdict":
            result = verdict(job[1])
        elif job[0] == "judge":
            result = oracle.judge(job[1])
        else:
            result = oracle.equal(job[1], job[2])
    except Exception as e:  # the oracle's own crash, reported as such
        result = {"crash": f"{type(e).__name__}: {str(e)[:300]}"}
    print(json.dumps(result, default=str), flush=True)

# The CPU time spent, for the test's report (its wall time depends on what else the machine runs).
usage = resource.getrusage(resource.RUSAGE_SELF)
print(f"cpu {usage.ru_utime + usage.ru_stime:.2f}", file=sys.stderr)
