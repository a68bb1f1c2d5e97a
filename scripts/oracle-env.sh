#!/usr/bin/env bash
# The Python environment of the reference oracle (../shared/oracle: cairo-lang v0.14.0.1 from its
# own source), which test/interop/oracle.test.ts runs. Made from this machine's package mirror
# (pip's configured file:// indexes and find-links) and, for what the mirror lacks, Debian's
# python3-* packages; never from the internet: pip is given the mirror as its only index, so a
# package missing there fails here, saying which, instead of retrying pypi.org for minutes.
# Idempotent: a venv that already imports everything is left as it is (well under a second).
# usage: scripts/oracle-env.sh [VENV]   (default: $CAIRO_ORACLE_VENV or /tmp/cairo-oracle-venv,
# where ../shared/oracle/judge looks)
set -euo pipefail
VENV=${1:-${CAIRO_ORACLE_VENV:-/tmp/cairo-oracle-venv}}
# What cairo-lang's PIE loading, hashing and fact code imports (../shared/oracle/setup.sh's list;
# marshmallow_dataclass, marshmallow_oneofschema and typeguard come with the oracle, in deps/).
MODULES='marshmallow, sympy, lark, frozendict, eth_hash, Crypto, typing_inspect, mypy_extensions, ecdsa, cachetools, yaml, numpy'
PACKAGES=('marshmallow>=3.19,<4' numpy sympy lark frozendict 'eth-hash[pycryptodome]' pycryptodome typing-inspect mypy-extensions ecdsa cachetools pyyaml)
# Debian's names for the same, for a mirror without some of them (Debian has no eth-hash).
DEBIAN=(python3-venv python3-marshmallow python3-numpy python3-sympy python3-lark python3-frozendict python3-pycryptodome python3-typing-inspect python3-mypy-extensions python3-ecdsa python3-cachetools python3-yaml)

ready() { [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import $MODULES" 2>/dev/null; }
if ready; then echo "oracle environment: $VENV ready"; exit 0; fi

# The mirror: pip's own configuration (extra-index-url, find-links), used as the only sources.
indexes=()
for url in $(python3 -m pip config get global.extra-index-url 2>/dev/null || true); do
  [ -d "${url#file://}" ] && indexes+=("$url")
done
links=()
for dir in $(python3 -m pip config get global.find-links 2>/dev/null || true); do
  [ -d "$dir" ] && links+=(--find-links "$dir")
done
pip_from_mirror() {
  [ ${#indexes[@]} -gt 0 ] || { echo "oracle environment: no file:// package index in pip's configuration" >&2; return 1; }
  local args=(--index-url "${indexes[0]}")
  for url in "${indexes[@]:1}"; do args+=(--extra-index-url "$url"); done
  # (pip names each configured index that lacks a package; those lines are noise here.)
  "$VENV/bin/pip" install -q --disable-pip-version-check "${args[@]}" "${links[@]}" "$@" 2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2)
}

python3 -m venv --clear "$VENV" 2>/dev/null || true
if [ -x "$VENV/bin/pip" ] && pip_from_mirror "${PACKAGES[@]}" && ready; then
  echo "oracle environment: $VENV made from the package mirror"
  exit 0
fi

# Debian's packages for what the mirror lacks, seen through a venv with the system's site-packages.
echo "oracle environment: the mirror lacks some packages; adding Debian's" >&2
if [ "$(id -u)" = 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends "${DEBIAN[@]}" </dev/null >/dev/null || { apt-get update </dev/null >/dev/null && apt-get install -y --no-install-recommends "${DEBIAN[@]}" </dev/null >/dev/null; }
fi
python3 -m venv --clear --system-site-packages "$VENV"
missing=()
for pair in eth_hash:'eth-hash[pycryptodome]' marshmallow:'marshmallow>=3.19,<4' sympy:sympy lark:lark frozendict:frozendict Crypto:pycryptodome typing_inspect:typing-inspect mypy_extensions:mypy-extensions ecdsa:ecdsa cachetools:cachetools yaml:pyyaml numpy:numpy; do
  "$VENV/bin/python" -c "import ${pair%%:*}" 2>/dev/null || missing+=("${pair#*:}")
done
[ ${#missing[@]} -eq 0 ] || pip_from_mirror "${missing[@]}" || true
if ready; then echo "oracle environment: $VENV made from Debian's packages and the mirror"; exit 0; fi
echo "oracle environment: could not make $VENV: missing $("$VENV/bin/python" -c "
import importlib
print(', '.join(m for m in '$MODULES'.split(', ') if importlib.util.find_spec(m) is None))" 2>/dev/null)" >&2
exit 1
