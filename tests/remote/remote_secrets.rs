//! No secret in any message: a URL's user-info and query string (a SAS
//! token) and the credential values of the S3 settings never appear in the
//! `Display` or `Debug` of a store, its options or any error, whatever
//! goes wrong; and a store whose URL carries a query-string token sends it
//! with every request (the test server refuses requests without it).
#![cfg(feature = "remote")]

use crate::common;
use crate::http_server;
use crate::inspect;
use crate::servers;

use std::sync::Arc;
use std::time::Duration;

use common::copy_tree;
use http_server::{HttpServer, Misbehaviour};
use servers::{PythonServer, fixtures_root};
use zarrs::array::{Array, ArrayBytes, ArraySubset};
use zarrs::filesystem::FilesystemStore;
use zarrs::storage::ReadableStorageTraits;
use zarrs_extension_codecs::remote::{RemoteOptions, RemoteStore, redact_url};

/// The password in the test URLs.
const PASSWORD: &str = "PassW0rd-xyz";
/// The query-string token in the test URLs.
const TOKEN: &str = "SiGToKeN-4321";
/// The S3 secret key in the test settings.
const SECRET_KEY: &str = "SeCReTKeY-9876";
/// The S3 session token in the test settings.
const SESSION_TOKEN: &str = "SeSSioNToKeN-5555";

/// The sharded fixture store read here.
const SHARDED: &str = "sharded_so_cv_f64_u8_nan";

/// Fail fast: the servers are on this machine.
fn options() -> RemoteOptions {
    let mut options = RemoteOptions::default();
    options.max_retries = 0;
    options.retry_timeout = Duration::from_secs(2);
    options.timeout = Duration::from_secs(10);
    options
}

/// Panics if `text` holds any of the secrets.
fn assert_no_secret(what: &str, text: &str) {
    for secret in [PASSWORD, TOKEN, SECRET_KEY, SESSION_TOKEN] {
        assert!(!text.contains(secret), "{what} shows {secret}: {text}");
    }
}

/// `Display` and `Debug` of `value`, both checked.
fn assert_shown_clean<T: std::fmt::Display + std::fmt::Debug>(what: &str, value: &T) {
    assert_no_secret(what, &value.to_string());
    assert_no_secret(what, &format!("{value:?}"));
    assert_no_secret(what, &format!("{value:#?}"));
}

/// The secret-bearing form of `http://127.0.0.1:PORT/path`.
fn with_secrets(url: &str, path: &str) -> String {
    let host = url.strip_prefix("http://").unwrap();
    format!("http://reader:{PASSWORD}@{host}/{path}?sv=2024-11-04&sig={TOKEN}")
}

#[test]
fn a_query_token_is_sent_with_every_request_and_never_shown() {
    zarrs_extension_codecs::register_overrides();
    let server = PythonServer::http_with(
        &fixtures_root(),
        &["--require-query", &format!("sig={TOKEN}")],
    );
    let path = format!("zarr-python/{SHARDED}.zarr");
    let local = Array::open(
        Arc::new(FilesystemStore::new(fixtures_root().join(&path)).unwrap()),
        "/",
    )
    .unwrap();
    let url = format!("{}/{path}?sv=2024-11-04&sig={TOKEN}", server.url());
    let store = Arc::new(RemoteStore::open(&url, &options()).unwrap());
    assert_eq!(store.url(), format!("{}/{path}?***", server.url()));
    assert_shown_clean("store", &*store);
    assert_shown_clean("async store", &*store.async_store());
    let remote = Array::open(store.clone(), "/").unwrap();
    for subset in [
        local.subset_all(),
        ArraySubset::new_with_ranges(&[3..20, 7..50]),
    ] {
        let want: ArrayBytes<'static> = local.retrieve_array_subset(&subset).unwrap();
        let got: ArrayBytes<'static> = remote.retrieve_array_subset(&subset).unwrap();
        assert!(want == got, "{subset:?}");
    }
    // Every request passed the token check (a 403 would have failed the
    // reads), and there were several: metadata, indexes, chunks.
    assert!(store.fetched().requests >= 3, "{:?}", store.fetched());

    // A wrong token, and none: the server's 403, named, never the token.
    for (query, shown) in [(format!("?sig={TOKEN}x"), "?***"), (String::new(), "")] {
        let url = format!("{}/{path}{query}", server.url());
        let store = Arc::new(RemoteStore::open(&url, &options()).unwrap());
        let error = Array::open(store.clone(), "/").unwrap_err();
        assert_shown_clean("403 error", &error);
        let text = error.to_string();
        assert!(text.contains("403"), "{text}");
        assert!(
            text.contains(&format!("{}/{path}/zarr.json{shown}", server.url())),
            "{text}"
        );
        let key = "c/0/0".try_into().unwrap();
        let error = store.get(&key).unwrap_err();
        assert_shown_clean("403 error", &error);
    }
}

