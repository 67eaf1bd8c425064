//! The black-box suite: the real `sceau` binary (or its library's `run` on port 0), real HTTP,
//! real webhook receivers, RabbitMQ, Redis, an S3 server and Chromium, in one test binary (one
//! link instead of one per file). Each module is one area of the product; `support` starts the
//! service and the tools around it. `SCEAU_TEST_MODE=distributed` runs the same tests against the
//! distributed processes.

mod support;

mod abuse;
mod api_errors;
mod batch_flow;
mod browser;
mod certificate;
mod cli_and_ops;
mod client_deposit;
mod client_listen;
mod client_verify;
mod compose;
mod consultations;
mod distributed;
mod doctor;
mod durability;
mod engine_samples;
mod face_match;
mod full_disk;
mod hostile_files;
mod http_edge;
mod idempotency;
mod journey;
mod leaks;
mod portal;
mod python_client;
mod realtime_lane;
mod request_ids;
mod review;
mod seal_conformity;
mod test_mode;
mod verifications;
mod webhooks;
