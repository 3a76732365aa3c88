# The platform-api image: the single binary on Debian, run as the cluster agent in a cluster
# (docs/agents.md, "The agent image"). Build it from dist/platform-api, which `npm run build` makes:
#
#   npm run build && docker build -t registry.example.com/platform-api:0.1.0 .
#
# then push it and set PLATFORM_AGENT_IMAGE (docs/operations.md, "The agent image").
FROM debian:bookworm-slim

# The system's CAs, for a platform whose certificate a public CA signed.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/*

COPY dist/platform-api /usr/local/bin/platform-api

# Not root: the agent's manifest also requires a non-root user (runAsNonRoot, runAsUser 65532).
USER 65532:65532

ENTRYPOINT ["/usr/local/bin/platform-api"]
