//! Servers that lie, against remote stores (feature `remote`): a
//! `Content-Length` of 2^50, a range answered with a 1 GiB body, a 1 GiB
//! error body, a body that never ends, and redirects to another host. Each
//! read ends within the request limit with a clear error (or, for a
//! redirect a store may follow, the right values), the process is not
//! aborted by an allocation sized by a server's number, and no request
//! that carries a credential reaches another host. Over HTTP and over S3
//! (the same server as the S3 endpoint, path style), sync and async.
//!
//! Before the crate's own transport (`src/remote/transport.rs`): a lying
//! length aborted the test process (object_store sized a buffer by it), the
//! error bodies were copied whole into messages, and reqwest followed a
//! redirect anywhere with the session token.
#![cfg(feature = "remote")]

use crate::common;
use crate::http_server;
use crate::servers;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::copy_tree;
use http_server::{HttpServer, Misbehaviour};
use servers::fixtures_root;
use zarrs::array::{Array, ArrayBytes, ArraySubset};
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs::remote::{
    AsyncRemoteStore, FetchedKeys, RefreshingCredentials, RemoteOptions, RemoteStore,
};
use zarrs_extension_codecs::{ArrayReadExt, AsyncArrayReadExt};

/// A sharded store written by zarr-python (the bad-input tests' one).
const SHARDED: &str = "sharded_so_cv_f64_u8_nan";
const SHAPE: [u64; 2] = [37, 53];
/// The bucket of the S3 case: the server's root holds `BUCKET/store.zarr`.
const BUCKET: &str = "bucket";
/// The request limit of these tests: each read ends well within it.
const TIMEOUT: Duration = Duration::from_secs(20);

fn options() -> RemoteOptions {
    let mut options = RemoteOptions::default();
    options.max_retries = 0;
    options.retry_timeout = Duration::from_secs(2);
    options.timeout = TIMEOUT;
    options.connect_timeout = Duration::from_secs(2);
    // A whole object (no range asked) may carry this much: the 1 GiB
    // bodies fail after it.
    options.max_object_bytes = 16 << 20;
    options
}

/// The S3 settings of an endpoint at `url`, with keys and a session token
/// (the server does not check them).
fn s3_options(url: &str) -> RemoteOptions {
    options()
        .with_s3_config("aws_endpoint_url", url)
        .with_s3_config("aws_region", "us-east-1")
        .with_s3_config("aws_access_key_id", "AKIAHOSTILETEST")
        .with_s3_config("aws_secret_access_key", "hostile-test-secret-key")
        .with_s3_config("aws_session_token", "hostile-test-session-token")
}

/// A directory holding the store at `store.zarr` and at `BUCKET/store.zarr`.
fn served_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let source = fixtures_root().join(format!("zarr-python/{SHARDED}.zarr"));
    copy_tree(&source, &dir.path().join("store.zarr"));
    copy_tree(&source, &dir.path().join(BUCKET).join("store.zarr"));
    dir
}

/// The store's URLs at `server`: over HTTP, and as S3 through it.
fn stores(server: &HttpServer) -> Vec<(&'static str, RemoteStore)> {
    let http = RemoteStore::open(&format!("{}/store.zarr", server.url()), &options()).unwrap();
    let s3 = RemoteStore::open(
        &format!("s3://{BUCKET}/store.zarr"),
        &s3_options(&server.url()),
    )
    .unwrap();
    vec![("http", http), ("s3", s3)]
}

/// Open the array of `store` and read it whole and a window of it, through
/// the crate's engine and through zarrs: every error, each checked to end
/// within the limit. Values from a hostile server are a failure.
fn read_errors(what: &str, store: RemoteStore) -> Vec<String> {
    let started = Instant::now();
    let array = match Array::open(Arc::new(store), "/") {
        Ok(array) => array,
        Err(e) => return vec![e.to_string()],
    };
    let mut errors = Vec::new();
    for subset in [
        ArraySubset::new_with_ranges(&[0..4, 8..16]),
        ArraySubset::new_with_shape(SHAPE.to_vec()),
    ] {
        match array.retrieve_array_subset_vec::<f64>(&subset) {
            Ok(_) => panic!("{what} {subset:?}: the engine read values from a hostile server"),
            Err(e) => errors.push(e.to_string()),
        }
        match array.retrieve_array_subset::<ArrayBytes<'static>>(&subset) {
            Ok(_) => panic!("{what} {subset:?}: zarrs read values from a hostile server"),
            Err(e) => errors.push(e.to_string()),
        }
    }
    assert!(
        started.elapsed() < TIMEOUT * 4,
        "{what}: {:?} for 4 reads",
        started.elapsed()
    );
    errors
}

