//! Where `s3://` stores find credentials, against moto's S3 server with
//! authentication enforced (`serve_s3.py --auth`: a private bucket one IAM
//! user may read) and one without (a public bucket): keys from the
//! environment, from a profile of a shared credentials file (named and
//! default), from `s3_config`; an explicit `aws_skip_signature=false`
//! honoured; an instance role (a stand-in for the instance metadata
//! service on loopback, handing out a role's credentials from moto's STS);
//! a public bucket read unsigned with nothing in the environment, the
//! metadata service pointed at loopback ports (closed, or silent); and the
//! message of each 403 and each configuration that cannot be honoured.
//!
//! The environment is the process's, and changing it in a multi-threaded
//! test binary is unsafe: each case runs [`child_reads`] in a child process
//! (this test binary again) with an environment of its own. No case ever
//! reaches the real instance metadata address: every child has
//! `AWS_METADATA_ENDPOINT` on a loopback port, or the service disabled.
#![cfg(feature = "remote")]

use crate::common;
use crate::servers;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use common::copy_tree;
use servers::{PythonServer, fixtures_root};
use zarrs::array::{Array, ArrayBytes};
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs::remote::{
    FetchedKeys, RefreshingCredentials, RemoteOptions, RemoteStore,
};

/// The store read: copied into a directory of its own, uploaded to both
/// servers.
const STORE: &str = "so_f32";

/// A directory holding `STORE.zarr` only.
fn upload_root() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(
            &fixtures_root().join(format!("zarr-python/{STORE}.zarr")),
            &dir.path().join(format!("{STORE}.zarr")),
        );
        dir
    })
    .path()
}

/// The server with authentication enforced, `private` bucket, and its
/// reader's keys.
fn private() -> &'static (PythonServer, String, String, u16) {
    static SERVER: OnceLock<(PythonServer, String, String, u16)> = OnceLock::new();
    SERVER.get_or_init(|| PythonServer::s3_private("private", upload_root()))
}

/// The server without authentication, `public` bucket readable by anyone.
fn public() -> &'static PythonServer {
    static SERVER: OnceLock<PythonServer> = OnceLock::new();
    SERVER.get_or_init(|| PythonServer::s3("public", upload_root()))
}

/// A loopback port where nothing listens.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Open `url` with `options`, read the whole array and compare it with the
/// local copy: the number of bytes read, or the error.
fn read_all(url: &str, options: &RemoteOptions) -> Result<usize, String> {
    let local = Array::open(
        Arc::new(FilesystemStore::new(upload_root().join(format!("{STORE}.zarr"))).unwrap()),
        "/",
    )
    .unwrap();
    // Display and Debug, both checked for secrets.
    fn shown<E: std::fmt::Display + std::fmt::Debug>(error: E) -> String {
        format!("{error} [Debug: {error:?}]")
    }
    let store = RemoteStore::open(url, options).map_err(|e| format!("open: {}", shown(e)))?;
    let remote = Array::open(Arc::new(store), "/").map_err(shown)?;
    let all = local.subset_all();
    let want: ArrayBytes<'static> = local.retrieve_array_subset(&all).unwrap();
    let got: ArrayBytes<'static> = remote.retrieve_array_subset(&all).map_err(shown)?;
    if want == got {
        Ok(want.size())
    } else {
        Err("values differ".to_string())
    }
}

/// Fail fast: the servers are on this machine.
fn fast_options() -> RemoteOptions {
    let mut options = RemoteOptions::default();
    options.max_retries = 0;
    options.retry_timeout = Duration::from_secs(2);
    options.timeout = Duration::from_secs(10);
    options
}

