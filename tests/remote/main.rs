//! The remote stores' integration tests (feature `remote`), in one test
//! binary: object_store's HTTP and S3 stores against servers the tests start
//! (Starlette under uvicorn, moto, and a hostile HTTP server of the tests'
//! own). One link instead of one per file, as in `tests/local/`; `cargo test
//! --features remote --test remote MODULE::` runs one of them.
#![cfg(feature = "remote")]

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/http_server.rs"]
mod http_server;
#[path = "../../examples/inspect.rs"]
#[allow(dead_code)] // the example's `main` and what only it uses
mod inspect;
#[path = "../common/servers.rs"]
mod servers;

mod read_engine_remote;
mod remote_credentials;
mod remote_hostile;
mod remote_index_cache;
mod remote_secrets;
mod remote_stores;