/// Each hostile answer, for metadata and chunks alike, ends in an error
/// naming what went wrong, in a message of bounded length.
#[test]
fn hostile_answers_end_in_errors_not_aborts() {
    let dir = served_dir();
    let cases: [(Misbehaviour, &[&str]); 4] = [
        // hyper's words: the body ended before the length it announced.
        (Misbehaviour::LyingLength, &["before message length"]),
        (Misbehaviour::LongBody, &["more than"]),
        (Misbehaviour::HugeErrorBody, &["403"]),
        // object_store refuses a whole object of no announced length.
        (Misbehaviour::EndlessBody, &["more than", "Content-Length"]),
    ];
    for (misbehaviour, causes) in cases {
        let server = HttpServer::serve_misbehaving_everywhere(dir.path(), misbehaviour).unwrap();
        for (scheme, store) in stores(&server) {
            let what = format!("{misbehaviour:?} over {scheme}");
            for error in read_errors(&what, store) {
                assert!(
                    causes.iter().any(|cause| error.contains(cause)),
                    "{what}: none of {causes:?} in {error}"
                );
                // An error body is cut (8 KiB), and nothing is repeated
                // whole: the message stays short.
                assert!(
                    error.len() < 24 << 10,
                    "{what}: a message of {} bytes",
                    error.len()
                );
            }
        }
    }
}

/// Whether `error` names a shard's key (`shard c/1/3`, or its URL).
fn names_a_chunk(error: &str) -> bool {
    error.contains("shard c/") || error.contains("/store.zarr/c/")
}

/// Chunks only misbehave (the metadata is right): the reads that reach
/// them fail; a body longer than the range asked for fails at once, not
/// after 1 GiB.
#[test]
fn hostile_chunk_answers_fail_the_reads_that_reach_them() {
    let dir = served_dir();
    for misbehaviour in [
        Misbehaviour::LyingLength,
        Misbehaviour::LongBody,
        Misbehaviour::HugeErrorBody,
        Misbehaviour::EndlessBody,
    ] {
        let server = HttpServer::serve_misbehaving(dir.path(), misbehaviour).unwrap();
        for (scheme, store) in stores(&server) {
            let what = format!("{misbehaviour:?} over {scheme}");
            let errors = read_errors(&what, store);
            assert_eq!(errors.len(), 4, "{what}: {errors:?}");
            for error in errors {
                assert!(names_a_chunk(&error), "{what}: no chunk key in {error}");
            }
        }
    }
}

/// The async store too: a lying length and an over-long body are errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_reads_of_hostile_answers_are_errors() {
    let dir = served_dir();
    for misbehaviour in [Misbehaviour::LyingLength, Misbehaviour::LongBody] {
        let server = HttpServer::serve_misbehaving(dir.path(), misbehaviour).unwrap();
        let url = format!("{}/store.zarr", server.url());
        let store = Arc::new(AsyncRemoteStore::open(&url, &options()).unwrap());
        let array = Array::async_open(store, "/").await.unwrap();
        let subset = ArraySubset::new_with_shape(SHAPE.to_vec());
        let result = array.async_retrieve_array_subset_vec::<f64>(&subset).await;
        let error = result
            .expect_err("values from a hostile server")
            .to_string();
        assert!(names_a_chunk(&error), "{misbehaviour:?}: {error}");
    }
}

/// The values of the fixture store, read from the filesystem.
fn local_values() -> Vec<f64> {
    let local = Array::open(
        Arc::new(
            FilesystemStore::new(fixtures_root().join(format!("zarr-python/{SHARDED}.zarr")))
                .unwrap(),
        ),
        "/",
    )
    .unwrap();
    local
        .retrieve_array_subset_vec(&ArraySubset::new_with_shape(SHAPE.to_vec()))
        .unwrap()
}

/// A redirect to another host: not followed by an S3 store (its requests
/// carry a signature and a session token) nor by an HTTP store whose URL
/// carries a token; the other host gets no request, and the error names
/// the target without the token. An HTTP store with nothing secret follows
/// it and reads the right values.
#[test]
fn redirects_to_another_host_carry_no_credentials() {
    let dir = served_dir();
    let target = HttpServer::serve(dir.path()).unwrap();
    let port: u16 = target.url().rsplit(':').next().unwrap().parse().unwrap();
    let redirecting =
        HttpServer::serve_misbehaving_everywhere(dir.path(), Misbehaviour::RedirectTo(port))
            .unwrap();
    let with_token = RemoteStore::open(
        &format!("{}/store.zarr?token=redirect-test-token", redirecting.url()),
        &options(),
    )
    .unwrap();
    let s3 = RemoteStore::open(
        &format!("s3://{BUCKET}/store.zarr"),
        &s3_options(&redirecting.url()),
    )
    .unwrap();
    for (what, store) in [("s3", s3), ("http with a token", with_token)] {
        let error = Array::open(Arc::new(store), "/")
            .err()
            .unwrap_or_else(|| panic!("{what}: opened through a redirect to another host"))
            .to_string();
        assert!(error.contains("another host"), "{what}: {error}");
        for secret in ["redirect-test-token", "hostile-test-session-token"] {
            assert!(!error.contains(secret), "{what}: {secret} shown in {error}");
        }
        assert_eq!(target.requests(), 0, "{what}: the other host was asked");
    }
    // Nothing secret: followed, and right.
    let public =
        RemoteStore::open(&format!("{}/store.zarr", redirecting.url()), &options()).unwrap();
    let array = Array::open(Arc::new(public), "/").unwrap();
    let all = ArraySubset::new_with_shape(SHAPE.to_vec());
    let got: Vec<f64> = array.retrieve_array_subset_vec(&all).unwrap();
    let want = local_values();
    assert_eq!(got.len(), want.len());
    assert!(
        got.iter()
            .zip(&want)
            .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())),
        "values differ through a followed redirect"
    );
    assert!(target.requests() > 0);
}

