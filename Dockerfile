# syntax=docker/dockerfile:1
# Voicegate's image: built from Debian's packages and npm alone, so it builds offline of any other
# registry. Node.js 20 is Debian trixie's; native addons (better-sqlite3) compile against its headers.
#   docker build -t voicegate .
#   podman build --format docker -t voicegate .    (an OCI-format image drops the HEALTHCHECK)
# Behind a TLS-intercepting proxy, hand npm the proxy's CA bundle as a build secret:
#   docker build --secret id=extra_ca,src=/etc/ssl/certs/ca-certificates.crt -t voicegate .
ARG BASE=debian:trixie-slim

FROM ${BASE} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      nodejs npm libnode-dev python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# node-gyp builds against Debian's headers in /usr/include/node instead of downloading Node's.
ENV npm_config_nodedir=/usr \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=extra_ca,required=false \
    if [ -s /run/secrets/extra_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/extra_ca; fi \
 && npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build-assets.mjs scripts/
COPY src src
RUN npx tsc -p tsconfig.build.json && node scripts/build-assets.mjs \
 && npm prune --omit=dev \
 && rm -rf node_modules/.cache \
 # better-sqlite3 needs only its compiled addon, not the SQLite sources and objects it was built from
 && cd node_modules/better-sqlite3 && rm -rf deps src build/Release/obj.target build/Release/.deps build/deps build/Release/test_extension.node

FROM ${BASE}
# bzip2 unpacks the model archives `voicegate models pull` fetches; tini reaps what the server
# spawns and passes signals on, so SIGTERM drains.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      nodejs ca-certificates bzip2 tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 voicegate \
 && useradd --system --uid 10001 --gid voicegate --home-dir /var/lib/voicegate --shell /usr/sbin/nologin voicegate \
 && mkdir -p /var/lib/voicegate /var/lib/voicegate-jobs /etc/voicegate \
 && chown voicegate:voicegate /var/lib/voicegate /var/lib/voicegate-jobs
WORKDIR /opt/voicegate
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist/src dist/src
RUN printf '#!/bin/sh\nexec node /opt/voicegate/dist/src/main.js "$@"\n' > /usr/local/bin/voicegate \
 && chmod 755 /usr/local/bin/voicegate
ENV NODE_ENV=production \
    VOICEGATE_HOST=0.0.0.0 \
    VOICEGATE_PORT=8080 \
    VOICEGATE_DATA_DIR=/var/lib/voicegate
USER 10001:10001
VOLUME ["/var/lib/voicegate"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 CMD ["voicegate", "healthcheck"]
ENTRYPOINT ["tini", "--"]
CMD ["voicegate", "serve"]
