#!/usr/bin/env bash
# Installs what the test suite needs beyond npm packages, when it is missing:
#   kubectl            (preinstalled on our machines; the e2e suite uses the installed one)
#   python3-kubernetes (Debian's package, imported by Debian's /usr/bin/python3 only)
#   etcd-server        (Debian's etcd, for the etcd backend and benchmark baselines)
#   libnghttp2-dev, libssl-dev, gcc (to build the bench's native watch client)
#   docker.io, docker-compose and a running dockerd (tools/ensure-docker.sh; the deploy e2e tests)
# Needs root for apt-get; says clearly what is missing otherwise.
set -euo pipefail

missing=()
command -v kubectl >/dev/null 2>&1 || missing+=(kubectl)
/usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1 || missing+=(python3-kubernetes)
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
[ -f /usr/include/nghttp2/nghttp2.h ] || missing+=(libnghttp2-dev)
[ -f /usr/include/openssl/ssl.h ] || missing+=(libssl-dev)
command -v cc >/dev/null 2>&1 || missing+=(gcc libc6-dev)

# shellcheck source=tools/apt-install-missing.sh
. "$(dirname "$0")/apt-install-missing.sh"
apt_install_missing ensure-test-deps ${missing[@]+"${missing[@]}"}

exec "$(dirname "$0")/ensure-docker.sh"