/// `inspect` on a URL with user-info and a token: its output, and its
/// error when the token is wrong, show neither; nor does an S3 secret key
/// given to it.
#[test]
fn inspect_shows_no_secret() {
    let server = PythonServer::http_with(
        &fixtures_root(),
        &["--require-query", &format!("sig={TOKEN}")],
    );
    let run = |args: &[String], s3_config: &[(&str, &str)]| {
        let mut out = Vec::new();
        let result = inspect::inspect_with(args, s3_config, &mut out);
        (
            String::from_utf8(out).unwrap(),
            result.err().map(|e| e.to_string()),
        )
    };
    let path = format!("zarr-python/{SHARDED}.zarr");
    let url = with_secrets(&server.url(), &path);
    for args in [
        vec![url.clone()],
        vec![url.clone(), "--window".into(), "3:20,7:50".into()],
    ] {
        let (output, error) = run(&args, &[]);
        assert_eq!(error, None, "{output}");
        assert!(output.contains("fetched "), "{output}");
        assert!(output.contains("?***"), "{output}");
        assert_no_secret("inspect output", &output);
    }
    let wrong = url.replace(TOKEN, "wrong");
    let (output, error) = run(&[wrong], &[]);
    let error = error.expect("a wrong token is refused");
    assert!(error.contains("403"), "{error}");
    assert_no_secret("inspect output", &output);
    assert_no_secret("inspect error", &error);
    // A refused connection, with an S3 secret key among the settings.
    let refused = "http://127.0.0.1:9".to_string();
    let s3_config = [
        ("aws_endpoint_url", refused.as_str()),
        ("aws_access_key_id", "reader"),
        ("aws_secret_access_key", SECRET_KEY),
        ("aws_session_token", SESSION_TOKEN),
    ];
    let (output, error) = run(&["s3://bucket/store.zarr".to_string()], &s3_config);
    assert!(error.is_some(), "{output}");
    assert_no_secret("inspect output", &output);
    assert_no_secret("inspect error", &error.unwrap());
}

