# memcluster image: `make image` (builds the static binaries into bin/, stages bin/image/, then `docker build`).
# FROM scratch: nothing but the two binaries, a CA bundle for https embedding servers and object stores, and the
# directories the node writes. No shell: every command below is exec form.
FROM scratch

COPY bin/image/root/ /
# /data (the volume) and /tmp belong to the numeric user the node runs as; scratch has no /etc/passwd to need.
COPY --chown=65532:65532 bin/image/user/ /
COPY bin/memnode bin/memctl /
COPY LICENSE /LICENSE

USER 65532:65532
VOLUME /data

# Single-node defaults; deploy/compose.yaml sets the addresses of a 3-node cluster. Every flag also reads
# MEMNODE_<FLAG>. --bind-host 0.0.0.0 listens on every interface while --http-addr, --raft-addr and --gossip-addr
# stay the addresses peers are told (override them with names the peers resolve).
ENV MEMNODE_DATA_DIR=/data \
    MEMNODE_BIND_HOST=0.0.0.0 \
    MEMCTL_ADDR=http://127.0.0.1:7480

# HTTP API, Raft (TCP), gossip (TCP and UDP).
EXPOSE 7480/tcp 7481/tcp 7482/tcp 7482/udp

# memctl health: /healthz and /readyz (every local shard has a leader) of the node itself, through MEMCTL_ADDR
# (https://… with MEMCTL_CACERT when the node serves TLS).
HEALTHCHECK --interval=5s --timeout=5s --start-period=60s --retries=3 CMD ["/memctl", "--timeout", "4s", "health"]

ENTRYPOINT ["/memnode"]
CMD ["--dev", "--node-id", "dev"]
