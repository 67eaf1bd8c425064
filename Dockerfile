# One image, one binary: `sceau gateway`, `sceau worker`, `sceau notifier` (or `sceau serve`).
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin sceau

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates tesseract-ocr tesseract-ocr-fra tesseract-ocr-eng poppler-utils xmlsec1 && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /data sceau && install -d -m 0700 -o sceau /data
COPY --from=build /src/target/release/sceau /usr/local/bin/sceau
USER sceau
WORKDIR /data
ENV SCEAU_DATA_DIR=/data
ENTRYPOINT ["sceau"]
CMD ["serve"]
