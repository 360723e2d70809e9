#!/usr/bin/env bash
# Makes a Docker daemon and docker-compose available for the deploy e2e tests
# (e2e/deploy-compose.test.ts), on a fresh CI machine as on a developer's:
#   - installs Debian's docker.io and docker-compose with apt-get when `docker` or
#     `docker-compose` is missing (needs root);
#   - when no daemon answers, starts `dockerd --storage-driver=vfs` in the background (vfs works
#     inside any container or VM: no overlay mounts needed), logging to $DOCKERD_LOG (default
#     /var/log/clusterd-dockerd.log), and waits until it answers.
# A daemon this script starts keeps running after the tests (it is a system service like any
# other); the tests remove the containers, networks and volumes they create.
# Exit status: 0 ready, 1 docker cannot be made ready (the message says why).
set -euo pipefail

log=${DOCKERD_LOG:-/var/log/clusterd-dockerd.log}

missing=()
# dockerd, not docker: a machine may have a Docker client alone (these have /usr/local/bin/docker).
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
# shellcheck source=tools/apt-install-missing.sh
. "$(dirname "$0")/apt-install-missing.sh"
apt_install_missing ensure-docker ${missing[@]+"${missing[@]}"}

docker info >/dev/null 2>&1 && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "ensure-docker: no Docker daemon answers and starting one needs root" >&2
  exit 1
fi
dockerd_bin=$(command -v dockerd || true)
if [ -z "$dockerd_bin" ]; then
  echo "ensure-docker: docker answers no daemon and dockerd is not installed (apt-get install docker.io)" >&2
  exit 1
fi
echo "==> starting dockerd (vfs storage; log: $log)"
# setsid: the daemon must outlive this script and not receive the terminal's signals.
setsid "$dockerd_bin" --storage-driver=vfs >>"$log" 2>&1 </dev/null &
for _ in $(seq 1 120); do
  if docker info >/dev/null 2>&1; then
    echo "==> dockerd is up"
    exit 0
  fi
  if ! kill -0 $! 2>/dev/null; then
    echo "ensure-docker: dockerd exited; the end of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
  sleep 0.5
done
echo "ensure-docker: dockerd did not answer within 60 s; the end of $log:" >&2
tail -n 20 "$log" >&2
exit 1