/// S3's refusal of a signature echoes the canonical request, session token
/// included, as text and as hex bytes: neither form shows in the error,
/// for a token given in `s3_config` and one fetched from a provider given
/// in code (registered as it is fetched).
#[test]
fn echoed_session_tokens_show_in_no_form() {
    let dir = served_dir();
    let server =
        HttpServer::serve_misbehaving_everywhere(dir.path(), Misbehaviour::EchoSignature).unwrap();
    let url = format!("s3://{BUCKET}/store.zarr");
    let from_config = s3_options(&server.url());
    let mut from_provider = options()
        .with_s3_config("aws_endpoint_url", &server.url())
        .with_s3_config("aws_region", "us-east-1");
    from_provider.credentials = Some(Arc::new(RefreshingCredentials::new(
        "the test's provider",
        || {
            Ok(FetchedKeys::new(
                "AKIAPROVIDED",
                "provided-secret-key",
                Some("provided-session-token".to_string()),
                None,
            ))
        },
    )));
    for (what, options, token) in [
        ("s3_config", from_config, "hostile-test-session-token"),
        ("a provider", from_provider, "provided-session-token"),
    ] {
        let store = RemoteStore::open(&url, &options).unwrap();
        let error = Array::open(Arc::new(store), "/")
            .err()
            .unwrap_or_else(|| panic!("{what}: opened"))
            .to_string();
        assert!(error.contains("SignatureDoesNotMatch"), "{what}: {error}");
        let hex: Vec<String> = token.bytes().map(|b| format!("{b:02x}")).collect();
        for form in [token.to_string(), hex.join(" "), hex.concat()] {
            assert!(!error.contains(&form), "{what}: {form:?} in {error}");
        }
    }
}

/// A busy server (`503 Slow Down` or `429 Too Many Requests` with
/// `Retry-After`) is asked again no sooner than it says: object_store's own
/// backoff (a fraction of a second) used to send the retry at once. A wait
/// longer than the store's retry timeout is not waited: the retry comes
/// from object_store's backoff, and the read does not stall for an hour.
#[test]
fn a_busy_server_is_asked_again_when_it_says() {
    let dir = served_dir();
    let mut patient = options();
    patient.max_retries = 2;
    patient.retry_timeout = Duration::from_secs(10);
    // `None`: an HTTP date two seconds ahead, made just before the read
    // (whole seconds: at least one second's wait).
    let cases = [
        ("503 Slow Down", Some("2"), Duration::from_secs(2)),
        ("429 Too Many Requests", Some("2"), Duration::from_secs(2)),
        ("503 Slow Down", None, Duration::from_secs(1)),
        ("503 Slow Down", Some("3600"), Duration::ZERO),
    ];
    for (status, retry_after, at_least) in cases {
        let retry_after: &'static str = match retry_after {
            Some(seconds) => seconds,
            None => Box::leak(httpish_date(2).into_boxed_str()),
        };
        let server =
            HttpServer::serve_misbehaving(dir.path(), Misbehaviour::BusyFirst(status, retry_after))
                .unwrap();
        let store = RemoteStore::open(&format!("{}/store.zarr", server.url()), &patient).unwrap();
        let array = Array::open(Arc::new(store), "/").unwrap();
        let window = ArraySubset::new_with_ranges(&[0..4, 8..16]);
        let started = Instant::now();
        let got = array.retrieve_array_subset_vec::<f64>(&window).unwrap();
        let took = started.elapsed();
        let want = Array::open(
            Arc::new(FilesystemStore::new(dir.path().join("store.zarr")).unwrap()),
            "/",
        )
        .unwrap()
        .retrieve_array_subset_vec::<f64>(&window)
        .unwrap();
        assert_eq!(
            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            "{status} / {retry_after}"
        );
        assert!(
            took >= at_least,
            "{status} / Retry-After {retry_after}: asked again after {took:?}"
        );
        assert!(
            took < Duration::from_secs(9),
            "{status} / Retry-After {retry_after}: {took:?}"
        );
    }
}

/// Now plus `seconds`, as an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`).
fn httpish_date(seconds: u64) -> String {
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + seconds;
    let (days, rest) = (at / 86_400, at % 86_400);
    // Civil date of a day count (Howard Hinnant's well-known method).
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    format!(
        "{}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        WEEKDAYS[(days % 7) as usize],
        MONTHS[(month - 1) as usize],
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}
