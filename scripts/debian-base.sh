#!/usr/bin/env bash
# Builds the Dockerfile's base image, debian:trixie-slim, from Debian's own mirror with debootstrap
# and imports it into podman under the name a registry pull would give it. For machines that reach
# Debian's mirror but no container registry; anywhere else `podman pull debian:trixie-slim` does it.
#   scripts/debian-base.sh [image-name] [mirror]
set -euo pipefail
IMAGE="${1:-docker.io/library/debian:trixie-slim}"
MIRROR="${2:-${DEBIAN_MIRROR:-http://deb.debian.org/debian}}"
if podman image exists "$IMAGE"; then echo "$IMAGE is present"; exit 0; fi
command -v debootstrap >/dev/null || { echo "debootstrap is missing: apt-get install debootstrap" >&2; exit 1; }
ROOT="$(mktemp -d /var/tmp/debian-base.XXXXXX)"
trap 'rm -rf "$ROOT"' EXIT
debootstrap --variant=minbase --components=main trixie "$ROOT" "$MIRROR" >"$ROOT.log" 2>&1 || { tail -20 "$ROOT.log" >&2; rm -f "$ROOT.log"; exit 1; }
rm -f "$ROOT.log"
# What the official slim image trims: the downloaded packages, lists and caches, and (also for
# packages installed later) man pages, docs and translations.
rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/apt/*.bin \
  "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* "$ROOT"/usr/share/locale/*
cat > "$ROOT/etc/dpkg/dpkg.cfg.d/slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
CFG
echo "deb $MIRROR trixie main" > "$ROOT/etc/apt/sources.list"
tar --numeric-owner -C "$ROOT" -c . | podman import --change 'CMD ["bash"]' - "$IMAGE" >/dev/null
echo "imported $IMAGE"
