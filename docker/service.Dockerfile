# The demo's programs in one Debian 12 image: checkout-service, payment-processor, order-consumer
# and demo-driver in /usr/local/bin; the container's command says which one runs
# (docker/compose.yaml runs the first three). The build context is the repository root:
#   docker build -f docker/service.Dockerfile -t pg_idempotency-programs .
#   docker run --rm pg_idempotency-programs payment-processor --help
# DEBIAN_IMAGE and DEBIAN_SLIM_IMAGE: the official debian:12 and debian:12-slim by default;
# scripts/docker-check.sh builds from a local image it makes from Debian's packages instead.
ARG DEBIAN_IMAGE=debian:12
ARG DEBIAN_SLIM_IMAGE=debian:12-slim

# ---- builder: the CMake build of the four programs ----------------------------------------------
FROM ${DEBIAN_IMAGE} AS builder
ENV DEBIAN_FRONTEND=noninteractive
# scripts/install-deps.sh's packages for the client and the demo programs (build-essential brings
# g++ and make). GoogleTest and Google Benchmark are not needed: IDEM_TESTS and IDEM_BENCH are off.
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake pkg-config \
      libpqxx-dev libssl-dev nlohmann-json3-dev libcpp-httplib-dev prometheus-cpp-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# All CMakeLists.txt reads with IDEM_TESTS=OFF IDEM_BENCH=OFF IDEM_FUZZ=OFF: core/ (idem_core),
# client/ (idem_client, its cmake/ and pkg-config templates) and examples/.
COPY CMakeLists.txt ./
COPY core/ core/
COPY client/ client/
COPY examples/ examples/
# Host-built objects of a checkout that has run `make` (core/*.o) are not CMake's, but drop them.
# JOBS: parallel compile jobs (all cores when empty).
ARG JOBS=
RUN find . \( -name '*.o' -o -name '*.so' -o -name '*.bc' -o -name .deps \) -prune -exec rm -rf {} + \
 && cmake -S . -B /build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIDEM_TESTS=OFF -DIDEM_BENCH=OFF \
 && cmake --build /build -j"${JOBS:-$(nproc)}" --target checkout_service payment_processor order_consumer demo_driver \
 && mkdir -p /out \
 && install -s -m 0755 \
      /build/examples/checkout-service/checkout-service \
      /build/examples/payment-processor/payment-processor \
      /build/examples/order-consumer/order-consumer \
      /build/examples/demo-driver/demo-driver \
      /out/

# ---- runtime ------------------------------------------------------------------------------------
FROM ${DEBIAN_SLIM_IMAGE}
# The shared libraries the programs link (libpqxx, libpq, cpp-httplib, prometheus-cpp, OpenSSL's libcrypto; the
# rest come as their dependencies), and curl for the compose file's health checks.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libpqxx-6.4 libpq5 libcpp-httplib0.11 libprometheus-cpp-core1.0 libssl3 curl \
 && rm -rf /var/lib/apt/lists/*
COPY --from=builder /out/ /usr/local/bin/
RUN set -eu; \
    for program in checkout-service payment-processor order-consumer demo-driver; do \
      if ldd "/usr/local/bin/$program" | grep 'not found'; then echo "$program: libraries missing" >&2; exit 1; fi; \
    done; \
    useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin idem
USER idem
EXPOSE 7400 7401
CMD ["sh", "-c", "echo 'give the program to run: checkout-service, payment-processor, order-consumer or demo-driver' >&2; exit 2"]
