#!/usr/bin/env bash
# Installs what `npm run notebooks` needs to execute examples/notebooks/*.ipynb, idempotently (a second run changes
# nothing and takes a few seconds):
#   - Jupyter from Debian (jupyter-nbconvert, jupyter-client, python3-ipython), only the packages that are missing;
#   - tslab (the TypeScript kernel), from examples/notebooks/kernel/package-lock.json into that folder's node_modules:
#     not a devDependency of the package, because tslab's TypeScript fork installs a `tsc` binary that would replace
#     TypeScript's in node_modules/.bin;
#   - for opening the notebooks in Jupyter: the `tslab` kernelspec, registered against /usr/bin/python3 (the
#     interpreter with Debian's Jupyter; a python3 earlier on PATH, e.g. pyenv's, may have none), starting tslab
#     through examples/notebooks/kernel/tslab-kernel.cjs (see that file: imports resolved through package.json
#     "exports", ES modules loaded with require(esm)). Only when none is registered, or the registered one starts a
#     launcher that is gone: one of another checkout is left alone. `npm run notebooks` does not use it (it writes a
#     kernelspec of its own checkout for each run, see scripts/notebooks.mjs).
# Run as root in CI (or with passwordless sudo). On failure: one line on stderr saying what is missing, exit 1.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON=/usr/bin/python3
APT_PACKAGES=(jupyter-nbconvert jupyter-client python3-ipython)
KERNEL_DIR=examples/notebooks/kernel

fail() {
  echo "notebooks-setup: $*" >&2
  exit 1
}

# 1. Jupyter
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then missing+=("$pkg"); fi
done
if ((${#missing[@]})); then
  command -v apt-get >/dev/null 2>&1 || fail "cannot install ${missing[*]}: apt-get not found (Debian or Ubuntu needed)"
  if [[ $(id -u) -eq 0 ]]; then
    sudo=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    fail "cannot install ${missing[*]}: run as root (or with passwordless sudo)"
  fi
  echo "notebooks-setup: installing ${missing[*]}"
  log=$(mktemp)
  if ! { "${sudo[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    rm -f "$log"
    fail "apt-get could not install ${missing[*]} (its last lines are above)"
  fi
  rm -f "$log"
fi
[[ -x $PYTHON ]] || fail "$PYTHON not found"
"$PYTHON" -c "import jupyter_client, nbclient, nbconvert, nbformat" 2>/dev/null ||
  fail "$PYTHON cannot import jupyter_client/nbclient/nbconvert/nbformat although ${APT_PACKAGES[*]} are installed"

# 2. tslab, at the version of the kernel folder's lockfile
command -v node >/dev/null 2>&1 || fail "node not found"
wanted=$(node -p "require('./$KERNEL_DIR/package-lock.json').packages['node_modules/tslab'].version")
installed=$(node -p "try { require('./$KERNEL_DIR/node_modules/tslab/package.json').version } catch { '' }")
if [[ $installed != "$wanted" ]]; then
  echo "notebooks-setup: installing tslab $wanted in $KERNEL_DIR"
  npm ci --prefix "$KERNEL_DIR" --no-audit --no-fund --loglevel=error >/dev/null ||
    fail "npm ci in $KERNEL_DIR failed (tslab $wanted)"
fi
tslab=$KERNEL_DIR/node_modules/.bin/tslab
[[ -x $tslab ]] || fail "$tslab not found after npm ci in $KERNEL_DIR"

# 3. The kernelspec, for interactive use (npm run notebooks writes its own): registered when none is, or when the
# registered one starts a launcher that no longer exists. One that starts another checkout's launcher stays: that
# checkout may use it, and this one's notebooks run without it.
kernel=$(realpath "$KERNEL_DIR/tslab-kernel.cjs")
chmod +x "$kernel"
registered=$("$PYTHON" -m jupyter kernelspec list --json 2>/dev/null |
  "$PYTHON" -c 'import json,sys; print((json.load(sys.stdin)["kernelspecs"].get("tslab",{}).get("spec",{}).get("argv") or [""])[0])' ||
  true)
if [[ -z $registered || ! -e $registered ]]; then
  echo "notebooks-setup: installing the tslab kernelspec ($PYTHON, $kernel)"
  "$tslab" install --python "$PYTHON" --binary "$kernel" >/dev/null || fail "tslab install --python $PYTHON failed"
elif [[ $(realpath "$registered") != "$kernel" ]]; then
  echo "notebooks-setup: the tslab kernelspec starts $registered (another checkout), left as it is; npm run" \
    "notebooks does not use it. To open these notebooks in Jupyter: $tslab install --python $PYTHON --binary $kernel"
fi
echo "notebooks-setup: ready (jupyter nbconvert $("$PYTHON" -m jupyter nbconvert --version 2>/dev/null), tslab $wanted)"