/// The child's side: read `CHILD_URL` with `CHILD_ANONYMOUS` and
/// `CHILD_S3_CONFIG` (`name=value;...`), print `CHILD OK bytes ms` or
/// `CHILD ERR message`. Does nothing in a normal run.
#[test]
#[ignore = "run by the other tests of this file, in a child process with its own environment"]
fn child_reads() {
    let Ok(url) = std::env::var("CHILD_URL") else {
        return;
    };
    let mut options = fast_options();
    if let Ok(anonymous) = std::env::var("CHILD_ANONYMOUS") {
        options.anonymous = Some(anonymous == "true");
    }
    if std::env::var("CHILD_NO_PROFILES").is_ok() {
        options.read_profiles = false;
    }
    // `id:secret`, or `fail`: keys from a provider given in code.
    if let Ok(keys) = std::env::var("CHILD_PROVIDER") {
        let provider = RefreshingCredentials::new("the test's provider", move || {
            let (id, secret) = keys.split_once(':').ok_or("is locked")?;
            Ok(FetchedKeys::new(id, secret, None, None))
        });
        options.credentials = Some(Arc::new(provider));
    }
    for pair in std::env::var("CHILD_S3_CONFIG")
        .unwrap_or_default()
        .split(';')
        .filter(|p| !p.is_empty())
    {
        let (name, value) = pair.split_once('=').unwrap();
        options = options.with_s3_config(name, value);
    }
    let start = Instant::now();
    match read_all(&url, &options) {
        Ok(bytes) => println!("CHILD OK {bytes} {}", start.elapsed().as_millis()),
        Err(error) => println!("CHILD ERR {}", error.replace('\n', " ")),
    }
}