/// Every way a read goes wrong on the in-process server, with user-info
/// and a token in the URL: no secret in any message.
#[test]
fn no_secret_in_any_read_error() {
    zarrs_extension_codecs::register_overrides();
    let cases = [
        Misbehaviour::Status("403 Forbidden"),
        Misbehaviour::Status("500 Internal Server Error"),
        Misbehaviour::IgnoreRange,
        Misbehaviour::DropMidBody,
    ];
    for misbehaviour in cases {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(
            &fixtures_root().join(format!("zarr-python/{SHARDED}.zarr")),
            &dir.path().join("store.zarr"),
        );
        let server = HttpServer::serve_misbehaving(dir.path(), misbehaviour).unwrap();
        let url = with_secrets(&server.url(), "store.zarr");
        let store = Arc::new(RemoteStore::open(&url, &options()).unwrap());
        assert_eq!(
            store.url(),
            format!(
                "http://***@{}/store.zarr?***",
                server.url().strip_prefix("http://").unwrap()
            )
        );
        assert_shown_clean("store", &*store);
        let array = Array::open(store.clone(), "/").unwrap();
        let mut errors = 0;
        for subset in [
            array.subset_all(),
            ArraySubset::new_with_ranges(&[0..4, 8..16]),
        ] {
            let error = array
                .retrieve_array_subset::<ArrayBytes<'static>>(&subset)
                .unwrap_err();
            eprintln!("{misbehaviour:?}: {error}");
            assert!(error.to_string().contains("/store.zarr/c/"), "{error}");
            assert_shown_clean(&format!("{misbehaviour:?}"), &error);
            errors += 1;
        }
        assert_eq!(errors, 2);
    }

    // Nothing listening, and a listing.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = with_secrets(&format!("http://127.0.0.1:{port}"), "store.zarr");
    let store = RemoteStore::open(&url, &options()).unwrap();
    let error = store.get(&"zarr.json".try_into().unwrap()).unwrap_err();
    assert!(
        error
            .to_string()
            .to_lowercase()
            .contains("connection refused"),
        "{error}"
    );
    assert_shown_clean("connection refused", &error);
    use zarrs::storage::ListableStorageTraits;
    let error = store.list().unwrap_err();
    assert_shown_clean("listing", &error);
}

/// Errors of opening: an unsupported URL, a malformed one, a bad S3
/// setting; and the options' `Debug`.
#[test]
fn no_secret_in_open_errors_or_options() {
    let options = options()
        .with_s3_config("aws_access_key_id", "AKIDEXAMPLE")
        .with_s3_config("aws_secret_access_key", SECRET_KEY)
        .with_s3_config("aws_session_token", SESSION_TOKEN)
        .with_s3_config(
            "aws_endpoint_url",
            &format!("http://u:{PASSWORD}@h/?t={TOKEN}"),
        );
    assert_shown_clean("options", &OptionsShown(&options));
    let debug = format!("{options:?}");
    assert!(debug.contains("aws_secret_access_key"), "{debug}");
    assert!(debug.contains("aws_endpoint_url"), "{debug}");

    let unsupported = [
        format!("ftp://u:{PASSWORD}@host/a.zarr?sig={TOKEN}"),
        format!("s3://u:{PASSWORD}@bucket/a.zarr"),
        format!("s3://bucket/a.zarr?sig={TOKEN}"),
    ];
    for url in &unsupported {
        let error = RemoteStore::open(url, &options).unwrap_err();
        assert_shown_clean("unsupported URL", &error);
        assert!(
            error.to_string().contains("not a URL this crate opens"),
            "{error}"
        );
    }
    let malformed = format!("http://u:{PASSWORD}@[::1/a.zarr?sig={TOKEN}");
    let error = RemoteStore::open(&malformed, &options).unwrap_err();
    eprintln!("{error}");
    assert_shown_clean("malformed URL", &error);
    let bad_setting = options.clone().with_s3_config("aws_no_such_setting", "x");
    let error = RemoteStore::open("s3://bucket/a.zarr", &bad_setting).unwrap_err();
    assert_shown_clean("bad setting", &error);
    let bad_value = options
        .clone()
        .with_s3_config("aws_skip_signature", SECRET_KEY);
    // Not true or false: refused at open, and the message quotes the value.
    let error = RemoteStore::open("s3://bucket/a.zarr", &bad_value).unwrap_err();
    assert!(error.to_string().contains("aws_skip_signature"), "{error}");
    assert_shown_clean("bad value", &error);
}

/// The one redaction of URLs.
#[test]
fn urls_are_shown_redacted() {
    assert_eq!(
        redact_url(&format!("https://u:{PASSWORD}@h/a.zarr?sig={TOKEN}")),
        "https://***@h/a.zarr?***"
    );
    assert_eq!(redact_url("https://h/a.zarr"), "https://h/a.zarr");
}

/// `RemoteOptions` has `Debug` only; `Display` for [`assert_shown_clean`].
struct OptionsShown<'a>(&'a RemoteOptions);

impl std::fmt::Display for OptionsShown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl std::fmt::Debug for OptionsShown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.0)
    }
}