/// What [`child_reads`] printed, run with only `env` (and `HOME` at an
/// empty directory unless given, and the instance metadata service at a
/// closed loopback port unless given).
fn in_child(env: &[(&str, String)]) -> String {
    let home = tempfile::tempdir().unwrap();
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            // The test's name in the `remote` binary: module, then function.
            "remote_credentials::child_reads",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env_clear()
        .env("HOME", home.path())
        .env(
            "AWS_METADATA_ENDPOINT",
            format!("http://127.0.0.1:{}", closed_port()),
        );
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    // libtest prints `test child_reads ... ` before the child's line.
    match stdout
        .lines()
        .find_map(|l| l.find("CHILD ").map(|at| &l[at + 6..]))
    {
        Some(line) => line.to_string(),
        None => panic!(
            "the child printed no result: {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

/// `s3://BUCKET/STORE.zarr`.
fn url(bucket: &str) -> String {
    format!("s3://{bucket}/{STORE}.zarr")
}

/// `("NAME", value)`.
fn var(name: &'static str, value: impl Into<String>) -> (&'static str, String) {
    (name, value.into())
}

/// A read that worked.
fn assert_ok(what: &str, line: &str) {
    assert!(line.starts_with("OK "), "{what}: {line}");
}

/// A read that failed with all of `parts` in its message, and none of
/// the secrets.
fn assert_err(what: &str, line: &str, parts: &[&str]) {
    assert!(line.starts_with("ERR "), "{what}: read {line}");
    for part in parts {
        assert!(line.contains(part), "{what}: no {part:?} in {line}");
    }
    let (_, _, secret, _) = private();
    for secret in [secret.as_str(), WRONG_SECRET] {
        assert!(!line.contains(secret), "{what}: a secret in {line}");
    }
    eprintln!("{what}: {line}");
}

/// The secret key of the wrong cases.
const WRONG_SECRET: &str = "wrong-secret-0123456789";

/// The private server's endpoint and region.
fn private_endpoint() -> Vec<(&'static str, String)> {
    vec![
        var("AWS_ENDPOINT_URL", private().0.url()),
        var("AWS_REGION", "us-east-1"),
    ]
}

#[test]
fn signed_reads_with_keys_from_the_environment() {
    let (_, id, secret, _) = private();
    let mut env = private_endpoint();
    env.extend([
        var("AWS_ACCESS_KEY_ID", id),
        var("AWS_SECRET_ACCESS_KEY", secret),
        var("CHILD_URL", url("private")),
    ]);
    assert_ok("keys from the environment", &in_child(&env));

    // The wrong secret: 403, signed, from the environment.
    env.push(var("AWS_SECRET_ACCESS_KEY", WRONG_SECRET));
    assert_err(
        "a wrong secret in the environment",
        &in_child(&env),
        &[
            "403",
            "signed with credentials from the environment (AWS_ACCESS_KEY_ID",
            "RemoteOptions::anonymous = Some(true)",
        ],
    );
}

/// `[reader]` of a credentials file with `id` and `secret`; `[profile
/// reader]` of a config file with the region and the endpoint.
fn profile_files(dir: &Path, section: &str, id: &str, secret: &str) -> (PathBuf, PathBuf) {
    let credentials = dir.join("credentials");
    std::fs::write(
        &credentials,
        format!(
            "[other]\naws_access_key_id = AKIDOTHER\naws_secret_access_key = other\n\n[{section}]\naws_access_key_id = {id}\naws_secret_access_key = {secret}\n"
        ),
    )
    .unwrap();
    let config = dir.join("config");
    let header = if section == "default" {
        "default".to_string()
    } else {
        format!("profile {section}")
    };
    std::fs::write(
        &config,
        format!(
            "[{header}]\nregion = us-east-1\nendpoint_url = {}\ns3 =\n  addressing_style = path\n",
            private().0.url()
        ),
    )
    .unwrap();
    (credentials, config)
}

/// Profile `reader` with the private server's reader keys (in a new
/// directory, returned to be kept), and the environment naming its files
/// and the private store.
fn reader_profile() -> (tempfile::TempDir, [(&'static str, String); 3]) {
    let (_, id, secret, _) = private();
    let dir = tempfile::tempdir().unwrap();
    let (credentials, config) = profile_files(dir.path(), "reader", id, secret);
    let files = [
        var("AWS_SHARED_CREDENTIALS_FILE", credentials.to_str().unwrap()),
        var("AWS_CONFIG_FILE", config.to_str().unwrap()),
        var("CHILD_URL", url("private")),
    ];
    (dir, files)
}

#[test]
fn signed_reads_with_a_profile() {
    let (_, id, secret, _) = private();
    let (dir, files) = reader_profile();
    let mut env = files.to_vec();
    env.push(var("AWS_PROFILE", "reader"));
    assert_ok("a named profile", &in_child(&env));

    // The default profile of ~/.aws.
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".aws")).unwrap();
    profile_files(&home.path().join(".aws"), "default", id, secret);
    let env = [
        var("HOME", home.path().to_str().unwrap()),
        var("CHILD_URL", url("private")),
    ];
    assert_ok("the default profile", &in_child(&env));

    // Files named with `~/`, as the AWS CLI takes them.
    let elsewhere = home.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    profile_files(&elsewhere, "reader", id, secret);
    let env = [
        var("HOME", home.path().to_str().unwrap()),
        var("AWS_SHARED_CREDENTIALS_FILE", "~/elsewhere/credentials"),
        var("AWS_CONFIG_FILE", "~/elsewhere/config"),
        var("AWS_PROFILE", "reader"),
        var("CHILD_URL", url("private")),
    ];
    assert_ok("files under ~/", &in_child(&env));

    // Wrong keys in the profile: the 403 names the profile and its file.
    let wrong = tempfile::tempdir().unwrap();
    let (credentials, config) = profile_files(wrong.path(), "reader", id, WRONG_SECRET);
    let env = [
        var("AWS_SHARED_CREDENTIALS_FILE", credentials.to_str().unwrap()),
        var("AWS_CONFIG_FILE", config.to_str().unwrap()),
        var("AWS_PROFILE", "reader"),
        var("CHILD_URL", url("private")),
    ];
    assert_err(
        "wrong keys in a profile",
        &in_child(&env),
        &[
            "403",
            &format!("profile 'reader' in {}", credentials.display()),
        ],
    );

    // A profile that is not there, and one of a kind not read: errors at
    // open that say so.
    let mut env = files.to_vec();
    env.push(var("AWS_PROFILE", "missing"));
    assert_err(
        "a missing profile",
        &in_child(&env),
        &["open: ", "AWS_PROFILE=missing", "no profile 'missing'"],
    );
    let sso = dir.path().join("sso-config");
    std::fs::write(
        &sso,
        "[profile work]\nsso_session = corp\nsso_account_id = 123456789012\nregion = us-east-1\n",
    )
    .unwrap();
    let env = [
        var("AWS_CONFIG_FILE", sso.to_str().unwrap()),
        var("AWS_PROFILE", "work"),
        var("CHILD_URL", url("private")),
    ];
    assert_err(
        "an SSO profile",
        &in_child(&env),
        &[
            "AWS_PROFILE=work",
            "sso_session, sso_account_id, which this crate does not read",
            "aws configure export-credentials --profile work",
        ],
    );
}

#[test]
fn signed_reads_with_keys_in_s3_config() {
    let (server, id, secret, _) = private();
    let config = format!(
        "aws_endpoint_url={};aws_region=us-east-1;aws_access_key_id={id};aws_secret_access_key={secret}",
        server.url()
    );
    let env = [
        var("CHILD_URL", url("private")),
        var("CHILD_S3_CONFIG", &config),
    ];
    assert_ok("keys in s3_config", &in_child(&env));
    let wrong = config.replace(secret.as_str(), WRONG_SECRET);
    let env = [
        var("CHILD_URL", url("private")),
        var("CHILD_S3_CONFIG", wrong),
    ];
    assert_err(
        "a wrong secret in s3_config",
        &in_child(&env),
        &[
            "403",
            "signed with credentials from RemoteOptions::s3_config",
        ],
    );
}

#[test]
fn an_explicit_choice_to_sign_wins_over_the_environment() {
    let (_, id, secret, _) = private();
    let mut env = private_endpoint();
    env.extend([
        var("AWS_ACCESS_KEY_ID", id),
        var("AWS_SECRET_ACCESS_KEY", secret),
        var("AWS_SKIP_SIGNATURE", "true"),
        var("CHILD_URL", url("private")),
    ]);
    // AWS_SKIP_SIGNATURE=true alone: unsigned, and the 403 says which
    // setting made it so.
    assert_err(
        "AWS_SKIP_SIGNATURE=true",
        &in_child(&env),
        &[
            "403",
            "unsigned, because AWS_SKIP_SIGNATURE=true in the environment",
            "unset AWS_SKIP_SIGNATURE",
        ],
    );
    let mut with_config = env.clone();
    with_config.push(var("CHILD_S3_CONFIG", "aws_skip_signature=false"));
    assert_ok(
        "aws_skip_signature=false in s3_config",
        &in_child(&with_config),
    );
    let mut with_option = env.clone();
    with_option.push(var("CHILD_ANONYMOUS", "false"));
    assert_ok("anonymous = Some(false)", &in_child(&with_option));

    // Signing asked for with no credentials anywhere: an error at open.
    let env = [
        var("AWS_ENDPOINT_URL", private().0.url()),
        var("AWS_EC2_METADATA_DISABLED", "true"),
        var("CHILD_S3_CONFIG", "aws_skip_signature=false"),
        var("CHILD_URL", url("private")),
    ];
    assert_err(
        "signing with no credentials",
        &in_child(&env),
        &[
            "open: ",
            "requests are to be signed (aws_skip_signature=false",
        ],
    );
}

#[test]
fn unsigned_requests_and_their_403() {
    // anonymous = Some(true) on a private bucket.
    let mut env = private_endpoint();
    env.extend([
        var("CHILD_URL", url("private")),
        var("CHILD_ANONYMOUS", "true"),
    ]);
    assert_err(
        "anonymous on a private bucket",
        &in_child(&env),
        &[
            "403",
            "unsigned, because RemoteOptions::anonymous is Some(true)",
            "set RemoteOptions::anonymous to None",
        ],
    );
    // No credentials anywhere, on a private bucket.
    let mut env = private_endpoint();
    env.extend([
        var("CHILD_URL", url("private")),
        var("AWS_EC2_METADATA_DISABLED", "true"),
    ]);
    assert_err(
        "no credentials on a private bucket",
        &in_child(&env),
        &[
            "403",
            "unsigned, as no credentials were found",
            "no profile 'default' in",
            "instance metadata disabled by AWS_EC2_METADATA_DISABLED",
            "set AWS_PROFILE",
        ],
    );
}

#[test]
fn a_public_bucket_reads_unsigned_with_nothing_in_the_environment() {
    let endpoint = var("AWS_ENDPOINT_URL", public().url());
    // Instance metadata disabled.
    let env = [
        endpoint.clone(),
        var("AWS_EC2_METADATA_DISABLED", "true"),
        var("CHILD_URL", url("public")),
    ];
    assert_ok("metadata disabled", &in_child(&env));
    // Nothing at the metadata address (a closed loopback port): asked at
    // the first request, refused at once.
    let env = [endpoint.clone(), var("CHILD_URL", url("public"))];
    assert_ok("metadata refused", &in_child(&env));
    // A metadata address that never answers: the probe gives up after
    // INSTANCE_PROBE, not object_store's timeouts with retries.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", silent.local_addr().unwrap());
    let env = [
        endpoint,
        var("AWS_METADATA_ENDPOINT", address),
        var("CHILD_URL", url("public")),
    ];
    let started = Instant::now();
    let line = in_child(&env);
    assert_ok("metadata silent", &line);
    let millis: u128 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
    let probe = zarrs_extension_codecs::remote::INSTANCE_PROBE.as_millis();
    eprintln!(
        "silent metadata service: read in {millis} ms ({:?} with the child's start)",
        started.elapsed()
    );
    assert!(millis >= probe, "{millis} ms: the probe did not wait");
    // Without the probe's limit, the first request waits for object_store's
    // own timeout on the metadata service (the options' `timeout`, 10 s):
    // anything under it shows the limit held, however loaded the machine.
    let timeout = fast_options().timeout.as_millis();
    assert!(
        millis < timeout,
        "{millis} ms: waited for object_store's timeout ({timeout} ms), not the probe's"
    );
    drop(silent);

    // The same bucket's 403-free read, and on a private bucket the 403
    // says what the first request found.
    let mut env = private_endpoint();
    env.push(var("CHILD_URL", url("private")));
    assert_err(
        "the metadata service gave nothing",
        &in_child(&env),
        &[
            "403",
            "unsigned, as no credentials were found",
            "gave none within",
        ],
    );
}

#[test]
fn signed_reads_with_an_instance_role() {
    let (_, _, _, metadata) = private();
    let mut env = private_endpoint();
    env.extend([
        var(
            "AWS_METADATA_ENDPOINT",
            format!("http://127.0.0.1:{metadata}"),
        ),
        var("CHILD_URL", url("private")),
    ]);
    assert_ok("an instance role", &in_child(&env));
    // The metadata service disabled: the same read goes unsigned, and is
    // refused.
    env.push(var("AWS_EC2_METADATA_DISABLED", "true"));
    assert_err(
        "the metadata service disabled",
        &in_child(&env),
        &["403", "unsigned, as no credentials were found"],
    );
}

/// An executable shell script `name` in `dir` that appends a line to
/// `name.runs` each time it runs, then runs `body`.
#[cfg(unix)]
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    let runs = dir.join(format!("{name}.runs"));
    std::fs::write(
        &path,
        format!("#!/bin/sh\necho run >> '{}'\n{body}\n", runs.display()),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// How many times the script `name` of `dir` ran.
#[cfg(unix)]
fn runs(dir: &Path, name: &str) -> usize {
    std::fs::read_to_string(dir.join(format!("{name}.runs")))
        .map(|text| text.lines().count())
        .unwrap_or(0)
}

/// A script body that prints keys in `credential_process`'s format, with
/// `more` fields after them.
#[cfg(unix)]
fn prints_keys(id: &str, secret: &str, more: &str) -> String {
    format!(
        r#"printf '%s' '{{"Version": 1, "AccessKeyId": "{id}", "SecretAccessKey": "{secret}"{more}}}'"#
    )
}

/// `[profile proc]` of a config file: `credential_process` runs `command`;
/// `extra` lines follow it.
#[cfg(unix)]
fn process_profile(dir: &Path, command: &Path, extra: &str) -> PathBuf {
    let config = dir.join("config");
    std::fs::write(
        &config,
        format!(
            "[profile proc]\nregion = us-east-1\nendpoint_url = {}\ncredential_process = {}\n{extra}",
            private().0.url(),
            command.display()
        ),
    )
    .unwrap();
    config
}

#[cfg(unix)]
#[test]
fn signed_reads_with_a_credential_process() {
    let (_, id, secret, _) = private();
    let dir = tempfile::tempdir().unwrap();
    let env_for = |config: &Path| {
        [
            var("AWS_CONFIG_FILE", config.to_str().unwrap()),
            var("AWS_PROFILE", "proc"),
            var("CHILD_URL", url("private")),
        ]
    };

    // Keys with no Expiration: one run for the whole read (its metadata
    // and chunk requests).
    let lasting = script(dir.path(), "lasting", &prints_keys(id, secret, ""));
    let config = process_profile(dir.path(), &lasting, "");
    assert_ok("a credential_process", &in_child(&env_for(&config)));
    assert_eq!(runs(dir.path(), "lasting"), 1);

    // Keys within a minute of their Expiration: a run for each request.
    let soon = (chrono::Utc::now() + chrono::TimeDelta::seconds(40)).to_rfc3339();
    let expiring = script(
        dir.path(),
        "expiring",
        &prints_keys(
            id,
            secret,
            &format!(r#", "SessionToken": null, "Expiration": "{soon}""#),
        ),
    );
    let config = process_profile(dir.path(), &expiring, "");
    assert_ok("keys about to expire", &in_child(&env_for(&config)));
    assert!(
        runs(dir.path(), "expiring") >= 2,
        "{}",
        runs(dir.path(), "expiring")
    );

    // Keys a year from expiring: one run.
    let later = script(
        dir.path(),
        "later",
        &prints_keys(id, secret, r#", "Expiration": "2999-01-01T00:00:00+00:00""#),
    );
    let config = process_profile(dir.path(), &later, "");
    assert_ok("keys that expire later", &in_child(&env_for(&config)));
    assert_eq!(runs(dir.path(), "later"), 1);

    // Wrong keys: the 403 says where they came from.
    let wrong = script(dir.path(), "wrong", &prints_keys(id, WRONG_SECRET, ""));
    let config = process_profile(dir.path(), &wrong, "");
    assert_err(
        "wrong keys from a credential_process",
        &in_child(&env_for(&config)),
        &[
            "403",
            &format!(
                "signed with credentials from the credential_process of profile 'proc' in {}",
                config.display()
            ),
        ],
    );

    // A process that fails: its exit status and standard error, at the
    // first request; and one whose output gives no keys, never shown.
    let failing = script(
        dir.path(),
        "failing",
        &format!(
            "echo 'Error: the SSO session has expired; run aws sso login' >&2\nprintf '%s' '{WRONG_SECRET}'\nexit 3"
        ),
    );
    let config = process_profile(dir.path(), &failing, "");
    let line = in_child(&env_for(&config));
    assert_err(
        "a failing credential_process",
        &line,
        &[&format!(
            "the credential_process of profile 'proc' in {} exited with exit status: 3: Error: the SSO session has expired; run aws sso login",
            config.display()
        )],
    );
    assert!(
        !line.contains(failing.to_str().unwrap()),
        "the command in {line}"
    );
    let garbled = script(
        dir.path(),
        "garbled",
        &prints_keys(id, WRONG_SECRET, "").replace("\"Version\": 1", "\"Version\": 2"),
    );
    let config = process_profile(dir.path(), &garbled, "");
    assert_err(
        "a credential_process of another version",
        &in_child(&env_for(&config)),
        &["credential_process of profile 'proc'", "printed Version 2"],
    );

    // The AWS CLI's order: keys of the credentials file before the
    // process (which is not run), the process before keys of the config
    // file.
    let never = script(dir.path(), "never", "exit 1");
    let config = process_profile(dir.path(), &never, "");
    let credentials = dir.path().join("credentials");
    std::fs::write(
        &credentials,
        format!("[proc]\naws_access_key_id = {id}\naws_secret_access_key = {secret}\n"),
    )
    .unwrap();
    let mut env = env_for(&config).to_vec();
    env.push(var(
        "AWS_SHARED_CREDENTIALS_FILE",
        credentials.to_str().unwrap(),
    ));
    assert_ok("keys of the credentials file first", &in_child(&env));
    assert_eq!(runs(dir.path(), "never"), 0);
    let config = process_profile(
        dir.path(),
        &lasting,
        &format!("aws_access_key_id = {id}\naws_secret_access_key = {WRONG_SECRET}\n"),
    );
    assert_ok(
        "the process before keys of the config file",
        &in_child(&env_for(&config)),
    );
    assert_eq!(runs(dir.path(), "lasting"), 2);

    // The credentials file's credential_process before the config file's.
    std::fs::write(
        &credentials,
        format!("[proc]\ncredential_process = {}\n", wrong.display()),
    )
    .unwrap();
    let config = process_profile(dir.path(), &lasting, "");
    let mut env = env_for(&config).to_vec();
    env.push(var(
        "AWS_SHARED_CREDENTIALS_FILE",
        credentials.to_str().unwrap(),
    ));
    assert_err(
        "the credentials file's process first",
        &in_child(&env),
        &[
            "403",
            &format!(
                "credential_process of profile 'proc' in {}",
                credentials.display()
            ),
        ],
    );
    assert_eq!(runs(dir.path(), "lasting"), 2);

    // The default profile's process, with no AWS_PROFILE.
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".aws")).unwrap();
    std::fs::write(
        home.path().join(".aws/config"),
        format!(
            "[default]\nregion = us-east-1\nendpoint_url = {}\ncredential_process = {}\n",
            private().0.url(),
            lasting.display()
        ),
    )
    .unwrap();
    let env = [
        var("HOME", home.path().to_str().unwrap()),
        var("CHILD_URL", url("private")),
    ];
    assert_ok("the default profile's process", &in_child(&env));
    assert_eq!(runs(dir.path(), "lasting"), 3);

    // An empty credential_process, and one beside an assumed role (which
    // the AWS CLI would take first): errors at open, nothing run.
    let config = process_profile(dir.path(), Path::new(""), "");
    assert_err(
        "an empty credential_process",
        &in_child(&env_for(&config)),
        &[
            "open: ",
            "AWS_PROFILE=proc",
            "has an empty credential_process",
        ],
    );
    let config = process_profile(
        dir.path(),
        &lasting,
        "role_arn = arn:aws:iam::123456789012:role/reader\nsource_profile = other\n",
    );
    assert_err(
        "a credential_process beside a role",
        &in_child(&env_for(&config)),
        &[
            "open: ",
            "AWS_PROFILE=proc",
            "through role_arn, source_profile, which this crate does not read",
        ],
    );
    assert_eq!(runs(dir.path(), "lasting"), 3);
}

#[test]
fn signed_reads_with_credentials_given_in_code() {
    let (_, id, secret, _) = private();
    let mut env = private_endpoint();
    env.extend([
        // Wrong keys in the environment: the provider's sign.
        var("AWS_ACCESS_KEY_ID", "AKIDWRONG"),
        var("AWS_SECRET_ACCESS_KEY", WRONG_SECRET),
        var("CHILD_PROVIDER", format!("{id}:{secret}")),
        var("CHILD_URL", url("private")),
    ]);
    assert_ok("keys of a provider", &in_child(&env));

    env.push(var("CHILD_PROVIDER", format!("{id}:{WRONG_SECRET}")));
    assert_err(
        "wrong keys of a provider",
        &in_child(&env),
        &[
            "403",
            "signed with credentials from RemoteOptions::credentials",
        ],
    );

    env.push(var("CHILD_PROVIDER", "fail"));
    assert_err(
        "a provider that fails",
        &in_child(&env),
        &["the test's provider is locked"],
    );

    env.push(var("CHILD_PROVIDER", format!("{id}:{secret}")));
    env.push(var("CHILD_ANONYMOUS", "true"));
    assert_err(
        "a provider and anonymous",
        &in_child(&env),
        &[
            "open: ",
            "RemoteOptions::credentials is given, but requests are to be unsigned because RemoteOptions::anonymous is Some(true)",
        ],
    );
}

/// The chain where the AWS CLI's differs from what this crate did before:
/// `AWS_DEFAULT_PROFILE` names the profile when `AWS_PROFILE` does not; a
/// profile's region and `endpoint_url` apply when the keys come from the
/// environment (keys meant for one endpoint never sign requests to
/// another); a profile's keys do not take an `AWS_SESSION_TOKEN` of the
/// environment (another identity's); a default profile that uses SSO is an
/// error at open, not unsigned requests; and with
/// `RemoteOptions::read_profiles` off (a mapped obstore store) no profile
/// is read.
#[test]
fn the_chain_follows_the_aws_cli() {
    let (_, id, secret, _) = private();
    let (_dir, files) = reader_profile();

    let mut env = files.to_vec();
    env.push(var("AWS_DEFAULT_PROFILE", "reader"));
    assert_ok("AWS_DEFAULT_PROFILE", &in_child(&env));

    // Keys from the environment, the endpoint from the profile only.
    let mut env = files.to_vec();
    env.extend([
        var("AWS_PROFILE", "reader"),
        var("AWS_ACCESS_KEY_ID", id),
        var("AWS_SECRET_ACCESS_KEY", secret),
    ]);
    assert_ok("environment keys, the profile's endpoint", &in_child(&env));

    // The profile's static keys beside a session token of the
    // environment, which belongs to no key of theirs.
    let mut env = files.to_vec();
    env.extend([
        var("AWS_PROFILE", "reader"),
        var("AWS_SESSION_TOKEN", "an-unrelated-session-token"),
    ]);
    assert_ok("a profile's keys and a stray token", &in_child(&env));

    // A default profile that signs through SSO.
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".aws")).unwrap();
    std::fs::write(
        home.path().join(".aws/config"),
        "[default]\nsso_session = corp\nsso_account_id = 123456789012\nregion = us-east-1\n",
    )
    .unwrap();
    let mut env = private_endpoint();
    env.extend([
        var("HOME", home.path().to_str().unwrap()),
        var("CHILD_URL", url("private")),
    ]);
    assert_err(
        "a default profile with SSO",
        &in_child(&env),
        &["open: ", "the default profile", "sso_session"],
    );

    // Profile files not read: unsigned (nothing else found), and said so.
    let mut env = files.to_vec();
    env.extend(private_endpoint());
    env.extend([var("AWS_PROFILE", "reader"), var("CHILD_NO_PROFILES", "1")]);
    assert_err(
        "profiles not read",
        &in_child(&env),
        &[
            "403",
            "profile files not read (RemoteOptions::read_profiles)",
        ],
    );
}

/// Container credentials at `AWS_CONTAINER_CREDENTIALS_FULL_URI`, as the
/// AWS SDKs read them: the token from `AWS_CONTAINER_AUTHORIZATION_TOKEN`
/// or its file (a wrong one is refused by the agent, and said); plain HTTP
/// to any host but loopback and the container agents refused at open,
/// before any request. (object_store's provider took the address only with
/// a token file, else asked the instance metadata service unsaid, and sent
/// the token to any host.)
#[test]
fn container_credentials_as_the_sdks_read_them() {
    let (_, _, _, metadata) = private();
    let full_uri = format!("http://127.0.0.1:{metadata}/container-credentials");
    let mut env = private_endpoint();
    env.extend([
        var("AWS_CONTAINER_CREDENTIALS_FULL_URI", full_uri.clone()),
        var("CHILD_URL", url("private")),
    ]);
    let mut with_value = env.clone();
    with_value.push(var("AWS_CONTAINER_AUTHORIZATION_TOKEN", "container-token"));
    assert_ok("a token given as a value", &in_child(&with_value));

    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "container-token\n").unwrap();
    let mut with_file = env.clone();
    with_file.push(var(
        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
        token_file.to_str().unwrap(),
    ));
    assert_ok("a token file", &in_child(&with_file));

    let mut wrong = env.clone();
    wrong.push(var("AWS_CONTAINER_AUTHORIZATION_TOKEN", "another-token"));
    assert_err(
        "a wrong token",
        &in_child(&wrong),
        &[
            "container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI=http://127.0.0.1",
            "401",
        ],
    );
    assert!(
        !in_child(&wrong).contains("another-token"),
        "the token is shown"
    );

    // Plain HTTP to another host (`.invalid` never resolves): refused at
    // open.
    let mut elsewhere = private_endpoint();
    elsewhere.extend([
        var(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
            "http://container-agent.invalid/creds",
        ),
        var("AWS_CONTAINER_AUTHORIZATION_TOKEN", "container-token"),
        var("CHILD_URL", url("private")),
    ]);
    assert_err(
        "plain HTTP to another host",
        &in_child(&elsewhere),
        &["open: ", "plain HTTP goes only to loopback"],
    );
}
